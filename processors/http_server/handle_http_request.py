"""HandleHttpRequest: an HTTP server whose requests become FlowFiles, held open for a response.

The server runs on the driver, in threads, from the first trigger (``list_work``) to the end of
the run (``on_stopped``). Each request is read whole and queued; ``list_work`` registers it in
the HTTP Context Map under a new ``http.context.identifier`` (503 ``Request Registration Failed``
when the map is full) and hands it out as a work item; the task makes its FlowFile(s) with
NiFi's attributes and a RECEIVE event. The client waits until HandleHttpResponse answers it
after that FlowFile's commit, or the map's Request Expiration answers it 503.
"""

from __future__ import annotations

import contextlib
import re
import ssl
from collections.abc import Mapping, Sequence
from typing import ClassVar

import processors.http_server._properties as shared
from flowcore.errors import ConfigurationError, ProcessException
from flowcore.processor.context import ProcessContext
from flowcore.processor.kinds import WorkItem, WorkListing
from flowcore.processor.relationship import SUCCESS
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.ssl_context import StandardSSLContextService
from flowcore.validators import (
    CHARACTER_SET_VALIDATOR,
    NON_EMPTY_VALIDATOR,
    PORT_VALIDATOR,
    POSITIVE_INTEGER_VALIDATOR,
    REGULAR_EXPRESSION_VALIDATOR,
    create_long_validator,
)
from processors.http_server._request_attributes import (
    form_fields,
    multipart_parts,
    request_attributes,
    transit_uri,
)
from processors.http_server._request_server import (
    Container,
    ContainerQueue,
    RequestConfig,
    RequestServer,
    handler_wait_s,
)
from processors.http_server._source import HttpServerSource
from processors.http_server._tls import HANDLE_CLIENT_AUTH, server_context, warn_http2
from processors.http_server.context_map import Answer, Exchange, HttpContextMap

__all__ = ["HandleHttpRequest"]

#: Requests handed out per trigger at most (each is a work item).
TAKE_PER_TRIGGER = 10_000

_TRUE_FALSE = ("true", "false")


def _allow(method: str, default: str) -> PropertyDescriptor:
    return PropertyDescriptor(
        f"Allow {method}",
        description=f"Allow HTTP {method} Method",
        required=True,
        default=default,
        allowable_values=_TRUE_FALSE,
    )


class HandleHttpRequest(HttpServerSource):
    """Starts an HTTP server; each request becomes a FlowFile held for HandleHttpResponse.

    NiFi's HandleHttpRequest: the request's content (one FlowFile per part of a
    multipart/form-data body) with ``http.*`` attributes, a RECEIVE event, and the request held
    in the HTTP Context Map until HandleHttpResponse answers it. Only in continuous runs.
    """

    driver_state: ClassVar = ("_http_server", "_containers", "_listed", "_held", "_map", "_lookup")
    tags: ClassVar = ("http", "https", "request", "listen", "ingress", "web service")

    PORT = PropertyDescriptor(
        "Listening Port",
        description="The Port to listen on for incoming HTTP requests",
        required=True,
        default="80",
        el_scope=ExpressionLanguageScope.ENVIRONMENT,
        validators=(PORT_VALIDATOR,),
    )
    HOSTNAME = PropertyDescriptor(
        "Hostname",
        description="The Hostname to bind to. If not specified, will bind to all hosts",
        validators=(NON_EMPTY_VALIDATOR,),
    )
    SSL_CONTEXT = PropertyDescriptor(
        "SSL Context Service",
        description="The SSL Context Service to use in order to secure the server. If specified, "
        "the server will accept only HTTPS requests; otherwise, the server will accept only "
        "HTTP requests",
        identifies_service=True,
    )
    HTTP_PROTOCOL_STRATEGY = shared.HTTP_PROTOCOL_STRATEGY
    HTTP_CONTEXT_MAP = shared.HTTP_CONTEXT_MAP
    PATH_REGEX = PropertyDescriptor(
        "Allowed Paths",
        description="A Regular Expression that specifies the valid HTTP Paths that are allowed "
        "in the incoming URL Requests; a request whose path does not match gets 404: NotFound",
        validators=(REGULAR_EXPRESSION_VALIDATOR,),
    )
    URL_CHARACTER_SET = PropertyDescriptor(
        "Default URL Character Set",
        description="The character set to use for decoding URL parameters if the HTTP Request "
        "does not supply one",
        required=True,
        default="UTF-8",
        validators=(CHARACTER_SET_VALIDATOR,),
    )
    ALLOW_GET = _allow("GET", "true")
    ALLOW_POST = _allow("POST", "true")
    ALLOW_PUT = _allow("PUT", "true")
    ALLOW_DELETE = _allow("DELETE", "true")
    ALLOW_HEAD = _allow("HEAD", "false")
    ALLOW_OPTIONS = _allow("OPTIONS", "false")
    MAXIMUM_THREADS = PropertyDescriptor(
        "Maximum Threads",
        description="The maximum number of threads that the embedded HTTP server will use for "
        "handling requests.",
        required=True,
        default="200",
        validators=(create_long_validator(8, 1000),),
    )
    REQUEST_HEADER_MAX_SIZE = shared.REQUEST_HEADER_MAX_SIZE
    ADDITIONAL_METHODS = PropertyDescriptor(
        "Additional HTTP Methods",
        description="A comma-separated list of non-standard HTTP Methods that should be allowed",
        validators=(NON_EMPTY_VALIDATOR,),
    )
    CLIENT_AUTH = PropertyDescriptor(
        "Client Authentication",
        description="Specifies whether or not the Processor should authenticate clients. This "
        "value is ignored if the <SSL Context Service> Property is not specified or the SSL "
        "Context provided uses only a KeyStore and not a TrustStore.",
        required=True,
        default="No Authentication",
        allowable_values=("No Authentication", "Want Authentication", "Need Authentication"),
    )
    CONTAINER_QUEUE_SIZE = PropertyDescriptor(
        "Container Queue Size",
        description="The size of the queue for Http Request Containers",
        required=True,
        default="50",
        validators=(POSITIVE_INTEGER_VALIDATOR,),
        aliases=("container-queue-size",),
    )
    MULTIPART_REQUEST_MAX_SIZE = shared.MULTIPART_REQUEST_MAX_SIZE
    MULTIPART_READ_BUFFER_SIZE = shared.MULTIPART_READ_BUFFER_SIZE
    PARAMETERS_TO_ATTRIBUTES = PropertyDescriptor(
        "Parameters to Attributes",
        description="A comma-separated list of HTTP parameters or form data to output as "
        "attributes",
        validators=(NON_EMPTY_VALIDATOR,),
        aliases=("parameters-to-attributes", "Parameters to Attributes List"),
    )
    MAX_REQUEST_SIZE = shared.MAX_REQUEST_SIZE

    property_descriptors: ClassVar[tuple[PropertyDescriptor, ...]] = (
        PORT,
        HOSTNAME,
        SSL_CONTEXT,
        HTTP_PROTOCOL_STRATEGY,
        HTTP_CONTEXT_MAP,
        PATH_REGEX,
        URL_CHARACTER_SET,
        ALLOW_GET,
        ALLOW_POST,
        ALLOW_PUT,
        ALLOW_DELETE,
        ALLOW_HEAD,
        ALLOW_OPTIONS,
        MAXIMUM_THREADS,
        REQUEST_HEADER_MAX_SIZE,
        ADDITIONAL_METHODS,
        CLIENT_AUTH,
        CONTAINER_QUEUE_SIZE,
        MULTIPART_REQUEST_MAX_SIZE,
        MULTIPART_READ_BUFFER_SIZE,
        PARAMETERS_TO_ATTRIBUTES,
        MAX_REQUEST_SIZE,
    )

    # --- the driver side: the server, the queue, the map ------------------------------------------

    def _context_map(self, context: ProcessContext) -> HttpContextMap:
        found = self.__dict__.get("_map")
        if found is not None:
            return found
        name = context.get_property(self.HTTP_CONTEXT_MAP).value or ""
        lookup = context.service_lookup or self.__dict__.get("_lookup")
        if lookup is None:
            msg = f"HandleHttpRequest cannot reach service {name!r} here"
            raise ConfigurationError(msg)
        service = lookup(name)
        if not isinstance(service, HttpContextMap):
            msg = (
                f"HandleHttpRequest's HTTP Context Map {name!r} is a "
                f"{type(service).__name__}, not an HTTP context map: name a "
                "StandardHttpContextMap"
            )
            raise ConfigurationError(msg)
        self.__dict__["_map"] = service
        return service

    def _start(self, context: ProcessContext) -> ContainerQueue:
        """The container queue, with the server started at the first trigger (on the driver)."""
        queue = self.__dict__.get("_containers")
        if queue is not None:
            return queue
        value = context.get_property
        context_map = self._context_map(context)
        methods = {
            m
            for m, d in (
                ("GET", self.ALLOW_GET),
                ("POST", self.ALLOW_POST),
                ("PUT", self.ALLOW_PUT),
                ("DELETE", self.ALLOW_DELETE),
                ("HEAD", self.ALLOW_HEAD),
                ("OPTIONS", self.ALLOW_OPTIONS),
            )
            if value(d).as_boolean()
        }
        extra = value(self.ADDITIONAL_METHODS).value
        methods |= {m.strip().upper() for m in (extra or "").split(",") if m.strip()}
        paths = value(self.PATH_REGEX).value
        config = RequestConfig(
            methods=frozenset(methods),
            paths=re.compile(paths) if paths else None,
            max_body=int(value(self.MAX_REQUEST_SIZE).as_data_size("B") or 0),
            max_multipart=int(value(self.MULTIPART_REQUEST_MAX_SIZE).as_data_size("B") or 0),
            max_header=int(value(self.REQUEST_HEADER_MAX_SIZE).as_data_size("B") or 0),
            wait_s=handler_wait_s(context_map.request_timeout_s()),
        )
        port = int(value(self.PORT).evaluate_attribute_expressions().value or 0)
        queue = ContainerQueue(int(value(self.CONTAINER_QUEUE_SIZE).as_integer() or 50))
        threads = int(value(self.MAXIMUM_THREADS).as_integer() or 200)
        tls = self._tls(context)
        try:
            server = RequestServer(
                value(self.HOSTNAME).value or "", port, config, queue, threads, tls=tls
            )
        except OSError as error:
            msg = f"HandleHttpRequest cannot listen on port {port}: {error.strerror or error}"
            raise ConfigurationError(msg) from error
        context_map.serve_here()
        self.__dict__.update(_http_server=server, _containers=queue, _listed={}, _held={})
        context.logger.info("Started HTTP server on port %s", server.port)
        return queue

    def _tls(self, context: ProcessContext) -> ssl.SSLContext | None:
        """The server's TLS context, when an SSL Context Service is set (NiFi: HTTPS only)."""
        name = context.get_property(self.SSL_CONTEXT).value
        if not name:
            return None
        lookup = context.service_lookup or self.__dict__.get("_lookup")
        if lookup is None:
            msg = f"HandleHttpRequest cannot reach service {name!r} here"
            raise ConfigurationError(msg)
        service = lookup(name)
        policy = HANDLE_CLIENT_AUTH[context.get_property(self.CLIENT_AUTH).value or ""]
        if isinstance(service, StandardSSLContextService) and not service.truststore_filename:
            policy = "NONE"  # NiFi: Client Authentication is ignored without a truststore
        warn_http2(
            context, context.get_property(self.HTTP_PROTOCOL_STRATEGY).value, "HandleHttpRequest"
        )
        return server_context(service, policy, "HandleHttpRequest", self.SSL_CONTEXT.display_name)

    def list_work(self, context: ProcessContext, state: Mapping[str, str]) -> WorkListing:
        """The requests that arrived, registered in the context map, one work item each."""
        queue = self._start(context)
        context_map = self._context_map(context)
        # Held requests by identifier: their exchanges only (a body goes once its FlowFiles are
        # committed, so memory holds the bodies of requests not yet committed, not all held).
        held: dict[str, Exchange] = self.__dict__["_held"]
        for identifier in [i for i, e in held.items() if e.answered]:
            del held[identifier]  # answered: nothing to answer when the server stops
        value = context.get_property
        charset = value(self.URL_CHARACTER_SET).value or "UTF-8"
        wanted = value(self.PARAMETERS_TO_ATTRIBUTES).value
        parameters = {p.strip() for p in (wanted or "").split(",") if p.strip()}
        items = []
        for container in queue.take(TAKE_PER_TRIGGER):
            if container.exchange.answered:
                continue  # its handler gave up waiting
            item = self._item(context, container, charset, parameters)
            if item is None:
                continue
            if not container.registered:
                try:
                    registered = context_map.register(container.identifier, container.exchange)
                except ProcessException:
                    registered = False
                if not registered:
                    container.exchange.unavailable("Request Registration Failed")
                    continue
                container.registered = True
                held[container.identifier] = container.exchange
            self.__dict__["_listed"][container.identifier] = container
            items.append(item)
        return WorkListing(items, state)

    def _item(
        self, context: ProcessContext, container: Container, charset: str, parameters: set[str]
    ) -> WorkItem | None:
        """The work item of *container*, or None after answering 400 (a broken multipart body)."""
        try:
            parts = multipart_parts(container)
        except ValueError as error:
            context.logger.error(
                "Stream Processing Failed: Method [%s] URI [%s] Address [%s]: %s",
                container.method,
                container.target,
                container.client[0],
                error,
            )
            container.exchange.answer(_bad_request())
            return None
        attributes = request_attributes(
            container,
            default_charset=charset,
            parameters=parameters,
            form=form_fields(container, parts, charset) if parameters else None,
        )
        contents = (
            [(container.body, {})]
            if parts is None
            else [(p.content, dict(p.attributes)) for p in parts]
        )
        return WorkItem(
            key=container.identifier,
            payload={
                "contents": contents,
                "attributes": attributes,
                "remote": container.client[0],
                "millis": container.millis,
            },
            flowfiles=len(contents),
            size=sum(len(c) for c, _ in contents),
        )

    def requeue_work(
        self,
        state: Mapping[str, str],
        items: Sequence[WorkItem],
        committed: Mapping[str, str],
    ) -> Mapping[str, str]:
        """Requests whose FlowFiles could not be made wait to be listed again (still held)."""
        del committed
        listed: dict[str, Container] = self.__dict__.get("_listed", {})
        back = [listed.pop(item.key) for item in items if item.key in listed]
        queue = self.__dict__.get("_containers")
        if queue is not None:
            queue.put_back(back)
        return state

    def after_commit(self, context: ProcessContext, items: Sequence[WorkItem]) -> None:
        """The requests' FlowFiles are durable: they wait for HandleHttpResponse now."""
        del context
        listed: dict[str, Container] = self.__dict__.get("_listed", {})
        for item in items:
            container = listed.pop(item.key, None)
            if container is not None:
                container.body = b""  # in the content repository now; its handler still waits

    def on_stopped(self, context: ProcessContext) -> None:
        """Stop the server; requests queued or held unanswered get 503 ``Stopping Server``."""
        del context
        server = self.__dict__.pop("_http_server", None)
        queue = self.__dict__.pop("_containers", None)
        held: dict[str, Exchange] = self.__dict__.pop("_held", {})
        context_map = self.__dict__.pop("_map", None)
        self.__dict__.pop("_listed", None)
        if queue is not None:
            for container in queue.close():
                container.exchange.unavailable("Stopping Server")
        for identifier, exchange in held.items():
            if context_map is not None and not exchange.answered:
                with contextlib.suppress(ProcessException):  # answered meanwhile, or expired
                    context_map.complete(identifier)
            exchange.unavailable("Stopping Server")
        if server is not None:
            server.close()

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """List and read in one session (the test harness's way), the map from the session."""
        self.__dict__["_lookup"] = session.controller_service
        super().on_trigger(context, session)

    # --- the task side ----------------------------------------------------------------------------

    def read_work(self, context: ProcessContext, session: ProcessSession, item: WorkItem) -> None:
        """The request's FlowFile(s) (one per multipart part), each with its RECEIVE event."""
        del context
        payload = item.payload
        attributes: Mapping[str, str] = payload["attributes"]
        uri = transit_uri(attributes)
        details = f"Received from {payload['remote']}"
        for content, part_attributes in payload["contents"]:
            flowfile = session.write(session.create(), content)
            flowfile = session.put_all_attributes(flowfile, {**part_attributes, **attributes})
            session.provenance.receive(
                flowfile, uri, details=details, duration_ms=payload["millis"]
            )
            session.transfer(flowfile, SUCCESS)


def _bad_request() -> Answer:
    reason = "Stream Processing Failed"
    return Answer(400, (("Content-Type", "text/plain"),), reason.encode(), reason)
