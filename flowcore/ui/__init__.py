"""The web UI (``flowcore ui``): a Starlette app over a repository, read-only (docs/ui.md).

:mod:`.server` makes the app, :mod:`.api` answers the JSON API, :mod:`.reading` reads the
repository without its lock, :mod:`.flow_document`, :mod:`.stats` and :mod:`.lineage` shape
what the pages draw; ``static/`` holds the pages (plain ES modules and SVG). Nothing below
the faces imports this package, and importing it does not import Starlette: only the modules
that serve do.
"""

__all__: list[str] = []
