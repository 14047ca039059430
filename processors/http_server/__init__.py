"""HTTP servers in a flow: ListenHTTP, HandleHttpRequest/HandleHttpResponse and their context map.

Requests are answered only once their FlowFiles are durable (see ``docs/http-servers.md``).
"""

from processors.http_server.context_map import StandardHttpContextMap
from processors.http_server.handle_http_request import HandleHttpRequest
from processors.http_server.handle_http_response import HandleHttpResponse
from processors.http_server.listen_http import ListenHTTP

__all__ = ["HandleHttpRequest", "HandleHttpResponse", "ListenHTTP", "StandardHttpContextMap"]
