"""Configure and save: edits to a NiFi flow definition, held in the server until saved.

The editor works on the NiFi 2.x JSON itself, not on flowcore's flow: NiFi's identifiers,
positions, bundles, and everything flowcore does not read stay as they were, and a sensitive
property the browser never saw (it shows "Sensitive value set") keeps its value or parameter
reference unless an edit gives a new one. Each edit is checked by importing the edited
document as ``flowcore run`` would (:meth:`flowcore.builder.Flow.from_nifi`, strict, then the
flow's validation): every problem at once, as ``flowcore run`` reports them. An edit with
problems is kept, as NiFi keeps an invalid processor (it shows invalid, and ``flowcore run``
would refuse it); saving writes the file atomically (a temporary file beside it, renamed).
A property is sensitive when the file's descriptor or flowcore's class for the component's
NiFi type says so (:mod:`flowcore.ui.known_properties`): a property set here gets flowcore's
descriptor, so a secret typed into a definition that lacked the descriptor is never marked
dynamic and non-sensitive (and so never listed in clear afterwards).

Editing the FILE is always allowed, even while a run holds the repository: as a NiFi versioned
flow, the change takes effect at the next run.
"""

from __future__ import annotations

import copy
import gzip
import json
import math
import os
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from flowcore.errors import FlowcoreError
from flowcore.nifi.exporting import PRIORITIZER_PACKAGE
from flowcore.ui.flow_document import SENSITIVE_VALUE_SET, flow_document
from flowcore.ui.known_properties import KnownProperties, is_sensitive, known_properties
from flowcore.ui.nifi_groups import COMPONENT_FIELDS, nifi_groups

__all__ = ["EditError", "FlowEditor", "UnknownComponentError"]

#: Scheduling fields a processor edit may set, NiFi's JSON names.
SCHEDULING = (
    "schedulingStrategy",
    "schedulingPeriod",
    "concurrentlySchedulableTaskCount",
    "penaltyDuration",
    "yieldDuration",
    "runDurationMillis",
    "bulletinLevel",
)
#: Queue settings a connection edit may set, NiFi's JSON names.
QUEUE_SETTINGS = (
    "backPressureObjectThreshold",
    "backPressureDataSizeThreshold",
    "flowFileExpiration",
    "prioritizers",
    "name",
)


class EditError(FlowcoreError, ValueError):
    """An edit the flow definition cannot take (a wrong field, a read-only flow)."""


class UnknownComponentError(FlowcoreError, LookupError):
    """An edit names a processor, service or connection the flow does not have."""


def _groups(group: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield group
    for child in group.get("processGroups") or ():
        yield from _groups(child)


def _read(path: Path) -> dict[str, Any]:
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    document = json.loads(raw)
    if not isinstance(document, dict) or not isinstance(document.get("flowContents"), dict):
        msg = f"{path} is no NiFi 2.x flow definition (no flowContents): it cannot be edited here"
        raise EditError(msg)
    return document


def _property_name(
    shown: str,
    properties: Mapping[str, Any],
    descriptors: Mapping[str, Any],
    known: KnownProperties,
) -> str:
    """The name the file keeps property *shown* (a name or display name) under.

    The file's descriptor's name first; else flowcore's declared property, under the spelling
    the file already uses or NiFi's name; else *shown* (a dynamic property).
    """
    if shown in descriptors:
        return shown
    by_display = {d.get("displayName", n): n for n, d in descriptors.items()}
    if shown in by_display:
        return by_display[shown]
    ours = known.find(shown)
    if ours is None or ours.dynamic:
        return shown
    return next((n for n in ours.names() if n in properties), ours.name)


def _set_properties(item: dict[str, Any], given: Mapping[str, Any], *, service: bool) -> None:
    """Set *given* properties on *item* (NiFi JSON), its descriptors made from flowcore's.

    A sensitive property (as the file or flowcore says) given as "Sensitive value set" is
    untouched; one the file has no descriptor for gets flowcore's (sensitive stays sensitive),
    and a file's descriptor that calls a property flowcore knows as sensitive non-sensitive is
    corrected, so the value is masked from then on.
    """
    properties = item.setdefault("properties", {})
    descriptors = item.setdefault("propertyDescriptors", {})
    known = known_properties(item, service=service)
    for shown, value in given.items():
        name = _property_name(str(shown), properties, descriptors, known)
        sensitive = is_sensitive(item, name, service=service, known=known)
        if sensitive and value == SENSITIVE_VALUE_SET:
            continue  # untouched: keeps its value or parameter reference
        properties[name] = value if value is None or isinstance(value, str) else str(value)
        descriptor = descriptors.get(name)
        if descriptor is None:
            ours = known.find(name)
            descriptors[name] = {
                "name": name,
                "displayName": ours.display_name if ours is not None and not ours.dynamic else name,
                "identifiesControllerService": bool(ours is not None and ours.identifies_service),
                "sensitive": sensitive,
                "dynamic": ours is None or ours.dynamic,
            }
        elif sensitive and not descriptor.get("sensitive"):
            descriptor["sensitive"] = True


def _mask_file_sensitive(document: dict[str, Any], root: dict[str, Any]) -> None:
    """Mask in *document* what the file's descriptors call sensitive and flowcore does not.

    The canvas masks by flowcore's descriptors; a NiFi processor's dynamic property the file
    marks sensitive (NiFi 2.x has them) is masked too: either source is enough.
    """
    marked: dict[str, dict[str, bool]] = {}  # processor id -> spelling -> has a value
    for group in _groups(root):
        for processor in group.get("processors") or ():
            values = processor.get("properties") or {}
            for name, descriptor in (processor.get("propertyDescriptors") or {}).items():
                if descriptor.get("sensitive"):
                    held = values.get(name) is not None
                    for spelling in (name, str(descriptor.get("displayName") or name)):
                        marked.setdefault(str(processor.get("identifier")), {})[spelling] = held
    for component in document["components"]:
        spellings = marked.get(component["id"]) or {}
        for row in component.get("properties") or ():
            if row["name"] in spellings and not row["sensitive"]:
                shown = SENSITIVE_VALUE_SET if spellings[row["name"]] else None
                row.update(sensitive=True, default=None, value=shown)


def _position(where: Any) -> dict[str, float]:
    """NiFi's ``position`` from *where* ({"x", "y"}): finite numbers, as NiFi's JSON holds.

    Raises:
        EditError: x or y is missing, not a number, or not finite ("nan", 1e999).
    """
    try:
        x, y = float(where["x"]), float(where["y"])
    except (KeyError, TypeError, ValueError):
        x = y = math.nan
    if not (math.isfinite(x) and math.isfinite(y)):
        msg = 'a position needs finite numbers x and y: {"x": 120, "y": 80}'
        raise EditError(msg)
    return {"x": x, "y": y}


class FlowEditor:
    """A NiFi flow definition's pending edits, its validation and its save.

    Thread-safe: the API's handlers run in worker threads.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self.document = _read(self.path)
        self.dirty = False

    @property
    def root(self) -> dict[str, Any]:
        """The root process group."""
        return self.document["flowContents"]

    def _find(self, field: str, identifier: str, what: str) -> tuple[dict[str, Any], dict]:
        for group in _groups(self.root):
            for item in group.get(field) or ():
                if item.get("identifier") == identifier:
                    return group, item
        msg = f"the flow has no {what} with id {identifier!r}"
        raise UnknownComponentError(msg)

    # -- checking -------------------------------------------------------------------------

    def problems(self) -> list[str]:
        """Every problem of the edited flow, as ``flowcore run`` reports them (none: [])."""
        from flowcore.builder import Flow  # noqa: PLC0415
        from flowcore.definition.validation import problems_of  # noqa: PLC0415

        try:
            flow = Flow.from_nifi(copy.deepcopy(self.document), strict=True)
        except FlowcoreError as error:
            found = getattr(error, "problems", None)
            return [str(p) for p in found] if found else [str(error).splitlines()[0]]
        runnable = flow.runnable() if hasattr(flow, "runnable") else flow
        return [str(p) for p in problems_of(runnable)]

    def flow_document(self) -> dict[str, Any]:
        """``/api/flow``'s document for the edited flow (invalid processors stopped)."""
        from flowcore.builder import Flow  # noqa: PLC0415

        flow = Flow.from_nifi(copy.deepcopy(self.document))
        runnable = flow.runnable() if hasattr(flow, "runnable") else flow
        document = flow_document(runnable, groups=nifi_groups(self.root))
        _mask_file_sensitive(document, self.root)
        stopped = flow.stopped
        for component in document["components"]:
            if component["name"] in stopped:  # invalid: left stopped, as NiFi does
                component["state"] = "INVALID"
                component["validation_errors"] = list(stopped[component["name"]])
        document["editable"] = True
        document["dirty"] = self.dirty
        document["problems"] = self.problems()
        return document

    # -- edits ----------------------------------------------------------------------------

    def update_processor(self, identifier: str, body: Mapping[str, Any]) -> None:
        """Set a processor's name, comments, properties, scheduling and auto-termination.

        ``properties`` maps a property's name (or display name) to a value; ``None`` removes
        it (back to its default, as NiFi's "empty string set" is ``""``). A sensitive
        property given as "Sensitive value set" keeps what it had.

        Raises:
            UnknownComponentError: no processor has *identifier*.
            EditError: a field the editor does not know.
        """
        with self._lock:
            _, processor = self._find("processors", identifier, "processor")
            self._apply_component(processor, body, scheduling=True)
            self.dirty = True

    def update_service(self, identifier: str, body: Mapping[str, Any]) -> None:
        """Set a controller service's name, comments and properties (as a processor's)."""
        with self._lock:
            _, service = self._find("controllerServices", identifier, "controller service")
            self._apply_component(service, body, scheduling=False)
            self.dirty = True

    def _apply_component(
        self, item: dict[str, Any], body: Mapping[str, Any], *, scheduling: bool
    ) -> None:
        allowed = {"name", "comments", "properties", "autoTerminatedRelationships", "state"}
        if scheduling:
            allowed |= set(SCHEDULING)
        unknown = sorted(set(body) - allowed)
        if unknown:
            msg = f"cannot set {', '.join(unknown)}; settable: {', '.join(sorted(allowed))}"
            raise EditError(msg)
        if "state" in body and body["state"] not in ("ENABLED", "DISABLED"):
            msg = f"state {body['state']!r}: use ENABLED or DISABLED"
            raise EditError(msg)  # checked first: a refused edit changes nothing
        for field in ("name", "comments", *SCHEDULING):
            if field in body:
                item[field] = body[field]
        if "autoTerminatedRelationships" in body:
            item["autoTerminatedRelationships"] = sorted(body["autoTerminatedRelationships"])
        if "state" in body:
            item["scheduledState"] = body["state"]
        if "properties" in body:
            if not isinstance(body["properties"], Mapping):
                msg = 'properties must be an object: {"Property Name": "value"}'
                raise EditError(msg)
            _set_properties(item, body["properties"], service=not scheduling)

    def update_connection(self, identifier: str, body: Mapping[str, Any]) -> None:
        """Set a connection's queue settings (back pressure, expiration, prioritizers, name)."""
        with self._lock:
            _, connection = self._find("connections", identifier, "connection")
            allowed = {*QUEUE_SETTINGS, "selectedRelationships"}
            unknown = sorted(set(body) - allowed)
            if unknown:
                msg = f"cannot set {', '.join(unknown)}; settable: {', '.join(sorted(allowed))}"
                raise EditError(msg)
            changes = dict(body)
            if "prioritizers" in changes:  # the canvas shows class names; NiFi keeps them whole
                changes["prioritizers"] = [
                    p if "." in p else f"{PRIORITIZER_PACKAGE}.{p}"
                    for p in map(str, changes["prioritizers"])
                ]
            connection.update(changes)
            self.dirty = True

    def add_processor(self, body: Mapping[str, Any]) -> str:
        """Add a processor of a type from the palette; its id (a new UUID).

        Raises:
            EditError: no ``type``, or a type flowcore does not have.
        """
        from flowcore.nifi.types import nifi_type_of  # noqa: PLC0415
        from flowcore.registry import available_processors  # noqa: PLC0415

        kind = body.get("type")
        available = available_processors()
        if not isinstance(kind, str) or kind not in available:
            msg = f"type {kind!r} is not an available processor (GET /api/palette lists them)"
            raise EditError(msg)
        identifier = str(uuid.uuid4())
        nifi_type = nifi_type_of(kind)
        where = _position(body.get("position") or {"x": 0.0, "y": 0.0})
        with self._lock:
            group = self._group(body.get("group"))
            group.setdefault("processors", []).append(
                {
                    "identifier": identifier,
                    "name": str(body.get("name") or kind),
                    "comments": "",
                    "position": where,
                    "type": nifi_type.type,
                    "bundle": nifi_type.bundle.to_json(),
                    "properties": {},
                    "propertyDescriptors": {},
                    "schedulingPeriod": "0 sec",
                    "schedulingStrategy": "TIMER_DRIVEN",
                    "penaltyDuration": "30 sec",
                    "yieldDuration": "1 sec",
                    "bulletinLevel": "WARN",
                    "runDurationMillis": 0,
                    "concurrentlySchedulableTaskCount": 1,
                    "autoTerminatedRelationships": [],
                    "scheduledState": "ENABLED",
                    "componentType": "PROCESSOR",
                    "groupIdentifier": group.get("identifier"),
                }
            )
            self.dirty = True
        return identifier

    def _group(self, identifier: Any) -> dict[str, Any]:
        """The group *identifier* names (None or "": the root)."""
        if not identifier:
            return self.root
        for group in _groups(self.root):
            if group.get("identifier") == identifier:
                return group
        msg = f"the flow has no process group with id {identifier!r}"
        raise UnknownComponentError(msg)

    def move(self, identifier: str, body: Mapping[str, Any]) -> None:
        """Move a processor, port, funnel or process group: NiFi's ``position`` in its group.

        Raises:
            UnknownComponentError: nothing on a canvas has *identifier*.
            EditError: ``x`` and ``y`` are not finite numbers (NiFi's JSON holds no NaN).
        """
        where = _position(body)
        with self._lock:
            for group in _groups(self.root):
                for field in (*COMPONENT_FIELDS, "processGroups", "labels"):
                    for item in group.get(field) or ():
                        if item.get("identifier") == identifier:
                            item["position"] = where
                            self.dirty = True
                            return
        msg = f"the flow has nothing on its canvas with id {identifier!r}"
        raise UnknownComponentError(msg)

    def delete_processor(self, identifier: str) -> None:
        """Remove a processor; as NiFi, refused while connections still touch it."""
        with self._lock:
            group, processor = self._find("processors", identifier, "processor")
            touching = [
                c["identifier"]
                for g in _groups(self.root)
                for c in g.get("connections") or ()
                if identifier in (c["source"]["id"], c["destination"]["id"])
            ]
            if touching:
                msg = f"processor {processor['name']!r} still has connections: delete them first"
                raise EditError(msg)
            group["processors"].remove(processor)
            self.dirty = True

    def _end(self, identifier: str) -> dict[str, Any]:
        for field, kind in (
            ("processors", "PROCESSOR"),
            ("funnels", "FUNNEL"),
            ("inputPorts", "INPUT_PORT"),
            ("outputPorts", "OUTPUT_PORT"),
        ):
            for group in _groups(self.root):
                for item in group.get(field) or ():
                    if item.get("identifier") == identifier:
                        return {
                            "id": identifier,
                            "type": kind,
                            "groupId": group.get("identifier"),
                            "name": item.get("name", ""),
                            "comments": "",
                        }
        msg = f"the flow has no component with id {identifier!r}"
        raise UnknownComponentError(msg)

    def _holder(self, source: Mapping[str, Any], destination: Mapping[str, Any]) -> dict:
        """The group a new connection belongs to, as NiFi places it.

        Both ends in one group: that group; into a child group's input port, or out of a
        child's output port: the parent; between two sibling groups' ports: their parent.

        Raises:
            EditError: the ends are further apart than NiFi connects.
        """
        parent = {
            c.get("identifier"): g.get("identifier")
            for g in _groups(self.root)
            for c in g.get("processGroups") or ()
        }
        here, there = source["groupId"], destination["groupId"]
        into_child = destination["type"] == "INPUT_PORT" and parent.get(there) == here
        out_of_child = source["type"] == "OUTPUT_PORT" and parent.get(here) == there
        siblings = (
            source["type"] == "OUTPUT_PORT"
            and destination["type"] == "INPUT_PORT"
            and parent.get(here) is not None
            and parent.get(here) == parent.get(there)
        )
        if here == there:
            return self._group(here)
        if into_child:
            return self._group(here)
        if out_of_child:
            return self._group(there)
        if siblings:
            return self._group(parent[here])
        msg = (
            f"{source['name']!r} and {destination['name']!r} are in different process groups: "
            "connect through the groups' input and output ports, as NiFi does"
        )
        raise EditError(msg)

    def add_connection(self, body: Mapping[str, Any]) -> str:
        """Connect ``source`` to ``destination`` for ``relationships``; the new id.

        A processor's connection needs relationships (the source's names); a port's or a
        funnel's has none, as NiFi's.
        """
        relationships = body.get("relationships") or []
        if not isinstance(relationships, list):
            msg = "relationships must be a list of the source's relationship names"
            raise EditError(msg)
        identifier = str(uuid.uuid4())
        with self._lock:
            source = self._end(str(body.get("source")))
            destination = self._end(str(body.get("destination")))
            if source["type"] == "PROCESSOR" and not relationships:
                msg = "a connection from a processor needs relationships: choose at least one"
                raise EditError(msg)
            if source["type"] != "PROCESSOR":
                relationships = []
            group = self._holder(source, destination)
            group.setdefault("connections", []).append(
                {
                    "identifier": identifier,
                    "name": str(body.get("name") or ""),
                    "source": source,
                    "destination": destination,
                    "labelIndex": 1,
                    "zIndex": 0,
                    "selectedRelationships": [str(r) for r in relationships],
                    "backPressureObjectThreshold": 10000,
                    "backPressureDataSizeThreshold": "1 GB",
                    "flowFileExpiration": "0 sec",
                    "prioritizers": [],
                    "bends": [],
                    "loadBalanceStrategy": "DO_NOT_LOAD_BALANCE",
                    "partitioningAttribute": "",
                    "loadBalanceCompression": "DO_NOT_COMPRESS",
                    "componentType": "CONNECTION",
                    "groupIdentifier": group.get("identifier"),
                }
            )
            self.dirty = True
        return identifier

    def delete_connection(
        self, identifier: str, queued: Callable[[str], tuple[int, int]] | None = None
    ) -> None:
        """Remove a connection; as NiFi, refused while its queue holds FlowFiles.

        Args:
            identifier: the connection's identifier (its queue's id in the repository).
            queued: FlowFiles and bytes the repository holds in a queue (read-only, as the
                queue listing reads it); None: no repository to ask.

        Raises:
            UnknownComponentError: no connection has *identifier*.
            EditError: its queue holds FlowFiles (the saved flow would not start: its
                FlowFiles would have no connection).
        """
        with self._lock:
            group, connection = self._find("connections", identifier, "connection")
            count = queued(identifier)[0] if queued is not None else 0
            if count:
                source, destination = connection["source"], connection["destination"]
                relationships = ",".join(connection.get("selectedRelationships") or ())
                label = f"{source.get('name')} -[{relationships}]-> {destination.get('name')}"
                msg = (
                    f"Queue not empty for {identifier}: connection {label} holds {count:,} "
                    "FlowFile(s) in the repository; as NiFi, delete it once its queue is empty "
                    "(run the flow with its destination enabled to empty it)"
                )
                raise EditError(msg)
            group["connections"].remove(connection)
            self.dirty = True

    # -- save and discard -----------------------------------------------------------------

    def save(self) -> None:
        """Write the edited definition over the file: a temporary file beside it, renamed."""
        with self._lock:
            try:  # NiFi's Jackson refuses NaN and Infinity: never write them
                data = json.dumps(self.document, indent=2, allow_nan=False).encode()
            except ValueError as error:
                msg = f"the edited flow holds a number JSON cannot hold ({error}): discard the edit"
                raise EditError(msg) from None
            if self.path.name.endswith(".gz"):
                data = gzip.compress(data)
            handle, temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
            try:
                with os.fdopen(handle, "wb") as file:
                    file.write(data)
                    file.flush()
                    os.fsync(file.fileno())
                os.replace(temporary, self.path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
            self.dirty = False

    def discard(self) -> None:
        """Forget every edit: read the file again."""
        with self._lock:
            self.document = _read(self.path)
            self.dirty = False
