"""ListenHTTP: an HTTP server whose POSTed requests become FlowFiles, answered once durable.

The server runs on the driver, in threads, from the first trigger (``list_work``) to the end of
the run (``on_stopped``). Each request is held until the write-ahead log transaction holding its
FlowFile is committed, and only then answered with the Return Code (``after_commit``): a client
that got its 200 never loses the data; a run killed before the commit drops the connection, and
the client retries. A request not committed within Max Unconfirmed Flowfile Time gets 503; one
that finds the listener's inbox full (the flow is held back by back pressure) gets 503 at once.

Properties carry NiFi 2's names; the NiFi 1.x names NiFi's ``migrateProperties`` renames
(``health-check-port``, ``Authorized DN Pattern``, ``HTTP Headers to receive as Attributes
(Regex)``, ...) are aliases, so a 1.x flow loads. Max Data to Receive per Second, which NiFi 2
removes, is left out of an imported flow (:mod:`flowcore.nifi.migrations`).
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Mapping, Sequence
from typing import ClassVar

import attrs

import processors.http_server._properties as shared
from flowcore.errors import ConfigurationError
from flowcore.processor.context import ProcessContext
from flowcore.processor.kinds import WorkItem, WorkListing
from flowcore.processor.relationship import SUCCESS
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.ssl_context import StandardSSLContextService
from flowcore.validators import (
    NON_NEGATIVE_INTEGER_VALIDATOR,
    PORT_VALIDATOR,
    REGULAR_EXPRESSION_VALIDATOR,
    TIME_PERIOD_VALIDATOR,
    ValidationResult,
    create_long_validator,
    create_regex_matching_validator,
)
from processors.http_server._inbox import Inbox
from processors.http_server._server import ListenerConfig, ListenerServer
from processors.http_server._source import HttpServerSource
from processors.http_server._tls import listen_client_auth, server_context, warn_http2

__all__ = ["ListenHTTP"]

#: Requests handed out per trigger at most (each is a work item of one FlowFile).
TAKE_PER_TRIGGER = 10_000
#: NiFi 2 dropped Max Data to Receive per Second: bodies are read as fast as they come.
#: NiFi's ``ListenHTTP.ClientAuthentication`` values, with its descriptions.
_CLIENT_AUTHENTICATION = (
    AllowableValue(
        "AUTO",
        description="Inferred based on SSL Context Service properties. The presence of Trust "
        "Store properties implies REQUIRED, otherwise NONE is configured.",
    ),
    AllowableValue(
        "WANT",
        description="Requests the client certificate on handshake and validates if present but "
        "does not require it",
    ),
    AllowableValue(
        "REQUIRED",
        description="Requests the client certificate on handshake and rejects the connection if "
        "it is not present and valid",
    ),
    AllowableValue("NONE", description="Does not request the client certificate on handshake"),
)


class ListenHTTP(HttpServerSource):
    """Starts an HTTP server and turns POSTed requests into FlowFiles (NiFi's ListenHTTP).

    Listens on ``http://{host}:{port}/{Base Path}``; POST content becomes a FlowFile with
    NiFi's ``restlistener.*`` attributes and the headers the regex keeps, a RECEIVE event with
    the request URL; the client is answered the Return Code after the FlowFile's commit. Only in
    continuous runs: a batch run lists what has arrived at its first trigger and ends.
    """

    driver_state: ClassVar = ("_http_server", "_held_requests", "_health_server", "_lookup")

    BASE_PATH = PropertyDescriptor(
        "Base Path",
        description="Base path for incoming connections",
        required=True,
        default="contentListener",
        el_scope=ExpressionLanguageScope.ENVIRONMENT,
        validators=(
            create_regex_matching_validator(
                r"(^[^/]+.*[^/]+$|^[^/]+$|^$)", "no leading or trailing /"
            ),
        ),
    )
    PORT = PropertyDescriptor(
        "Listening Port",
        description="The Port to listen on for incoming connections",
        required=True,
        el_scope=ExpressionLanguageScope.ENVIRONMENT,
        validators=(PORT_VALIDATOR,),
    )
    HEALTH_CHECK_PORT = PropertyDescriptor(
        "Listening Port for Health Check Requests",
        description="The port to listen on for incoming health check requests. If set, it must "
        "be different from the Listening Port. Configure this port if the processor is set to "
        "use two-way SSL and a load balancer that does not support client authentication for "
        "health check requests is used. Only /<base_path>/healthcheck service is available via "
        "this port and only GET and HEAD requests are supported. If the processor is set not "
        "to use SSL, SSL will not be used on this port, either. If the processor is set to use "
        "one-way SSL, one-way SSL will be used on this port. If the processor is set to use "
        "two-way SSL, one-way SSL will be used on this port (client authentication not "
        "required).",
        el_scope=ExpressionLanguageScope.ENVIRONMENT,
        validators=(PORT_VALIDATOR,),
        aliases=("health-check-port",),
    )
    SSL_CONTEXT_SERVICE = PropertyDescriptor(
        "SSL Context Service",
        description="SSL Context Service enables support for HTTPS",
        identifies_service=True,
    )
    HTTP_PROTOCOL_STRATEGY = shared.HTTP_PROTOCOL_STRATEGY
    CLIENT_AUTHENTICATION = PropertyDescriptor(
        "Client Authentication",
        description="Client Authentication policy for TLS connections. Required when SSL "
        "Context Service configured.",
        default="AUTO",
        allowable_values=_CLIENT_AUTHENTICATION,
        dependencies=("SSL Context Service",),
        aliases=("client-authentication",),
    )
    AUTHORIZED_DN_PATTERN = PropertyDescriptor(
        "Authorized Subject DN Pattern",
        description="A Regular Expression to apply against the Subject's Distinguished Name of "
        "incoming connections. If the Pattern does not match the Subject DN, the processor "
        "will respond with a status of HTTP 403 Forbidden.",
        required=True,
        default=".*",
        validators=(REGULAR_EXPRESSION_VALIDATOR,),
        aliases=("Authorized DN Pattern",),
    )
    AUTHORIZED_ISSUER_DN_PATTERN = PropertyDescriptor(
        "Authorized Issuer DN Pattern",
        description="A Regular Expression to apply against the Issuer's Distinguished Name of "
        "incoming connections. If the Pattern does not match the Issuer DN, the processor will "
        "respond with a status of HTTP 403 Forbidden.",
        default=".*",
        validators=(REGULAR_EXPRESSION_VALIDATOR,),
        aliases=("authorized-issuer-dn-pattern",),
    )
    MAX_UNCONFIRMED_TIME = PropertyDescriptor(
        "Max Unconfirmed Flowfile Time",
        description="The maximum amount of time to wait for a FlowFile to be confirmed before it "
        "is removed from the cache (flowcore: before the request is answered 503)",
        required=True,
        default="60 secs",
        validators=(TIME_PERIOD_VALIDATOR,),
    )
    HEADERS_AS_ATTRIBUTES_REGEX = PropertyDescriptor(
        "HTTP Headers for Attributes",
        description="Specifies the Regular Expression that determines the names of HTTP Headers "
        "that should be passed along as FlowFile attributes",
        validators=(REGULAR_EXPRESSION_VALIDATOR,),
        aliases=("HTTP Headers to receive as Attributes (Regex)",),
    )
    REQUEST_HEADER_MAX_SIZE = shared.REQUEST_HEADER_MAX_SIZE
    RETURN_CODE = PropertyDescriptor(
        "Return Code",
        description="The HTTP return code returned after every HTTP call",
        default="200",
        validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
    )
    MULTIPART_REQUEST_MAX_SIZE = shared.MULTIPART_REQUEST_MAX_SIZE
    MULTIPART_READ_BUFFER_SIZE = shared.MULTIPART_READ_BUFFER_SIZE
    MAX_THREAD_POOL_SIZE = PropertyDescriptor(
        "Maximum Thread Pool Size",
        description="The maximum number of threads to be used by the embedded Jetty server. The "
        "value can be set between 8 and 1000 (flowcore: the requests held at most, waiting for "
        "their commit; more get 503)",
        required=True,
        default="200",
        validators=(create_long_validator(8, 1000),),
        aliases=("max-thread-pool-size",),
    )
    RECORD_READER = PropertyDescriptor(
        "Record Reader",
        description="The Record Reader to use parsing the incoming FlowFile into Records",
        identifies_service=True,
        aliases=("record-reader",),
    )
    RECORD_WRITER = PropertyDescriptor(
        "Record Writer",
        description="The Record Writer to use for serializing Records after they have been "
        "transformed",
        required=True,
        identifies_service=True,
        dependencies=("Record Reader",),
        aliases=("record-writer",),
    )
    MAX_REQUEST_SIZE = shared.MAX_REQUEST_SIZE

    property_descriptors: ClassVar[tuple[PropertyDescriptor, ...]] = (
        BASE_PATH,
        PORT,
        HEALTH_CHECK_PORT,
        SSL_CONTEXT_SERVICE,
        HTTP_PROTOCOL_STRATEGY,
        CLIENT_AUTHENTICATION,
        AUTHORIZED_DN_PATTERN,
        AUTHORIZED_ISSUER_DN_PATTERN,
        MAX_UNCONFIRMED_TIME,
        HEADERS_AS_ATTRIBUTES_REGEX,
        REQUEST_HEADER_MAX_SIZE,
        RETURN_CODE,
        MULTIPART_REQUEST_MAX_SIZE,
        MULTIPART_READ_BUFFER_SIZE,
        MAX_THREAD_POOL_SIZE,
        RECORD_READER,
        RECORD_WRITER,
        MAX_REQUEST_SIZE,
    )

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """NiFi's rule: the health check port is not the Listening Port."""
        health = values.get(self.HEALTH_CHECK_PORT.name)
        if health and health == values.get(self.PORT.name):
            why = (
                f"'{self.PORT.display_name}' and '{self.HEALTH_CHECK_PORT.display_name}' cannot "
                "have the same value."
            )
            return [ValidationResult(self.HEALTH_CHECK_PORT.display_name, health, False, why)]
        return []

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """List and read in one session (the test harness's way), services from the session."""
        self.__dict__["_lookup"] = session.controller_service
        super().on_trigger(context, session)

    # --- the driver side: the server and its inbox --------------------------------------------

    def _inbox(self, context: ProcessContext) -> Inbox:
        """The inbox, with the server started at the first trigger (on the driver)."""
        inbox = self.__dict__.get("_held_requests")
        if inbox is not None:
            return inbox
        value = context.get_property
        headers = value(self.HEADERS_AS_ATTRIBUTES_REGEX).value
        tls, records = self._services(context)
        config = ListenerConfig(
            base_path=value(self.BASE_PATH).evaluate_attribute_expressions().value or "",
            max_body=int(value(self.MAX_REQUEST_SIZE).as_data_size("B") or 0),
            wait_s=float(value(self.MAX_UNCONFIRMED_TIME).as_time_period("ms") or 0) / 1000,
            headers=re.compile(headers) if headers else None,
            max_header=int(value(self.REQUEST_HEADER_MAX_SIZE).as_data_size("B") or 0),
            max_multipart=int(value(self.MULTIPART_REQUEST_MAX_SIZE).as_data_size("B") or 0),
            subjects=re.compile(value(self.AUTHORIZED_DN_PATTERN).value or ".*"),
            issuers=re.compile(value(self.AUTHORIZED_ISSUER_DN_PATTERN).value or ".*"),
            records=records,
        )
        port = int(value(self.PORT).evaluate_attribute_expressions().value or 0)
        health = value(self.HEALTH_CHECK_PORT).evaluate_attribute_expressions().value
        inbox = Inbox(int(value(self.MAX_THREAD_POOL_SIZE).as_integer() or 200))
        server = _listen(port, config, inbox, tls[0] if tls else None)
        if health:  # the same server on a second port: health checks only, no client auth
            health_config = attrs.evolve(config, health_only=True)
            try:
                self.__dict__["_health_server"] = _listen(
                    int(health), health_config, inbox, tls[1] if tls else None
                )
            except ConfigurationError:
                server.close()
                raise
        self.__dict__["_http_server"], self.__dict__["_held_requests"] = server, inbox
        context.logger.info(
            "listening on port %s at /%s over %s (requests are received while the run lasts)",
            server.port,
            config.base_path,
            "HTTPS" if tls else "HTTP",
        )
        return inbox

    def _services(
        self, context: ProcessContext
    ) -> tuple[tuple[ssl.SSLContext, ssl.SSLContext] | None, tuple[object, object] | None]:
        """The TLS contexts (Listening Port's, health check port's) and the record services."""
        value = context.get_property
        lookup = context.service_lookup or self.__dict__.get("_lookup")
        names = {
            d: value(d).value
            for d in (self.SSL_CONTEXT_SERVICE, self.RECORD_READER, self.RECORD_WRITER)
        }
        if lookup is None and any(names.values()):
            wanted = ", ".join(n for n in names.values() if n)
            msg = f"ListenHTTP cannot reach its services ({wanted}) here"
            raise ConfigurationError(msg)
        tls = None
        name = names[self.SSL_CONTEXT_SERVICE]
        if name:
            service = lookup(name)  # type: ignore[misc]
            prop = self.SSL_CONTEXT_SERVICE.display_name
            policy = value(self.CLIENT_AUTHENTICATION).value
            chosen = (
                listen_client_auth(policy, service)
                if isinstance(service, StandardSSLContextService)
                else "NONE"
            )
            tls = (
                server_context(service, chosen, "ListenHTTP", prop),
                server_context(service, "NONE", "ListenHTTP", prop),
            )
            warn_http2(context, value(self.HTTP_PROTOCOL_STRATEGY).value, "ListenHTTP")
        records = None
        if names[self.RECORD_READER]:
            reader = lookup(names[self.RECORD_READER])  # type: ignore[misc]
            writer = lookup(names[self.RECORD_WRITER] or "")  # type: ignore[misc]
            records = (reader, writer)
        return tls, records

    def list_work(self, context: ProcessContext, state: Mapping[str, str]) -> WorkListing:
        """The requests that arrived, one work item each (their bodies travel with them)."""
        held = self._inbox(context).take(TAKE_PER_TRIGGER)
        items = tuple(
            WorkItem(
                key=h.key,
                payload={
                    "pieces": [(p.content, dict(p.attributes), p.source_id) for p in h.pieces],
                    "attributes": dict(h.attributes),
                    "url": h.url,
                    "details": f"Remote DN={h.subject}, Issuer DN={h.issuer}",
                    "millis": h.millis,
                },
                flowfiles=len(h.pieces),
                size=sum(len(p.content) for p in h.pieces),
            )
            for h in held
        )
        return WorkListing(items, state)

    def requeue_work(
        self,
        state: Mapping[str, str],
        items: Sequence[WorkItem],
        committed: Mapping[str, str],
    ) -> Mapping[str, str]:
        """Requests whose FlowFile could not be made wait to be listed again."""
        del committed
        inbox = self.__dict__.get("_held_requests")
        if inbox is not None:
            inbox.put_back(item.key for item in items)
        return state

    def after_commit(self, context: ProcessContext, items: Sequence[WorkItem]) -> None:
        """Answer the requests whose FlowFiles are now durable, with the Return Code."""
        inbox = self.__dict__.get("_held_requests")
        if inbox is not None:
            status = context.get_property(self.RETURN_CODE).as_integer()
            inbox.answer((item.key for item in items), 200 if status is None else status)

    def on_stopped(self, context: ProcessContext) -> None:
        """Stop the server; requests not committed are answered 503 (the client retries)."""
        del context
        inbox = self.__dict__.pop("_held_requests", None)
        servers = [self.__dict__.pop(k, None) for k in ("_http_server", "_health_server")]
        if inbox is not None:
            inbox.close()
        for server in servers:
            if server is not None:
                server.close()

    # --- the task side ------------------------------------------------------------------------

    def read_work(self, context: ProcessContext, session: ProcessSession, item: WorkItem) -> None:
        """One request's FlowFiles (one, or one per packaged FlowFile), each RECEIVEd."""
        del context
        payload = item.payload
        for content, attributes, source_id in payload["pieces"]:
            flowfile = session.write(session.create(), content)
            flowfile = session.put_all_attributes(flowfile, {**attributes, **payload["attributes"]})
            session.provenance.receive(
                flowfile,
                payload["url"],
                source_system_flowfile_identifier=source_id,
                details=payload["details"],
                duration_ms=payload["millis"],
            )
            session.transfer(flowfile, SUCCESS)


def _listen(
    port: int, config: ListenerConfig, inbox: Inbox, tls: ssl.SSLContext | None
) -> ListenerServer:
    """The server on *port*; a port that cannot be taken ends the run in one line."""
    try:
        return ListenerServer("", port, config, inbox, tls=tls)
    except OSError as error:
        msg = f"ListenHTTP cannot listen on port {port}: {error.strerror or error}"
        raise ConfigurationError(msg) from error
