"""The web UI (``flowcore ui``): a Starlette app over a flow and its repository (docs/ui.md).

:mod:`.server` makes the app, :mod:`.api` answers the reading JSON API and :mod:`.edit_api` the
writing one, :mod:`.reading` reads the repository without its lock, :mod:`.flow_document`,
:mod:`.nifi_groups`, :mod:`.services`, :mod:`.stats` and :mod:`.lineage` shape what the pages
draw, :mod:`.editing` holds a NiFi flow definition's edits until saved and :mod:`.control` runs
``flowcore run``; ``static/`` holds the pages (plain ES modules and SVG). Nothing below the
faces imports this package, and importing it does not import Starlette: only the modules that
serve do.
"""

__all__: list[str] = []
