"""HTTP servers in a flow: ListenHTTP (requests answered once their FlowFiles are durable)."""

from processors.http_server.listen_http import ListenHTTP

__all__ = ["ListenHTTP"]
