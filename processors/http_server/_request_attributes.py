"""The FlowFile attributes HandleHttpRequest gives a request, as NiFi's servlet request shows it.

Jetty's values are reproduced for a plain HTTP server with its servlet at ``/``: the servlet
path is the request path, the context path is empty, host names are the addresses (no reverse
lookup). Multipart/form-data bodies are cut into their parts (one FlowFile each), with NiFi's
``http.multipart.*`` and ``http.headers.multipart.*`` attributes.
"""

from __future__ import annotations

import locale
from collections.abc import Collection, Mapping
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qsl, unquote, unquote_plus

from processors.http_server._multipart import MULTIPART, Part, parse_multipart
from processors.http_server._request_server import Container

__all__ = [
    "HTTP_CONTEXT_ID",
    "Part",
    "form_fields",
    "multipart_parts",
    "parse_multipart",
    "request_attributes",
    "transit_uri",
]

#: NiFi's HTTPUtils names.
HTTP_CONTEXT_ID = "http.context.identifier"
HTTP_REQUEST_URI = "http.request.uri"
HTTP_REMOTE_HOST = "http.remote.host"
HTTP_LOCAL_NAME = "http.local.name"
HTTP_PORT = "http.server.port"
HTTP_SSL_CERT = "http.subject.dn"


def transit_uri(attributes: Mapping[str, str]) -> str:
    """NiFi's ``HTTPUtils.getURI``: ``http://client@server:port/uri`` (https with a DN)."""
    scheme = "http" if attributes.get(HTTP_SSL_CERT) is None else "https"
    return (
        f"{scheme}://{attributes.get(HTTP_REMOTE_HOST)}@{attributes.get(HTTP_LOCAL_NAME)}:"
        f"{attributes.get(HTTP_PORT)}{attributes.get(HTTP_REQUEST_URI)}"
    )


def _header(container: Container, name: str) -> str | None:
    wanted = name.lower()
    return next((v for k, v in container.headers if k.lower() == wanted), None)


def _charset(content_type: str | None) -> str | None:
    """The ``charset`` parameter of a Content-Type, if any."""
    for param in (content_type or "").split(";")[1:]:
        key, _, value = param.strip().partition("=")
        if key.strip().lower() == "charset" and value.strip():
            return value.strip().strip('"')
    return None


def _server(container: Container) -> tuple[str, int]:
    """The server name and port the client asked for (the Host header), as Jetty gives them."""
    host = _header(container, "Host")
    if not host:
        return container.local[0], container.local[1]
    if host.startswith("["):  # an IPv6 literal
        name, _, rest = host[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    else:
        name, _, port = host.partition(":")
    return name, int(port) if port.isdigit() else (443 if container.secure else 80)


def _locale(container: Container) -> str:
    """Java's ``Locale.toString()`` of the preferred Accept-Language, else the default."""
    accepted = _header(container, "Accept-Language")
    if accepted:
        tag = accepted.split(",", 1)[0].split(";", 1)[0].strip()
        if tag and tag != "*":
            language, _, country = tag.partition("-")
            return f"{language.lower()}_{country.upper()}" if country else language.lower()
    default = locale.getlocale()[0]
    return default if default and default not in ("C", "POSIX") else "en_US"


def request_attributes(
    container: Container,
    *,
    default_charset: str,
    parameters: Collection[str],
    form: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """NiFi's ``saveRequestAttributes`` for one request.

    Args:
        container: the request.
        default_charset: Default URL Character Set (when the request names none).
        parameters: Parameters to Attributes: the parameters made ``http.param.*``.
        form: form fields of the body (multipart text parts, a urlencoded form), by name.
    """
    content_type = _header(container, "Content-Type")
    encoding = _charset(content_type)
    charset = encoding or default_charset
    raw_path, _, query = container.target.partition("?")
    has_query = "?" in container.target
    server_name, server_port = _server(container)
    scheme = "https" if container.secure else "http"
    port_part = "" if server_port == (443 if container.secure else 80) else f":{server_port}"
    attributes: dict[str, str] = {HTTP_CONTEXT_ID: container.identifier}
    optional = {
        "mime.type": content_type,
        "http.servlet.path": unquote(raw_path, encoding=charset, errors="replace"),
        "http.context.path": "",
        "http.method": container.method,
        "http.local.addr": container.local[0],
        HTTP_LOCAL_NAME: container.local[0],
        "http.query.string": unquote_plus(query, encoding=charset, errors="replace")
        if has_query
        else None,
        HTTP_REMOTE_HOST: container.client[0],
        "http.remote.addr": container.client[0],
        "http.protocol": container.version,
        HTTP_REQUEST_URI: raw_path,
        "http.request.url": f"{scheme}://{server_name}{port_part}{raw_path}",
        "http.dispatcher.type": "REQUEST",
        "http.character.encoding": encoding,
        "http.locale": _locale(container),
        "http.server.name": server_name,
        HTTP_PORT: str(server_port),
    }
    attributes.update({k: v for k, v in optional.items() if v is not None})
    attributes.update(container.certificate)  # NiFi's certificate attributes (HTTPS only)
    if parameters:
        values: dict[str, str] = {}
        for key, value in parse_qsl(query, keep_blank_values=True, encoding=charset):
            values.setdefault(key, value)
        for key, value in (form or {}).items():
            values.setdefault(key, value)
        attributes.update({f"http.param.{k}": v for k, v in values.items() if k in parameters})
    attributes.update(_cookies(_header(container, "Cookie")))
    if has_query:
        for pair in query.split("&"):
            key, sep, value = pair.partition("=")
            name = unquote_plus(key, encoding=charset, errors="replace")
            value = unquote_plus(value, encoding=charset, errors="replace") if sep else ""
            attributes[f"http.query.param.{name}"] = value
    seen: set[str] = set()
    for name, value in container.headers:
        if name.lower() not in seen:  # Jetty's getHeader: the first value of a name
            seen.add(name.lower())
            attributes[f"http.headers.{name}"] = value
    return attributes


def _cookies(header: str | None) -> dict[str, str]:
    """``http.cookie.<name>.*`` for each request cookie (a request cookie has no domain/path)."""
    if not header:
        return {}
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except CookieError:
        return {}
    found: dict[str, str] = {}
    for name, morsel in jar.items():
        prefix = f"http.cookie.{name}."
        found[prefix + "value"] = morsel.value
        found[prefix + "max.age"] = "-1"
        found[prefix + "secure"] = "false"
        if name == "JSESSIONID":
            found["http.requested.session.id"] = morsel.value
    return found


def multipart_parts(container: Container) -> list[Part] | None:
    """The parts of a multipart/form-data body, or None when the request is not one.

    Raises:
        ValueError: the body is not a well-formed multipart body (NiFi: 400).
    """
    content_type = _header(container, "Content-Type") or ""
    if MULTIPART not in content_type:
        return None
    return parse_multipart(content_type, container.body)


def form_fields(container: Container, parts: list[Part] | None, charset: str) -> dict[str, str]:
    """The form parameters of the body: multipart text parts, or a urlencoded form."""
    if parts is not None:
        fields: dict[str, str] = {}
        for part in parts:
            if part.name is not None and not part.is_file:
                fields.setdefault(part.name, part.content.decode(charset, errors="replace"))
        return fields
    content_type = (_header(container, "Content-Type") or "").lower()
    if "application/x-www-form-urlencoded" not in content_type:
        return {}
    text = container.body.decode("latin-1")
    fields = {}
    for key, value in parse_qsl(text, keep_blank_values=True, encoding=charset):
        fields.setdefault(key, value)
    return fields
