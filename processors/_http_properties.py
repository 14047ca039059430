"""InvokeHTTP's property descriptors and relationships, with NiFi 2.x's names and defaults.

NiFi 2.x names each property by its display name; the 1.x names NiFi still migrates
(``Remote URL``, ``Follow Redirects``, ``Put Response Body In Attribute``, ...) are in
:mod:`flowcore.nifi.migrations`. NiFi 2.x moved the proxy into a Proxy Configuration Service;
flowcore keeps NiFi 1.x's proxy properties (``Proxy Host``, ``Proxy Port``, ...), which NiFi 2
still reads and migrates, since flowcore has no proxy service yet.
"""

from __future__ import annotations

from flowcore.expression._nodes import ResultType
from flowcore.processor.relationship import Relationship
from flowcore.properties import (
    AllowableValue,
    ExpressionLanguageScope,
    PropertyDependency,
    PropertyDescriptor,
)
from flowcore.validators import (
    DATA_SIZE_VALIDATOR,
    INTEGER_VALIDATOR,
    NON_EMPTY_VALIDATOR,
    PORT_VALIDATOR,
    POSITIVE_INTEGER_VALIDATOR,
    REGULAR_EXPRESSION_VALIDATOR,
    TIME_PERIOD_VALIDATOR,
    URL_VALIDATOR,
)

__all__ = ["BODY_METHODS", "PROPERTIES", "RELATIONSHIPS"]

_FF = ExpressionLanguageScope.FLOWFILE_ATTRIBUTES
_TRUE_FALSE = (AllowableValue("true"), AllowableValue("false"))
_TITLE_TRUE_FALSE = (AllowableValue("True"), AllowableValue("False"))
#: The methods InvokeHTTP sends with a body (NiFi's ``HttpMethod.isRequestBodySupported``).
BODY_METHODS = ("PATCH", "POST", "PUT")
_BODY_METHOD = PropertyDependency("HTTP Method", BODY_METHODS)

HTTP_METHOD = PropertyDescriptor(
    "HTTP Method",
    description="HTTP request method (GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS). Arbitrary "
    "methods are also supported. Methods other than POST, PUT and PATCH will be sent without a "
    "message body.",
    required=True,
    default="GET",
    el_scope=_FF,
    expected_type=ResultType.STRING,
)
HTTP_URL = PropertyDescriptor(
    "HTTP URL",
    description="HTTP remote URL including a scheme of http or https, as well as a hostname or "
    "IP address with optional port and path elements. Any encoding of the URL must be done by "
    "the user.",
    required=True,
    el_scope=_FF,
    validators=(URL_VALIDATOR,),
)
HTTP2_DISABLED = PropertyDescriptor(
    "HTTP/2 Disabled",
    description="Disable negotiation of HTTP/2 protocol. flowcore speaks HTTP/1.1 only, so "
    "either value sends HTTP/1.1.",
    required=True,
    default="False",
    allowable_values=_TITLE_TRUE_FALSE,
)
SSL_CONTEXT_SERVICE = PropertyDescriptor(
    "SSL Context Service",
    description="SSL Context Service (a StandardSSLContextService the flow declares, by name) "
    "provides trusted certificates and client certificates for TLS communication.",
    identifies_service=True,
)
SOCKET_CONNECT_TIMEOUT = PropertyDescriptor(
    "Connection Timeout",
    description="Maximum time to wait for initial socket connection to the HTTP URL.",
    required=True,
    default="5 secs",
    validators=(TIME_PERIOD_VALIDATOR,),
)
SOCKET_READ_TIMEOUT = PropertyDescriptor(
    "Socket Read Timeout",
    description="Maximum time to wait for receiving responses from a socket connection to the "
    "HTTP URL.",
    required=True,
    default="15 secs",
    validators=(TIME_PERIOD_VALIDATOR,),
)
SOCKET_WRITE_TIMEOUT = PropertyDescriptor(
    "Socket Write Timeout",
    description="Maximum time to wait for write operations while sending requests from a "
    "socket connection to the HTTP URL.",
    required=True,
    default="15 secs",
    validators=(TIME_PERIOD_VALIDATOR,),
)
SOCKET_IDLE_TIMEOUT = PropertyDescriptor(
    "Socket Idle Timeout",
    description="Maximum time to wait before closing idle connections to the HTTP URL.",
    required=True,
    default="5 mins",
    validators=(TIME_PERIOD_VALIDATOR,),
)
SOCKET_IDLE_CONNECTIONS = PropertyDescriptor(
    "Socket Idle Connections",
    description="Maximum number of idle connections to the HTTP URL.",
    required=True,
    default="5",
    validators=(INTEGER_VALIDATOR,),
)
CONCURRENT_REQUESTS = PropertyDescriptor(
    "Concurrent Requests",
    description="How many requests one task has in flight at once (flowcore only: NiFi runs "
    "one per Concurrent Task). Each takes one pooled connection; the FlowFiles of a trigger "
    "are sent this many at a time and routed in the order they were taken.",
    required=True,
    default="8",
    validators=(POSITIVE_INTEGER_VALIDATOR,),
    flowcore_only=True,
)
PROXY_HOST = PropertyDescriptor(
    "Proxy Host",
    description="The fully qualified hostname or IP address of the proxy server (NiFi 1.x's "
    "property; NiFi 2 moves it into a Proxy Configuration Service).",
    el_scope=ExpressionLanguageScope.ENVIRONMENT,
    validators=(NON_EMPTY_VALIDATOR,),
)
PROXY_PORT = PropertyDescriptor(
    "Proxy Port",
    description="The port of the proxy server",
    el_scope=ExpressionLanguageScope.ENVIRONMENT,
    validators=(PORT_VALIDATOR,),
)
PROXY_TYPE = PropertyDescriptor(
    "Proxy Type",
    description="The type of the proxy we are connecting to: http or https",
    default="http",
    allowable_values=(AllowableValue("http"), AllowableValue("https")),
)
PROXY_USER = PropertyDescriptor(
    "Proxy Username",
    name="invokehttp-proxy-user",
    description="Username to set when authenticating against proxy",
    validators=(NON_EMPTY_VALIDATOR,),
)
PROXY_PASSWORD = PropertyDescriptor(
    "Proxy Password",
    name="invokehttp-proxy-password",
    description="Password to set when authenticating against proxy",
    validators=(NON_EMPTY_VALIDATOR,),
    sensitive=True,
)
REQUEST_OAUTH2_ACCESS_TOKEN_PROVIDER = PropertyDescriptor(
    "Request OAuth2 Access Token Provider",
    description="Enables managed retrieval of OAuth2 Bearer Token applied to HTTP requests using "
    "the Authorization Header. flowcore has no OAuth2 token provider service yet: a flow naming "
    "one is reported as needing it.",
    identifies_service=True,
)
REQUEST_OAUTH2_REFRESH_TOKEN = PropertyDescriptor(
    "OAuth2 Access Token Refresh Strategy",
    description="Specifies which strategy should be used to refresh the OAuth2 Access Token.",
    default="ON_TOKEN_EXPIRATION",
    allowable_values=(
        AllowableValue("ON_TOKEN_EXPIRATION"),
        AllowableValue("ON_UNAUTHORIZED_RESPONSE"),
    ),
    dependencies=(PropertyDependency("Request OAuth2 Access Token Provider"),),
)
REQUEST_USERNAME = PropertyDescriptor(
    "Request Username",
    description="The username provided for authentication of HTTP requests. Encoded using "
    "Base64 for HTTP Basic Authentication as described in RFC 7617.",
    validators=(NON_EMPTY_VALIDATOR,),
)
REQUEST_PASSWORD = PropertyDescriptor(
    "Request Password",
    description="The password provided for authentication of HTTP requests. Encoded using "
    "Base64 for HTTP Basic Authentication as described in RFC 7617.",
    sensitive=True,
)
REQUEST_DIGEST_AUTHENTICATION_ENABLED = PropertyDescriptor(
    "Request Digest Authentication Enabled",
    description="Enable Digest Authentication on HTTP requests with Username and Password "
    "credentials as described in RFC 7616.",
    required=True,
    default="false",
    allowable_values=_TRUE_FALSE,
    dependencies=(PropertyDependency("Request Username"),),
)
REQUEST_FAILURE_PENALIZATION_ENABLED = PropertyDescriptor(
    "Request Failure Penalization Enabled",
    description="Enable penalization of request FlowFiles when receiving HTTP response with a "
    "status code between 400 and 499.",
    default="false",
    allowable_values=_TRUE_FALSE,
)
REQUEST_BODY_ENABLED = PropertyDescriptor(
    "Request Body Enabled",
    description="Enable sending HTTP request body for PATCH, POST, or PUT methods.",
    default="true",
    allowable_values=_TRUE_FALSE,
    dependencies=(_BODY_METHOD,),
)
REQUEST_FORM_DATA_NAME = PropertyDescriptor(
    "Request Multipart Form-Data Name",
    description="Enable sending HTTP request body formatted using multipart/form-data and using "
    "the form name configured. flowcore does not send multipart form data yet: setting it is "
    "reported as invalid.",
    el_scope=_FF,
    dependencies=(PropertyDependency("Request Body Enabled", ("true",)),),
)
REQUEST_FORM_DATA_FILENAME_ENABLED = PropertyDescriptor(
    "Request Multipart Form-Data Filename Enabled",
    description="Enable sending the FlowFile filename attribute as the filename parameter in the "
    "Content-Disposition Header for multipart/form-data HTTP requests.",
    default="true",
    allowable_values=_TRUE_FALSE,
    dependencies=(PropertyDependency("Request Multipart Form-Data Name"),),
)
REQUEST_CHUNKED_TRANSFER_ENCODING_ENABLED = PropertyDescriptor(
    "Request Chunked Transfer-Encoding Enabled",
    description="Enable sending HTTP requests with the Transfer-Encoding Header set to chunked, "
    "and disable sending the Content-Length Header.",
    required=True,
    default="false",
    allowable_values=_TRUE_FALSE,
    dependencies=(_BODY_METHOD,),
)
REQUEST_CONTENT_ENCODING = PropertyDescriptor(
    "Request Content-Encoding",
    description="HTTP Content-Encoding applied to request body during transmission. The "
    "receiving server must support the selected encoding to avoid request failures.",
    required=True,
    default="DISABLED",
    allowable_values=(AllowableValue("DISABLED"), AllowableValue("GZIP")),
    dependencies=(_BODY_METHOD,),
)
REQUEST_CONTENT_TYPE = PropertyDescriptor(
    "Request Content-Type",
    description="HTTP Content-Type Header applied to when sending an HTTP request body for "
    "PATCH, POST, or PUT methods. The Content-Type defaults to application/octet-stream when "
    "not configured.",
    required=True,
    default="${mime.type}",
    el_scope=_FF,
    expected_type=ResultType.STRING,
    dependencies=(_BODY_METHOD,),
)
REQUEST_DATE_HEADER_ENABLED = PropertyDescriptor(
    "Request Date Header Enabled",
    description="Enable sending HTTP Date Header on HTTP requests as described in RFC 7231 "
    "Section 7.1.1.2.",
    required=True,
    default="True",
    allowable_values=_TITLE_TRUE_FALSE,
)
REQUEST_HEADER_ATTRIBUTES_PATTERN = PropertyDescriptor(
    "Request Header Attributes Pattern",
    description="Regular expression that defines which FlowFile attributes to send as HTTP "
    "headers in the request. If not defined, no attributes are sent as headers. Dynamic "
    "properties will be always be sent as headers.",
    validators=(REGULAR_EXPRESSION_VALIDATOR,),
)
REQUEST_USER_AGENT = PropertyDescriptor(
    "Request User-Agent",
    description="HTTP User-Agent Header applied to requests.",
    el_scope=_FF,
    validators=(NON_EMPTY_VALIDATOR,),
)
RESPONSE_BODY_ATTRIBUTE_NAME = PropertyDescriptor(
    "Response Body Attribute Name",
    description="FlowFile attribute name used to write an HTTP response body for FlowFiles "
    "transferred to the Original relationship.",
    el_scope=_FF,
    expected_type=ResultType.STRING,
)
RESPONSE_BODY_ATTRIBUTE_SIZE = PropertyDescriptor(
    "Response Body Attribute Size",
    description="Maximum size in bytes applied when writing an HTTP response body to a FlowFile "
    "attribute. Attributes exceeding the maximum will be truncated.",
    required=True,
    default="256",
    validators=(POSITIVE_INTEGER_VALIDATOR,),
    dependencies=(PropertyDependency("Response Body Attribute Name"),),
)
RESPONSE_BODY_IGNORED = PropertyDescriptor(
    "Response Body Ignored",
    description="Disable writing HTTP response FlowFiles to Response relationship",
    required=True,
    default="false",
    allowable_values=_TRUE_FALSE,
)
RESPONSE_CACHE_ENABLED = PropertyDescriptor(
    "Response Cache Enabled",
    description="Enable HTTP response caching described in RFC 7234. flowcore keeps no "
    "response cache: with true, every request still goes to the server (a warning says so).",
    required=True,
    default="false",
    allowable_values=_TRUE_FALSE,
)
RESPONSE_CACHE_SIZE = PropertyDescriptor(
    "Response Cache Size",
    description="Maximum size of HTTP response cache in bytes.",
    required=True,
    default="10MB",
    validators=(DATA_SIZE_VALIDATOR,),
    dependencies=(PropertyDependency("Response Cache Enabled", ("true",)),),
)
RESPONSE_COOKIE_STRATEGY = PropertyDescriptor(
    "Response Cookie Strategy",
    description="Strategy for accepting and persisting HTTP cookies. Accepting cookies enables "
    "persistence across multiple requests (of one task).",
    required=True,
    default="DISABLED",
    allowable_values=(AllowableValue("DISABLED"), AllowableValue("ACCEPT_ALL")),
)
RESPONSE_GENERATION_REQUIRED = PropertyDescriptor(
    "Response Generation Required",
    description="Enable generation and transfer of a FlowFile to the Response relationship "
    "regardless of HTTP response status code received.",
    default="false",
    allowable_values=_TRUE_FALSE,
)
RESPONSE_FLOW_FILE_NAMING_STRATEGY = PropertyDescriptor(
    "Response FlowFile Naming Strategy",
    description="Determines the strategy used for setting the filename attribute of FlowFiles "
    "transferred to the Response relationship.",
    required=True,
    default="RANDOM",
    allowable_values=(
        AllowableValue("RANDOM", "RANDOM", "FlowFile filename attribute will be a random value."),
        AllowableValue(
            "URL_PATH",
            "URL_PATH",
            "FlowFile filename attribute will be extracted from the remote URL path. The "
            "attribute may contain URL encoded characters. If the path doesn't exist, the "
            "attribute will be a random value.",
        ),
    ),
)
RESPONSE_HEADER_REQUEST_ATTRIBUTES_ENABLED = PropertyDescriptor(
    "Response Header Request Attributes Enabled",
    description="Enable adding HTTP response headers as attributes to FlowFiles transferred to "
    "the Original, Retry or No Retry relationships.",
    default="false",
    allowable_values=_TRUE_FALSE,
)
RESPONSE_HEADER_REQUEST_ATTRIBUTES_PREFIX = PropertyDescriptor(
    "Response Header Request Attributes Prefix",
    description="Prefix to HTTP response headers when included as attributes to FlowFiles "
    "transferred to the Original, Retry or No Retry relationships.",
    el_scope=_FF,
    validators=(NON_EMPTY_VALIDATOR,),
    dependencies=(PropertyDependency("Response Header Request Attributes Enabled", ("true",)),),
)
RESPONSE_REDIRECTS_ENABLED = PropertyDescriptor(
    "Response Redirects Enabled",
    description="Enable following HTTP redirects sent with HTTP 300 series responses as "
    "described in RFC 7231 Section 6.4.",
    required=True,
    default="True",
    allowable_values=_TITLE_TRUE_FALSE,
)

PROPERTIES = (
    HTTP_METHOD,
    HTTP_URL,
    HTTP2_DISABLED,
    SSL_CONTEXT_SERVICE,
    SOCKET_CONNECT_TIMEOUT,
    SOCKET_READ_TIMEOUT,
    SOCKET_WRITE_TIMEOUT,
    SOCKET_IDLE_TIMEOUT,
    SOCKET_IDLE_CONNECTIONS,
    CONCURRENT_REQUESTS,
    PROXY_HOST,
    PROXY_PORT,
    PROXY_TYPE,
    PROXY_USER,
    PROXY_PASSWORD,
    REQUEST_OAUTH2_ACCESS_TOKEN_PROVIDER,
    REQUEST_OAUTH2_REFRESH_TOKEN,
    REQUEST_USERNAME,
    REQUEST_PASSWORD,
    REQUEST_DIGEST_AUTHENTICATION_ENABLED,
    REQUEST_FAILURE_PENALIZATION_ENABLED,
    REQUEST_BODY_ENABLED,
    REQUEST_FORM_DATA_NAME,
    REQUEST_FORM_DATA_FILENAME_ENABLED,
    REQUEST_CHUNKED_TRANSFER_ENCODING_ENABLED,
    REQUEST_CONTENT_ENCODING,
    REQUEST_CONTENT_TYPE,
    REQUEST_DATE_HEADER_ENABLED,
    REQUEST_HEADER_ATTRIBUTES_PATTERN,
    REQUEST_USER_AGENT,
    RESPONSE_BODY_ATTRIBUTE_NAME,
    RESPONSE_BODY_ATTRIBUTE_SIZE,
    RESPONSE_BODY_IGNORED,
    RESPONSE_CACHE_ENABLED,
    RESPONSE_CACHE_SIZE,
    RESPONSE_COOKIE_STRATEGY,
    RESPONSE_GENERATION_REQUIRED,
    RESPONSE_FLOW_FILE_NAMING_STRATEGY,
    RESPONSE_HEADER_REQUEST_ATTRIBUTES_ENABLED,
    RESPONSE_HEADER_REQUEST_ATTRIBUTES_PREFIX,
    RESPONSE_REDIRECTS_ENABLED,
)

ORIGINAL = Relationship(
    "Original",
    "Request FlowFiles transferred when receiving HTTP responses with a status code between "
    "200 and 299.",
)
RESPONSE = Relationship(
    "Response",
    "Response FlowFiles transferred when receiving HTTP responses with a status code between "
    "200 and 299. Enabling [Response Generation Required] sends FlowFiles to the Response "
    "relationship as well, regardless of status code received.",
)
RETRY = Relationship(
    "Retry",
    "Request FlowFiles transferred when receiving HTTP responses with a status code between "
    "500 and 599.",
)
NO_RETRY = Relationship(
    "No Retry",
    "Request FlowFiles transferred when receiving HTTP responses with a status code between "
    "400 an 499.",
)
FAILURE = Relationship(
    "Failure", "Request FlowFiles transferred when receiving socket communication errors."
)
RELATIONSHIPS = (ORIGINAL, RESPONSE, RETRY, NO_RETRY, FAILURE)
