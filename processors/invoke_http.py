"""InvokeHTTP: call an HTTP endpoint per FlowFile and route by the status code, as NiFi's.

Routing (NiFi's ``InvokeHTTP.route``): a 2xx response sends the request FlowFile to
``Original`` and a new FlowFile holding the response body to ``Response``; a 5xx sends the
request to ``Retry``, penalized; 1xx, 3xx (redirects not followed) and 4xx send it to
``No Retry`` (penalized when ``Request Failure Penalization Enabled``); an exception (refused
connection, timeout, TLS failure) sends it to ``Failure``, penalized, with the exception's class
and message. ``Response Generation Required`` sends a Response FlowFile whatever the status.

The FlowFiles of one trigger (up to ``Concurrent Requests`` x 4) are sent ``Concurrent Requests``
at a time on the task's pooled client (:mod:`processors._http_client`) and routed in the order
they were taken; each response body streams from the socket into the content repository.

Delivery toward the server is at least once: a request is sent before the task's output is
committed, so a task that fails or is killed after sending sends it again when its FlowFiles
are retried, and a Retry route sends it again by design. Use idempotent endpoints (PUT, or an
idempotency key from ``${uuid}`` in a dynamic-property header) where duplicates matter.
"""

from __future__ import annotations

import email.utils
import functools
import logging
import re
import time
import urllib.parse
import uuid
from collections import deque
from collections.abc import Iterator, Mapping
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, ClassVar

import attrs
import httpx

import processors._http_properties as p
from flowcore.errors import ConfigurationError
from flowcore.processor.base import Processor
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.ssl_context import StandardSSLContextService
from flowcore.validators import ValidationResult
from processors._http_client import Call, ClientSettings, Exchange, HttpRuntime, RequestBody
from processors._http_options import RequestOptions

if TYPE_CHECKING:
    from flowcore.flowfile import FlowFile
    from flowcore.processor.context import ProcessContext
    from flowcore.session.process_session import ProcessSession

__all__ = ["InvokeHTTP"]

STATUS_CODE = "invokehttp.status.code"
STATUS_MESSAGE = "invokehttp.status.message"
RESPONSE_BODY = "invokehttp.response.body"
REQUEST_URL = "invokehttp.request.url"
REQUEST_DURATION = "invokehttp.request.duration"
RESPONSE_URL = "invokehttp.response.url"
TRANSACTION_ID = "invokehttp.tx.id"
REMOTE_DN = "invokehttp.remote.dn"
EXCEPTION_CLASS = "invokehttp.java.exception.class"
EXCEPTION_MESSAGE = "invokehttp.java.exception.message"
DEFAULT_CONTENT_TYPE = "application/octet-stream"
#: Attributes never sent as headers, whatever the pattern (NiFi's IGNORED_REQUEST_ATTRIBUTES).
_IGNORED_REQUEST_ATTRIBUTES = frozenset(
    {
        STATUS_CODE,
        STATUS_MESSAGE,
        RESPONSE_BODY,
        REQUEST_URL,
        RESPONSE_URL,
        TRANSACTION_ID,
        REMOTE_DN,
        EXCEPTION_CLASS,
        EXCEPTION_MESSAGE,
        "path",
    }
)
#: Request headers whose dynamic properties are sensitive (masked, never exported).
SENSITIVE_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key"})
#: Python's names of a certificate's name attributes -> Java's (as a DN shows them).
_RDN_NAMES = {
    "commonName": "CN",
    "organizationName": "O",
    "organizationalUnitName": "OU",
    "countryName": "C",
    "localityName": "L",
    "stateOrProvinceName": "ST",
    "domainComponent": "DC",
    "emailAddress": "EMAILADDRESS",
}
#: FlowFiles taken per trigger, per concurrent request, and at least (one session each).
_TAKEN_PER_REQUEST = 4
_TAKEN_MINIMUM = 16


@functools.lru_cache(maxsize=1024)
def redact_url(url: str) -> str:
    """*url* without a password in its user information (what attributes and logs show)."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return url
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


_CREDENTIALS = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:)[^/\s@]*@")


def redact_text(text: str) -> str:
    """*text* (an error's message) with every URL's password replaced by ``***``."""
    return _CREDENTIALS.sub(r"\g<head>***@", text)


def _java_like_name(error: BaseException) -> str:
    """The exception's qualified class name (``httpx.ReadTimeout``): NiFi's is Java's."""
    module = type(error).__module__
    return f"{module.split('.')[0]}.{type(error).__qualname__}"


def _charset(response: httpx.Response) -> str:
    return response.charset_encoding or "utf-8"


def _remote_dn(response: httpx.Response) -> str | None:
    """The server certificate's subject (``invokehttp.remote.dn``), when TLS verified it."""
    stream = response.extensions.get("network_stream")
    ssl_object = stream.get_extra_info("ssl_object") if stream is not None else None
    peer = ssl_object.getpeercert() if ssl_object is not None else None
    if not peer:
        return None
    names = [f"{_RDN_NAMES.get(k, k)}={v}" for rdn in peer["subject"] for k, v in rdn]
    return ", ".join(reversed(names)) or None


@attrs.frozen
class _Started:
    """A request on its way: its FlowFile, its call (or why it could not start), its URL."""

    flowfile: FlowFile
    call: Future[Exchange] | BaseException
    url: str
    sent_body: bool


class InvokeHTTP(Processor):
    """Calls an HTTP endpoint for each FlowFile (NiFi's InvokeHTTP, NiFi 2.x names).

    ``HTTP URL`` and ``HTTP Method`` take Expression Language; dynamic properties become
    request headers (their values EL, masked when named like a credential: Authorization,
    Proxy-Authorization, Cookie, X-API-Key); attributes matching ``Request Header Attributes
    Pattern`` are sent as headers too. PATCH, POST and PUT send the FlowFile's content (``Request
    Body Enabled``) with ``Request Content-Type`` (default ``${mime.type}``, else
    application/octet-stream).

    Attributes written on both FlowFiles: ``invokehttp.status.code``, ``.status.message``,
    ``.request.url``, ``.request.duration`` (ms), ``.response.url`` (after redirects),
    ``.tx.id``; the response FlowFile also gets every response header as an attribute and
    ``mime.type``. A non-2xx body (or any body, with ``Response Body Attribute Name``) goes into
    an attribute of the request FlowFile, truncated to ``Response Body Attribute Size``.

    Provenance as NiFi: SEND (the request FlowFile, to the URL) when a body is sent; FETCH on
    the response FlowFile (a child of the request) with the URL as transit URI; an
    ATTRIBUTES_MODIFIED with the body attribute.

    The task's client is opened at its first trigger and closed in :meth:`on_stopped`; the
    processor itself stays picklable (Spark ships it).
    """

    property_descriptors: ClassVar = p.PROPERTIES
    relationships: ClassVar = p.RELATIONSHIPS
    supports_dynamic_properties: ClassVar = True
    tags: ClassVar = ("http", "https", "rest", "client")
    writes_attributes: ClassVar[Mapping[str, str]] = {
        STATUS_CODE: "The status code that is returned",
        STATUS_MESSAGE: "The status message that is returned",
        RESPONSE_BODY: "The response body of a non-2xx response, on the request FlowFile",
        REQUEST_URL: "The original request URL",
        REQUEST_DURATION: "Duration (in milliseconds) of the HTTP call to the external endpoint",
        RESPONSE_URL: "The URL that was ultimately requested after any redirects were followed",
        TRANSACTION_ID: "The transaction ID that is returned after reading the response",
        REMOTE_DN: "The DN of the remote server",
        EXCEPTION_CLASS: "The exception class raised when the processor fails",
        EXCEPTION_MESSAGE: "The exception message raised when the processor fails",
    }

    # --- configuration ----------------------------------------------------------------------

    def get_dynamic_property_descriptor(self, name: str) -> PropertyDescriptor | None:
        """A header named *name*, its value EL; credentials' headers are sensitive."""
        return PropertyDescriptor(
            name,
            description="Send request header with a key matching the Dynamic Property Key and a "
            "value created by evaluating the Attribute Expression Language set in the value of "
            "the Dynamic Property.",
            el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
            dynamic=True,
            sensitive=name.strip().lower() in SENSITIVE_HEADERS,
        )

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """Proxy settings come as host and port together; form data is not supported."""
        problems = []
        if bool(values.get(p.PROXY_HOST.name)) != bool(values.get(p.PROXY_PORT.name)):
            problems.append(
                ValidationResult(
                    "Proxy Host and Port",
                    None,
                    False,
                    "Proxy Host and Proxy Port must be set together",
                )
            )
        forms = [n for n in self.dynamic_properties if n.startswith("post:form:")]
        if values.get(p.REQUEST_FORM_DATA_NAME.name):
            forms.append(p.REQUEST_FORM_DATA_NAME.name)
        if forms:
            problems.append(
                ValidationResult(
                    forms[0],
                    None,
                    False,
                    "flowcore's InvokeHTTP does not send multipart form data yet: remove the "
                    "post:form: properties and Request Multipart Form-Data Name",
                )
            )
        return problems

    def __getstate__(self) -> dict[str, Any]:
        """Ship the configuration only: a task opens its own client."""
        state = dict(self.__dict__)
        state.pop("_runtime", None)
        state.pop("_options", None)
        return state

    def _settings(self, context: ProcessContext, session: ProcessSession) -> ClientSettings:
        def period(descriptor: PropertyDescriptor) -> float:
            return float(context.get_property(descriptor).as_time_period("ms") or 0) / 1000

        proxy = None
        host = context.get_property(p.PROXY_HOST).evaluate_attribute_expressions().value
        if host:
            port = context.get_property(p.PROXY_PORT).evaluate_attribute_expressions().value
            scheme = context.get_property(p.PROXY_TYPE).value or "http"
            user = context.get_property(p.PROXY_USER).value
            secret = context.get_property(p.PROXY_PASSWORD).value
            credentials = ""
            if user:
                credentials = urllib.parse.quote(user, safe="")
                credentials += f":{urllib.parse.quote(secret or '', safe='')}@"
            proxy = f"{scheme.lower()}://{credentials}{host}:{port}"
        service_name = context.get_property(p.SSL_CONTEXT_SERVICE).value
        ssl_service = None
        if service_name:
            ssl_service = session.controller_service(service_name)
            if not isinstance(ssl_service, StandardSSLContextService):
                msg = (
                    f"SSL Context Service {service_name!r} is a {type(ssl_service).__name__}, "
                    "not a StandardSSLContextService"
                )
                raise ConfigurationError(msg)
        return ClientSettings(
            connect_timeout=period(p.SOCKET_CONNECT_TIMEOUT),
            read_timeout=period(p.SOCKET_READ_TIMEOUT),
            write_timeout=period(p.SOCKET_WRITE_TIMEOUT),
            idle_timeout=period(p.SOCKET_IDLE_TIMEOUT),
            idle_connections=max(0, context.get_property(p.SOCKET_IDLE_CONNECTIONS).as_integer()),
            concurrency=context.get_property(p.CONCURRENT_REQUESTS).as_integer() or 1,
            follow_redirects=bool(context.get_property(p.RESPONSE_REDIRECTS_ENABLED).as_boolean()),
            accept_cookies=context.get_property(p.RESPONSE_COOKIE_STRATEGY).value == "ACCEPT_ALL",
            proxy=proxy,
            ssl=ssl_service,
        )

    def on_scheduled(self, context: ProcessContext) -> None:
        """Note the settings flowcore does not act on; the client opens at the first trigger."""
        if context.get_property(p.RESPONSE_CACHE_ENABLED).as_boolean():
            context.logger.warning(
                "Response Cache Enabled is true, but flowcore keeps no HTTP response cache: "
                "every request goes to the server"
            )

    def on_stopped(self, context: ProcessContext) -> None:
        """Close the task's client and its pool."""
        del context
        self.__dict__.pop("_options", None)
        runtime = self.__dict__.pop("_runtime", None)
        if runtime is not None:
            runtime.close()

    def _runtime_for(
        self, context: ProcessContext, session: ProcessSession
    ) -> tuple[HttpRuntime, RequestOptions]:
        """The task's client and options, made at its first trigger."""
        runtime = self.__dict__.get("_runtime")
        if runtime is None:
            options = RequestOptions.from_context(context)
            runtime = HttpRuntime(self._settings(context, session))
            self.__dict__["_options"] = options
            self.__dict__["_runtime"] = runtime
        return runtime, self.__dict__["_options"]

    # --- the trigger ------------------------------------------------------------------------

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Send the FlowFiles taken, a bounded number at once, and route each by its response."""
        runtime, options = self._runtime_for(context, session)
        concurrency = runtime.settings.concurrency
        flowfiles = session.get(max(_TAKEN_MINIMUM, concurrency * _TAKEN_PER_REQUEST))
        if not flowfiles:
            return
        window: deque[_Started] = deque()
        try:
            for flowfile in flowfiles:
                window.append(self._start(session, runtime, options, flowfile))
                if len(window) >= concurrency:
                    self._finish(context, session, options, window.popleft())
            while window:
                self._finish(context, session, options, window.popleft())
        except BaseException:
            for started in window:  # close what was sent; the session rolls back
                if isinstance(started.call, Future):
                    started.call.result().close()
            raise

    def _start(
        self,
        session: ProcessSession,
        runtime: HttpRuntime,
        options: RequestOptions,
        flowfile: FlowFile,
    ) -> _Started:
        """Evaluate *flowfile*'s request and start it; an evaluation error is kept for Failure."""
        url = ""
        try:
            url = (options.url.evaluate_attribute_expressions(flowfile).value or "").strip()
            call = self._call(session, options, flowfile, url)
        except Exception as error:  # a bad URL or header: Failure, as NiFi's catch-all
            return _Started(flowfile, error, url, sent_body=False)
        return _Started(flowfile, runtime.submit(call), url, sent_body=call.body is not None)

    @staticmethod
    def _call(
        session: ProcessSession, options: RequestOptions, flowfile: FlowFile, url: str
    ) -> Call:
        """The request for *flowfile*: method, headers (NiFi's order) and body."""
        method = (options.method.evaluate_attribute_expressions(flowfile).value or "").strip()
        method = method.upper()
        headers: list[tuple[str, str]] = []
        agent = options.user_agent.evaluate_attribute_expressions(flowfile).value
        if agent and agent.strip():
            headers.append(("User-Agent", agent.strip()))
        if options.date_header:
            headers.append(("Date", email.utils.formatdate(usegmt=True)))
        for name, value in options.headers:
            headers.append((name, value.evaluate_attribute_expressions(flowfile).value or ""))
        if options.attributes_pattern is not None:
            for raw_key, value in flowfile.attributes.items():
                key = raw_key.strip()
                if key not in _IGNORED_REQUEST_ATTRIBUTES and options.attributes_pattern.fullmatch(
                    key
                ):
                    headers.append((key, value.strip()))
        body = None
        if method in p.BODY_METHODS:
            content_type = options.content_type.evaluate_attribute_expressions(flowfile).value
            headers.append(("Content-Type", (content_type or "").strip() or DEFAULT_CONTENT_TYPE))
            if options.gzip:
                headers.append(("Content-Encoding", "gzip"))
            if options.body_enabled:
                with session.read(flowfile) as stream:
                    body = RequestBody.spool(stream, flowfile.size, compress=options.gzip)
            else:
                body = RequestBody(data=b"")
        return Call(method, url, headers, body, options.chunked, options.auth)

    # --- the response -----------------------------------------------------------------------

    def _finish(
        self,
        context: ProcessContext,
        session: ProcessSession,
        options: RequestOptions,
        started: _Started,
    ) -> None:
        """Route a request by its exchange, streaming the body into a response FlowFile."""
        request, url = started.flowfile, started.url
        call = started.call
        exchange = call if isinstance(call, BaseException) else call.result()
        if isinstance(exchange, BaseException) or exchange.error is not None:
            error = exchange if isinstance(exchange, BaseException) else exchange.error
            assert error is not None
            self._fail(context, session, request, error, url)
            return
        if started.sent_body:
            session.provenance.send(request, redact_url(url))
        response = exchange.response
        assert response is not None
        response_ff = None
        try:
            request, response_ff = self._receive(
                context, session, options, request=request, exchange=exchange, url=url
            )
        except Exception as error:  # the body broke off (read timeout, reset): Failure
            self._fail(context, session, request, error, url)
            return
        finally:
            exchange.close()
        self._route(session, options, request, response_ff, response.status_code)

    def _receive(
        self,
        context: ProcessContext,
        session: ProcessSession,
        options: RequestOptions,
        *,
        request: FlowFile,
        exchange: Exchange,
        url: str,
    ) -> tuple[FlowFile, FlowFile | None]:
        """Write the status attributes, the response FlowFile and the body attribute.

        A body that breaks off leaves no response FlowFile behind (it is removed) and raises.
        """
        response = exchange.response
        assert response is not None
        status = response.status_code
        success = status // 100 == 2
        if context.logger.isEnabledFor(logging.INFO):
            context.logger.info(
                "Request %s %s HTTP %d", response.request.method, redact_url(url), status
            )
        shown_url = redact_url(url)
        attributes = {
            STATUS_CODE: str(status),
            STATUS_MESSAGE: response.reason_phrase,
            REQUEST_URL: shown_url,
            REQUEST_DURATION: str(exchange.headers_ms),
            RESPONSE_URL: redact_url(str(response.url)),
            TRANSACTION_ID: str(uuid.uuid4()),
        }
        request = session.put_all_attributes(request, attributes)
        to_attribute = options.body_attribute.is_set()
        limit = options.body_attribute_size
        body_to_attribute = not success or to_attribute
        body_to_content = (success and not to_attribute) or options.always_output
        has_body = not options.body_ignored
        head = bytearray()
        response_ff = None
        if body_to_content:
            response_ff = session.create(request)
            response_ff = session.put_all_attributes(
                response_ff, {**attributes, **self._header_attributes(response, "")}
            )
            if options.url_path_names and response.request.method == "GET":
                name = urllib.parse.urlsplit(url).path.rstrip("/").rpartition("/")[2]
                if name:
                    response_ff = session.put_attribute(response_ff, "filename", name)
            if has_body:
                content_type = response.headers.get("content-type")
                if content_type:
                    response_ff = session.put_attribute(response_ff, "mime.type", content_type)
                chunks = self._tee(response.iter_bytes(), head, limit if body_to_attribute else 0)
                try:
                    response_ff = session.write(response_ff, chunks)
                except BaseException:
                    session.remove(response_ff)
                    raise
                session.provenance.fetch(
                    response_ff,
                    shown_url,
                    duration_ms=int((time.monotonic() - exchange.started) * 1000),
                )
        elif body_to_attribute and has_body:
            for chunk in response.iter_bytes():
                head += chunk
                if len(head) >= limit:
                    break
        if body_to_attribute and has_body:
            key = options.body_attribute.evaluate_attribute_expressions(request).value
            key = key or RESPONSE_BODY
            text = bytes(head[:limit]).decode(_charset(response), errors="replace")
            request = session.put_attribute(request, key, text)
            duration = int((time.monotonic() - exchange.started) * 1000)
            details = f"Response Body Attribute Added [{key}] Processing Duration [{duration} ms]"
            session.provenance.modify_attributes(request, details=details)
        if options.headers_to_request:
            prefix = options.header_prefix.evaluate_attribute_expressions(request).value
            request = session.put_all_attributes(
                request, self._header_attributes(response, (prefix or "").strip())
            )
        return request, response_ff

    @staticmethod
    def _tee(chunks: Iterator[bytes], head: bytearray, limit: int) -> Iterator[bytes]:
        """Pass *chunks* on, keeping their first *limit* bytes in *head*."""
        for chunk in chunks:
            if len(head) < limit:
                head += chunk[: limit - len(head)]
            yield chunk

    @staticmethod
    def _header_attributes(response: httpx.Response, prefix: str) -> dict[str, str]:
        """Response headers as attributes: repeated ones joined by ``", "`` (NiFi's rule)."""
        found: dict[str, list[str]] = {}
        encoding = response.headers.encoding
        for name, value in response.headers.raw:  # names as the server spelled them
            found.setdefault(name.decode(encoding), []).append(value.decode(encoding))
        attributes = {f"{prefix}{name}": ", ".join(values) for name, values in found.items()}
        dn = _remote_dn(response)
        if dn:
            attributes[REMOTE_DN] = dn
        return attributes

    @staticmethod
    def _route(
        session: ProcessSession,
        options: RequestOptions,
        request: FlowFile,
        response_ff: FlowFile | None,
        status: int,
    ) -> None:
        """NiFi's ``route``: 2xx Original+Response, 5xx Retry (penalized), else No Retry."""
        sent = False
        if options.always_output and response_ff is not None:
            session.transfer(response_ff, p.RESPONSE)
            sent = True
        if status // 100 == 2:
            session.transfer(request, p.ORIGINAL)
            if response_ff is not None and not sent:
                session.transfer(response_ff, p.RESPONSE)
        elif status // 100 == 5:
            session.transfer(session.penalize(request), p.RETRY)
        else:
            if options.penalize_no_retry:
                request = session.penalize(request)
            session.transfer(request, p.NO_RETRY)

    @staticmethod
    def _fail(
        context: ProcessContext,
        session: ProcessSession,
        request: FlowFile,
        error: BaseException,
        url: str,
    ) -> None:
        """Route *request* to Failure, penalized, with the exception's class and message."""
        message = redact_text(str(error)) or type(error).__name__
        context.logger.error(
            "Request Processing failed: %s %s: %s", request, redact_url(url), message
        )
        request = session.put_all_attributes(
            session.penalize(request),
            {EXCEPTION_CLASS: _java_like_name(error), EXCEPTION_MESSAGE: message},
        )
        session.transfer(request, p.FAILURE)
