"""What the HTTP server sources share: a server on the driver that never travels to a task.

ListenHTTP and HandleHttpRequest start their server at the first trigger, on the driver, and
keep it and the requests it holds in the instance. A task gets the processor pickled (its
configuration), never those: each names its driver-only entries in :attr:`driver_state`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from flowcore.processor.kinds import SourceProcessor

__all__ = ["HttpServerSource"]


class HttpServerSource(SourceProcessor):
    """A source whose HTTP server runs on the driver; its requests are its work items."""

    identifies_work: ClassVar[bool] = True
    #: The instance entries only the driver has: the server (``_http_server``) and what it holds.
    driver_state: ClassVar[tuple[str, ...]] = ("_http_server",)

    def __getstate__(self) -> dict[str, Any]:
        """Ship the configuration only: the server and its requests stay on the driver."""
        state = dict(self.__dict__)
        for key in self.driver_state:
            state.pop(key, None)
        return state

    @property
    def port(self) -> int | None:
        """The port the server listens on, once started (Listening Port 0: a free one)."""
        server = self.__dict__.get("_http_server")
        return None if server is None else server.port
