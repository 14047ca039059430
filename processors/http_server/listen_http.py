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
from collections.abc import Mapping, Sequence
from typing import ClassVar

import processors.http_server._properties as shared
from flowcore.errors import ConfigurationError
from flowcore.process_context import ProcessContext
from flowcore.processor_kinds import WorkItem, WorkListing
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.relationship import SUCCESS
from flowcore.session.process_session import ProcessSession
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

    driver_state: ClassVar = ("_http_server", "_held_requests")

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
        description="The port to listen on for incoming health check requests; if set, it must "
        "be different from the Listening Port (flowcore answers health checks on the Listening "
        "Port, GET <base path>/healthcheck, and refuses a separate one)",
        el_scope=ExpressionLanguageScope.ENVIRONMENT,
        validators=(PORT_VALIDATOR,),
        aliases=("health-check-port",),
    )
    SSL_CONTEXT_SERVICE = PropertyDescriptor(
        "SSL Context Service",
        description="SSL Context Service enables support for HTTPS (not served by flowcore yet)",
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
        description="The Record Reader to use parsing the incoming FlowFile into Records "
        "(not supported by flowcore's ListenHTTP yet)",
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
        """Refuse what flowcore does not serve yet: HTTPS, a health check port, records.

        Before the run starts, so a flow that needs them fails in one line instead of running
        without its listener.
        """
        unsupported = {
            self.SSL_CONTEXT_SERVICE: "flowcore's ListenHTTP does not serve HTTPS yet: "
            "remove the SSL Context Service (or put a TLS proxy in front)",
            self.HEALTH_CHECK_PORT: "flowcore's ListenHTTP answers health checks on the "
            "Listening Port: remove Listening Port for Health Check Requests",
            self.RECORD_READER: "flowcore's ListenHTTP does not read records yet: remove the "
            "Record Reader and convert with ConvertRecord after it",
        }
        return [
            ValidationResult(descriptor.display_name, values.get(descriptor.name), False, why)
            for descriptor, why in unsupported.items()
            if values.get(descriptor.name)
        ]

    # --- the driver side: the server and its inbox --------------------------------------------

    def _inbox(self, context: ProcessContext) -> Inbox:
        """The inbox, with the server started at the first trigger (on the driver)."""
        inbox = self.__dict__.get("_held_requests")
        if inbox is not None:
            return inbox
        value = context.get_property
        headers = value(self.HEADERS_AS_ATTRIBUTES_REGEX).value
        config = ListenerConfig(
            base_path=value(self.BASE_PATH).evaluate_attribute_expressions().value or "",
            max_body=int(value(self.MAX_REQUEST_SIZE).as_data_size("B") or 0),
            wait_s=float(value(self.MAX_UNCONFIRMED_TIME).as_time_period("ms") or 0) / 1000,
            headers=re.compile(headers) if headers else None,
            max_header=int(value(self.REQUEST_HEADER_MAX_SIZE).as_data_size("B") or 0),
            max_multipart=int(value(self.MULTIPART_REQUEST_MAX_SIZE).as_data_size("B") or 0),
        )
        port = int(value(self.PORT).evaluate_attribute_expressions().value or 0)
        inbox = Inbox(int(value(self.MAX_THREAD_POOL_SIZE).as_integer() or 200))
        try:
            server = ListenerServer("", port, config, inbox)
        except OSError as error:
            msg = f"ListenHTTP cannot listen on port {port}: {error.strerror or error}"
            raise ConfigurationError(msg) from error
        self.__dict__["_http_server"], self.__dict__["_held_requests"] = server, inbox
        context.logger.info(
            "listening on port %s at /%s (requests are received while the run lasts)",
            server.port,
            config.base_path,
        )
        return inbox

    def list_work(self, context: ProcessContext, state: Mapping[str, str]) -> WorkListing:
        """The requests that arrived, one work item each (their bodies travel with them)."""
        held = self._inbox(context).take(TAKE_PER_TRIGGER)
        items = tuple(
            WorkItem(
                key=h.key,
                payload={
                    "body": h.body,
                    "attributes": dict(h.attributes),
                    "url": h.url,
                    "subject": h.subject,
                    "millis": h.millis,
                },
                flowfiles=1,
                size=len(h.body),
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
        server = self.__dict__.pop("_http_server", None)
        if inbox is not None:
            inbox.close()
        if server is not None:
            server.close()

    # --- the task side ------------------------------------------------------------------------

    def read_work(self, context: ProcessContext, session: ProcessSession, item: WorkItem) -> None:
        """One request's FlowFile, with its RECEIVE event."""
        del context
        payload = item.payload
        flowfile = session.write(session.create(), payload["body"])
        flowfile = session.put_all_attributes(flowfile, payload["attributes"])
        session.provenance.receive(
            flowfile,
            payload["url"],
            details=f"Remote DN={payload['subject']}",
            duration_ms=payload["millis"],
        )
        session.transfer(flowfile, SUCCESS)
