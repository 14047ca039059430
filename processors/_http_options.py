"""InvokeHTTP's properties read once per task: what every request and response of it uses.

A task reads each property once, when its client opens, instead of once per FlowFile:
literal values are parsed here; Expression Language values are kept as property values and
evaluated per FlowFile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import httpx

import processors._http_properties as p
from flowcore.patterns import FlowPattern, compile_pattern
from flowcore.properties import PropertyValue

if TYPE_CHECKING:
    from flowcore.processor.context import ProcessContext

__all__ = ["RequestOptions"]


@attrs.frozen
class RequestOptions:
    """The request and response settings of one task (see the properties of the same names).

    Attributes:
        url, method, content_type, user_agent: the per-FlowFile (EL) properties.
        headers: the dynamic properties, by header name.
        body_attribute: ``Response Body Attribute Name`` (unset: its ``is_set()`` is false).
        header_prefix: ``Response Header Request Attributes Prefix``.
    """

    url: PropertyValue
    method: PropertyValue
    content_type: PropertyValue
    user_agent: PropertyValue
    headers: tuple[tuple[str, PropertyValue], ...]
    body_attribute: PropertyValue
    header_prefix: PropertyValue
    date_header: bool
    attributes_pattern: FlowPattern | None
    body_enabled: bool
    chunked: bool
    gzip: bool
    auth: httpx.Auth | None = attrs.field(repr=False)
    body_attribute_size: int
    body_ignored: bool
    always_output: bool
    url_path_names: bool
    headers_to_request: bool
    penalize_no_retry: bool

    @classmethod
    def from_context(cls, context: ProcessContext) -> RequestOptions:
        """Read the properties of *context* once."""

        def value(descriptor: object) -> PropertyValue:
            return context.get_property(descriptor)  # type: ignore[arg-type]

        def flag(descriptor: object) -> bool:
            return bool(value(descriptor).as_boolean())

        pattern = (value(p.REQUEST_HEADER_ATTRIBUTES_PATTERN).value or "").strip()
        body_attribute = value(p.RESPONSE_BODY_ATTRIBUTE_NAME)
        return cls(
            url=value(p.HTTP_URL),
            method=value(p.HTTP_METHOD),
            content_type=value(p.REQUEST_CONTENT_TYPE),
            user_agent=value(p.REQUEST_USER_AGENT),
            headers=tuple((name, value(name)) for name in context.dynamic_properties),
            body_attribute=body_attribute,
            header_prefix=value(p.RESPONSE_HEADER_REQUEST_ATTRIBUTES_PREFIX),
            date_header=flag(p.REQUEST_DATE_HEADER_ENABLED),
            attributes_pattern=compile_pattern(pattern) if pattern else None,
            body_enabled=value(p.REQUEST_BODY_ENABLED).as_boolean() is not False,
            chunked=flag(p.REQUEST_CHUNKED_TRANSFER_ENCODING_ENABLED),
            gzip=value(p.REQUEST_CONTENT_ENCODING).value == "GZIP",
            auth=_auth(context),
            body_attribute_size=(
                value(p.RESPONSE_BODY_ATTRIBUTE_SIZE).as_integer() or 256
                if body_attribute.is_set()
                else 256  # NiFi's size for a failed response's body, without the property
            ),
            body_ignored=flag(p.RESPONSE_BODY_IGNORED),
            always_output=flag(p.RESPONSE_GENERATION_REQUIRED),
            url_path_names=value(p.RESPONSE_FLOW_FILE_NAMING_STRATEGY).value == "URL_PATH",
            headers_to_request=flag(p.RESPONSE_HEADER_REQUEST_ATTRIBUTES_ENABLED),
            penalize_no_retry=flag(p.REQUEST_FAILURE_PENALIZATION_ENABLED),
        )


def _auth(context: ProcessContext) -> httpx.Auth | None:
    """Basic or digest authentication from Request Username and Password, or None."""
    user = (context.get_property(p.REQUEST_USERNAME).value or "").strip()
    if not user:
        return None
    secret = (context.get_property(p.REQUEST_PASSWORD).value or "").strip()
    if context.get_property(p.REQUEST_DIGEST_AUTHENTICATION_ENABLED).as_boolean():
        return httpx.DigestAuth(user, secret)
    return httpx.BasicAuth(user, secret)
