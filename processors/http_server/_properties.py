"""Property descriptors the HTTP server processors share, where NiFi's are the same.

NiFi declares these on each processor with the same name, default and allowable values (HTTP
Protocols, Request Header Maximum Size and the multipart sizes on HandleHttpRequest and
ListenHTTP, HTTP Context Map on HandleHttpRequest and HandleHttpResponse), so flowcore declares
each once. The others stay on their processor: NiFi's differ (Listening Port has a default on
HandleHttpRequest only, Client Authentication has other values). The multipart sizes keep NiFi
1.x's internal names as aliases: NiFi 2 renamed them on both processors.
"""

from __future__ import annotations

from flowcore.properties import AllowableValue, PropertyDescriptor
from flowcore.validators import DATA_SIZE_VALIDATOR

__all__ = [
    "HTTP_CONTEXT_MAP",
    "HTTP_PROTOCOL_STRATEGY",
    "MAX_REQUEST_SIZE",
    "MULTIPART_READ_BUFFER_SIZE",
    "MULTIPART_REQUEST_MAX_SIZE",
    "REQUEST_HEADER_MAX_SIZE",
]

#: NiFi's ``HttpProtocolStrategy`` (HandleHttpRequest, ListenHTTP): it only matters with TLS.
HTTP_PROTOCOL_STRATEGY = PropertyDescriptor(
    "HTTP Protocols",
    description="HTTP Protocols supported for Application Layer Protocol Negotiation with TLS",
    required=True,
    default="HTTP_1_1",
    allowable_values=(
        AllowableValue("HTTP_1_1", "http/1.1"),
        AllowableValue("H2_HTTP_1_1", "h2 http/1.1"),
        AllowableValue("H2", "h2"),
    ),
    dependencies=("SSL Context Service",),
)
#: The map HandleHttpRequest holds requests in and HandleHttpResponse answers them from.
HTTP_CONTEXT_MAP = PropertyDescriptor(
    "HTTP Context Map",
    description="The HTTP Context Map Controller Service to use for caching the HTTP "
    "Request Information",
    required=True,
    identifies_service="HttpContextMap",
)
#: Jetty's request header size in NiFi (HandleHttpRequest, ListenHTTP): past it, 431.
REQUEST_HEADER_MAX_SIZE = PropertyDescriptor(
    "Request Header Maximum Size",
    description="The maximum supported size of HTTP headers in requests sent to this processor",
    required=True,
    default="8 KB",
    validators=(DATA_SIZE_VALIDATOR,),
)
#: NiFi 1.x named it ``multipart-request-max-size`` (both processors); NiFi 2 migrates that.
MULTIPART_REQUEST_MAX_SIZE = PropertyDescriptor(
    "Multipart Request Max Size",
    description="The max size of the request. Only applies for requests with Content-Type: "
    "multipart/form-data, and is used to prevent denial of service type of attacks, to prevent "
    "filling up the heap or disk space",
    required=True,
    default="1 MB",
    validators=(DATA_SIZE_VALIDATOR,),
    aliases=("multipart-request-max-size",),
)
#: NiFi 1.x named it ``multipart-read-buffer-size``; flowcore holds a request in memory until
#: its commit whatever it says (Max Request Body Size bounds that).
MULTIPART_READ_BUFFER_SIZE = PropertyDescriptor(
    "Multipart Read Buffer Size",
    description="The threshold size, at which the contents of an incoming file would be written "
    "to disk. Only applies for requests with Content-Type: multipart/form-data. It is used to "
    "prevent denial of service type of attacks, to prevent filling up the heap or disk space.",
    required=True,
    default="512 KB",
    validators=(DATA_SIZE_VALIDATOR,),
    aliases=("multipart-read-buffer-size",),
)
#: flowcore's bound on a request body (HandleHttpRequest, ListenHTTP): NiFi streams bodies to
#: the content repository, flowcore holds each in memory until its FlowFile is committed.
MAX_REQUEST_SIZE = PropertyDescriptor(
    "Max Request Body Size",
    description="The largest request body taken; a larger one is refused with 413 before "
    "it is read (flowcore's bound: a request is held in memory until its commit)",
    required=True,
    default="16 MB",
    validators=(DATA_SIZE_VALIDATOR,),
    flowcore_only=True,
)
