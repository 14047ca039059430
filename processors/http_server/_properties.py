"""Property descriptors the HTTP server processors share, where NiFi's are the same.

NiFi declares these on each processor with the same display name, internal name, default and
allowable values (HTTP Protocols on HandleHttpRequest and ListenHTTP, HTTP Context Map on
HandleHttpRequest and HandleHttpResponse), so flowcore declares each once. The others stay on
their processor: NiFi's differ (Listening Port has a default on HandleHttpRequest only, Client
Authentication has other values), or flowcore's do (the multipart sizes keep ListenHTTP's
pre-rename internal names, and their descriptions say how each processor takes a multipart body).
"""

from __future__ import annotations

from flowcore.properties import AllowableValue, PropertyDescriptor
from flowcore.validators import DATA_SIZE_VALIDATOR

__all__ = ["HTTP_CONTEXT_MAP", "HTTP_PROTOCOL_STRATEGY", "MAX_REQUEST_SIZE"]

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
