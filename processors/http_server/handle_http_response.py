"""HandleHttpResponse: answers the request HandleHttpRequest held, once its FlowFile is durable.

NiFi writes the response, then transfers the FlowFile to success and commits. flowcore turns
that around so a client told "200" never loses what it sent: HandleHttpResponse is a two-phase
sink. Its task (:meth:`HandleHttpResponse.write`) decides each FlowFile as NiFi does (no
``http.context.identifier``, a status code that is not a number, a request the context map no
longer holds or another FlowFile of it claimed (a multipart request): ``failure``), reads a
small content (up to 1 MiB), evaluates the headers, reports SEND and transfers to ``success``;
the response itself is *staged* in the task's commit message. The driver keeps the staged
responses (:meth:`~HandleHttpResponse.commit`), the write-ahead log transaction makes the
FlowFiles' transfer durable, and only then :meth:`~HandleHttpResponse.publish` hands each
response to its held request through the HTTP Context Map. A larger content is not read by the
task: the staged response names it, ``publish`` holds it in the content repository (its claims
stay claimed, though the commit may have dropped the FlowFile) and the request's handler
streams it from there and lets it go once sent.

A run that dies between the commit and the answer has the FlowFile in ``success`` and leaves
the client without an answer (its connection drops): the client retries, as it would with NiFi
killed mid-request. The test harness, whose commit is durable at once, answers and completes
in the task before routing, as NiFi does (:meth:`HandleHttpResponse.on_trigger`). A request
the map expired between the task and the commit has been
answered 503 already; its staged response is dropped with NiFi's error message, so no request
is answered twice.
"""

from __future__ import annotations

import pickle
import re
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs

import processors.http_server._properties as shared
from flowcore.errors import ConfigurationError, ProcessException
from flowcore.flowfile import Content, FlowFile
from flowcore.processor.context import ProcessContext
from flowcore.processor.kinds import HARNESS_WRITE, SinkJobs, TwoPhaseSink
from flowcore.processor.relationship import FAILURE, SUCCESS
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import NON_NEGATIVE_INTEGER_VALIDATOR, REGULAR_EXPRESSION_VALIDATOR
from processors.http_server._request_attributes import HTTP_CONTEXT_ID, transit_uri
from processors.http_server.context_map import Answer, ContentBody, Exchange, HttpContextMap

__all__ = ["HandleHttpResponse", "StagedResponse"]

#: The sink state entry naming the batch of staged responses a commit made durable.
STAGED_KEY = "staged"
#: Bodies up to this size are read into memory; larger ones stream from the content repository.
IN_MEMORY_BODY = 1 << 20
#: The status a held request gets when its body cannot be read after the commit.
INTERNAL_SERVER_ERROR = 500
#: The largest body a task on a Spark executor can stage in its commit message (flowcore's
#: Max Request Body Size): such a task cannot reach the driver's requests, so it ships it.
MAX_SHIPPED_BODY = 16 << 20
#: RFC 9110's header field name (a token).
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


@attrs.frozen
class StagedResponse:
    """A response decided in a task, sent by the driver after the FlowFile's commit.

    Attributes:
        identifier: the request's ``http.context.identifier``.
        answer: what the client gets.
        flowfile: the FlowFile, as log lines name it.
        prepared: the body is not in *answer* but kept by the claimed request
            (:attr:`Exchange.body`): the task ran in the driver's process.
        content: a large body, not in *answer*: the FlowFile's content, which the driver
            holds in the content repository after the commit and the request's handler
            streams from there (the task ran in the driver's process).
    """

    identifier: str
    answer: Answer
    flowfile: str
    prepared: bool = False
    content: Content | None = None


class HandleHttpResponse(TwoPhaseSink):
    """Sends the HTTP response for a FlowFile's request, after the FlowFile is durable.

    NiFi's HandleHttpResponse: HTTP Status Code (Expression Language), headers from dynamic
    properties and from the attributes Attributes for HTTP Response matches, the content as
    the body; a SEND event with NiFi's transit URI. Continuous runs only (the request must
    still be held by HandleHttpRequest's run).
    """

    supports_dynamic_properties: ClassVar[bool] = True
    relationships: ClassVar = (SUCCESS, FAILURE)
    tags: ClassVar = ("http", "https", "response", "egress", "web service")

    STATUS_CODE = PropertyDescriptor(
        "HTTP Status Code",
        description="The HTTP Status Code to use when responding to the HTTP Request. See "
        "Section 10 of RFC 2616 for more information.",
        required=True,
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
    )
    HTTP_CONTEXT_MAP = shared.HTTP_CONTEXT_MAP
    ATTRIBUTES_AS_HEADERS_REGEX = PropertyDescriptor(
        "Attributes for HTTP Response",
        description="Specifies the Regular Expression that determines the names of FlowFile "
        "attributes that should be added to the HTTP response",
        validators=(REGULAR_EXPRESSION_VALIDATOR,),
        aliases=("Attributes to add to the HTTP Response (Regex)",),
    )
    property_descriptors: ClassVar = (STATUS_CODE, HTTP_CONTEXT_MAP, ATTRIBUTES_AS_HEADERS_REGEX)

    def get_dynamic_property_descriptor(self, name: str) -> PropertyDescriptor | None:
        """A response header *name*, its value evaluated against each FlowFile."""
        descriptor = super().get_dynamic_property_descriptor(name)
        if descriptor is None:
            return None
        return attrs.evolve(
            descriptor, description=f"Specifies the value to send for the '{name}' HTTP Header"
        )

    def __getstate__(self) -> dict[str, Any]:
        """Ship the configuration only: staged responses stay on the driver."""
        state = dict(self.__dict__)
        state.pop("_staged", None)
        return state

    # --- the task side --------------------------------------------------------------------------

    def write(
        self, context: ProcessContext, session: ProcessSession, flowfiles: Sequence[FlowFile]
    ) -> bytes:
        """Decide each FlowFile's response, transfer it, and stage the responses."""
        name = context.get_property(self.HTTP_CONTEXT_MAP).value or ""
        context_map = _as_map(session.controller_service(name), name)
        local = context_map.holds_requests()
        pattern = self._pattern(context)
        staged: list[StagedResponse] = []
        for flowfile in flowfiles:
            started = time.monotonic()
            response = self._decide(context, flowfile, context_map if local else None, pattern)
            if response is None:
                session.transfer(flowfile, FAILURE)
                continue
            if local and flowfile.size > IN_MEMORY_BODY:  # streamed from its claim, later
                staged.append(attrs.evolve(response, content=flowfile.content))
            elif local:  # the claimed request keeps the body until the commit is durable
                exchange = context_map.get_response(response.identifier) or Exchange()
                exchange.body = session.read_bytes(flowfile)
                staged.append(attrs.evolve(response, prepared=True))
            elif flowfile.size > MAX_SHIPPED_BODY:
                _too_large(context, flowfile)
                session.transfer(flowfile, FAILURE)
                continue
            else:
                answer = attrs.evolve(response.answer, body=session.read_bytes(flowfile))
                staged.append(attrs.evolve(response, answer=answer))
            millis = int((time.monotonic() - started) * 1000)
            session.provenance.send(flowfile, transit_uri(flowfile.attributes), duration_ms=millis)
            session.transfer(flowfile, SUCCESS)
        return pickle.dumps(tuple(staged), protocol=pickle.HIGHEST_PROTOCOL)

    def _pattern(self, context: ProcessContext) -> re.Pattern[str] | None:
        regex = context.get_property(self.ATTRIBUTES_AS_HEADERS_REGEX).value
        return re.compile(regex) if regex else None

    def _decide(
        self,
        context: ProcessContext,
        flowfile: FlowFile,
        context_map: HttpContextMap | None,
        pattern: re.Pattern[str] | None,
    ) -> StagedResponse | None:
        """The response for *flowfile* (body not read yet), or None when it goes to failure."""
        identifier = flowfile.attributes.get(HTTP_CONTEXT_ID)
        if identifier is None:
            context.logger.warning(
                "Failed to respond to HTTP request for %s because FlowFile did not have an "
                "'%s' attribute",
                flowfile,
                HTTP_CONTEXT_ID,
            )
            return None
        status = (
            context.get_property(self.STATUS_CODE).evaluate_attribute_expressions(flowfile).value
            or ""
        )
        if not (status.isascii() and status.isdigit()):
            context.logger.error(
                "Failed to respond to HTTP request for %s because status code was '%s', which "
                "is not a valid number",
                flowfile,
                status,
            )
            return None
        if context_map is not None:
            exchange = context_map.get_response(identifier)
            if exchange is None or not exchange.claim():
                # gone, or claimed by an earlier FlowFile of the same (multipart) request
                _missing(context, flowfile, identifier)
                return None
        headers: dict[str, tuple[str, str]] = {}  # setHeader: the last value of a name wins
        for name in context.dynamic_properties:
            value = context.get_property(name).evaluate_attribute_expressions(flowfile).value
            if value is not None and value.strip():
                headers[name.lower()] = (name, value)
        if pattern is not None:
            for key, value in flowfile.attributes.items():
                if pattern.fullmatch(key) and value.strip():
                    headers[key.lower()] = (key, value)
        for key, (name, value) in list(headers.items()):
            if not _TOKEN.fullmatch(name) or "\r" in value or "\n" in value:
                # a line break would end the header block (response splitting): not sent
                context.logger.warning(
                    "not sending header %r for %s: not a valid header", name, flowfile
                )
                del headers[key]
        return StagedResponse(
            identifier, Answer(int(status), tuple(headers.values())), str(flowfile)
        )

    # --- the driver side ------------------------------------------------------------------------

    def commit(
        self,
        context: ProcessContext,
        messages: Sequence[bytes],
        state: Mapping[str, str],
        jobs: SinkJobs,
    ) -> Mapping[str, str]:
        """Keep the tasks' responses until the transaction is durable; name them in the state."""
        del jobs
        token = uuid.uuid4().hex
        responses = [r for message in messages for r in pickle.loads(message)]
        self.__dict__["_staged"] = (token, responses)
        return {**state, STAGED_KEY: token}

    def publish(self, context: ProcessContext, state: Mapping[str, str]) -> None:
        """Send the responses the committed *state* names; drop anything staged beyond it.

        At start-up (a previous run's state) nothing is staged here: the requests of a dead
        run are gone with it, so there is nothing to answer, and the map learns that this
        process, the driver, is where requests are held.
        """
        token, responses = self.__dict__.pop("_staged", (None, []))
        name = context.get_property(self.HTTP_CONTEXT_MAP).value or ""
        try:
            lookup = context.controller_service
            context_map = _as_map(lookup(name), name)
        except ConfigurationError as error:
            context.logger.error("cannot answer HTTP requests: %s", error)
            return
        context_map.serve_here()
        if token is not None and token == state.get(STAGED_KEY):
            self._send(context, context_map, responses)

    def _send(
        self, context: ProcessContext, context_map: HttpContextMap, responses: list[StagedResponse]
    ) -> None:
        """Hand each response to its held request; a request gone is logged as NiFi does."""
        for response in responses:
            try:
                exchange = context_map.complete(response.identifier)
            except ProcessException as error:
                context.logger.error(
                    "Failed to respond to HTTP request for %s because FlowFile had an '%s' "
                    "attribute of %s but could not find an HTTP Response Object for this "
                    "identifier (%s)",
                    response.flowfile,
                    HTTP_CONTEXT_ID,
                    response.identifier,
                    error,
                )
                continue
            except Exception as error:  # a map of another kind failing: the run goes on
                context.logger.error(
                    "Failed to complete HTTP Transaction for %s: %s", response.flowfile, error
                )
                continue
            answer = response.answer
            if response.prepared:
                answer = attrs.evolve(answer, body=exchange.body or b"")
            elif response.content is not None:
                try:
                    answer = attrs.evolve(answer, body=_held(context, response.content))
                except ConfigurationError as error:  # no content repository here
                    context.logger.error(
                        "Failed to respond to HTTP request for %s: %s", response.flowfile, error
                    )
                    answer = _server_error()
            if exchange.answer(answer):
                context.logger.info(
                    "Successfully responded to HTTP Request for %s with status code %s",
                    response.flowfile,
                    response.answer.status,
                )

    def release(self, context: ProcessContext) -> None:
        """Forget responses staged by a commit that never became durable."""
        del context
        self.__dict__.pop("_staged", None)

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """The test harness, whose commit is durable at once: NiFi's order exactly.

        Each request is claimed, answered and completed before its FlowFile is transferred,
        so a ``complete()`` that fails sends the FlowFile to ``failure`` as NiFi does.
        """
        flowfiles = session.get(HARNESS_WRITE)
        if not flowfiles:
            return
        name = context.get_property(self.HTTP_CONTEXT_MAP).value or ""
        context_map = _as_map(session.controller_service(name), name)
        pattern = self._pattern(context)
        for flowfile in flowfiles:
            started = time.monotonic()
            response = self._decide(context, flowfile, context_map, pattern)
            if response is None:
                session.transfer(flowfile, FAILURE)
                continue
            answer = attrs.evolve(response.answer, body=_body(context, session, flowfile))
            try:
                exchange = context_map.complete(response.identifier)
            except Exception as error:  # NiFi: any failure to complete routes to failure
                context.logger.error(
                    "Failed to complete HTTP Transaction for %s: %s", flowfile, error
                )
                answer.close()
                session.transfer(flowfile, FAILURE)
                continue
            exchange.answer(answer)
            millis = int((time.monotonic() - started) * 1000)
            session.provenance.send(flowfile, transit_uri(flowfile.attributes), duration_ms=millis)
            session.transfer(flowfile, SUCCESS)


def _as_map(service: object, name: str) -> HttpContextMap:
    """*service* as an HTTP context map, or a one-line error naming what it is."""
    if not isinstance(service, HttpContextMap):
        msg = (
            f"HTTP Context Map {name!r} is a {type(service).__name__}, not an HTTP context "
            "map: name a StandardHttpContextMap"
        )
        raise ConfigurationError(msg)
    return service


def _body(
    context: ProcessContext, session: ProcessSession, flowfile: FlowFile
) -> bytes | ContentBody:
    """The FlowFile's content as a response body: a small one read, a large one held."""
    if flowfile.content is None or flowfile.size <= IN_MEMORY_BODY:
        return session.read_bytes(flowfile)
    return _held(context, flowfile.content)


def _held(context: ProcessContext, content: Content) -> ContentBody:
    """*content* as a body streamed from the content repository, held there until sent.

    Never copied and never whole in memory: the request's handler thread reads it a window at
    a time and closes it once sent, which lets its claims go. Held from here on, so the
    content stays readable whatever becomes of its FlowFile after the commit (taken before
    the commit's claimant counts drop: :meth:`HandleHttpResponse.publish` runs first).

    Raises:
        ConfigurationError: this context reads no committed content (not the driver).
    """
    if context.committed_content is None:
        msg = "HandleHttpResponse cannot read committed content here: only on the driver"
        raise ConfigurationError(msg)
    return ContentBody.held(context.committed_content, content)


def _server_error() -> Answer:
    reason = "Internal Server Error"
    return Answer(INTERNAL_SERVER_ERROR, (("Content-Type", "text/plain"),), reason.encode(), reason)


def _too_large(context: ProcessContext, flowfile: FlowFile) -> None:
    context.logger.error(
        "Failed to respond to HTTP request for %s: its content is %s bytes, over the %s "
        "bytes a response staged in a task on a Spark executor carries to the driver; run "
        "HandleHttpResponse where the requests are held (the direct runner) or send a "
        "smaller response",
        flowfile,
        flowfile.size,
        MAX_SHIPPED_BODY,
    )


def _missing(context: ProcessContext, flowfile: object, identifier: str) -> None:
    context.logger.error(
        "Failed to respond to HTTP request for %s because FlowFile had an '%s' attribute of %s "
        "but could not find an HTTP Response Object for this identifier",
        flowfile,
        HTTP_CONTEXT_ID,
        identifier,
    )
