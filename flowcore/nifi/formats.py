"""The shapes NiFi writes a flow in, read into one value.

NiFi keeps a flow as a ``VersionedProcessGroup`` (``org.apache.nifi.flow`` in nifi-api) inside
one of these wrappers:

- **Download flow definition** (a process group's menu; NiFi 1.x and 2.x): ``flowContents``
  (the group), ``parameterContexts`` (a map by name), ``externalControllerServices`` (services
  the group uses but does not hold), ``flowEncodingVersion``, ``parameterProviders``. NiFi 1.x
  writes property descriptors without their ``dynamic`` flag.
- **Registry snapshot** (NiFi Registry, and the GitHub/GitLab registry clients' files; NiFi's
  ``RegisteredFlowSnapshot``): the same plus ``snapshotMetadata``, ``flow`` (its name) and
  ``bucket``.
- **A NiFi Registry flow file** (what the Registry's file-system flow persistence provider keeps
  of each version, ``{bucket}/{flow}/{version}/{version}.snapshot``; NiFi Registry's
  ``SerializationContainer``): ``header`` (``dataModelVersion``) and ``content``. Data model 3
  (NiFi Registry 0.5 on) wraps the snapshot as ``{"flowSnapshot": {...}}`` (a registry
  snapshot's fields, its ``snapshotMetadata`` left out: the Registry keeps that in its
  database); data model 2 holds the bare ``VersionedProcessGroup``. Data model 1 is XML, refused
  as XML is.
- **An instance's flow** (``conf/flow.json.gz``; NiFi's ``VersionedDataflow``): ``rootGroup``,
  ``parameterContexts`` as a *list*, ``controllerServices`` (controller level),
  ``encodingVersion``. Property descriptors are left out, and sensitive values are encrypted
  (``enc{...}``) with that instance's key.
- A bare ``VersionedProcessGroup`` (``processors``, ``connections``, ``processGroups`` ...),
  as some tools keep it.
- NiFi 1.x's XML: a template (``<template><snippet>``) and an instance's ``flow.xml.gz``
  (``<flowController>``), read into the shapes above by :mod:`flowcore.nifi.xml_flows` (the
  template as a download's group, the flow.xml as an instance's flow).

:func:`read_definition` takes a path (``.json``, or gzip-compressed whatever its name) or the
parsed JSON, tells the shape and returns a :class:`NiFiDefinition`; a file that starts as XML
does is read as NiFi 1.x's XML.
"""

from __future__ import annotations

import enum
import json
import os
import re
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

import attrs

from flowcore.errors import NiFiFormatError
from flowcore.nifi.schema import MAX_DEPTH, check_flow, json_type
from flowcore.nifi.xml_flows import read_xml
from flowcore.nifi.xml_parse import XmlFlow

__all__ = [
    "MAX_DEFINITION_BYTES",
    "MAX_DEFINITION_VALUES",
    "FlowShape",
    "NiFiDefinition",
    "read_definition",
]

#: The first two bytes of a gzip stream.
_GZIP_MAGIC = b"\x1f\x8b"

#: The most JSON text a flow may hold (after gunzipping): 64 MiB, some fifty times the largest
#: flow definitions seen. Reading stops there, so a small ``.json.gz`` that inflates to
#: gigabytes is refused having held 64 MiB.
MAX_DEFINITION_BYTES = 64 * 2**20

#: The most JSON values (objects, lists, strings, numbers ...) a flow may hold: about 40 bytes
#: of NiFi's indented JSON make one, so 64 MiB of it is some 1.7 million. Parsed, a value costs
#: up to some 200 bytes (an object holding a field), so the densest JSON under both limits
#: (``[{"a":0},...]``, two million objects) peaks at about 450 MB, measured.
MAX_DEFINITION_VALUES = 4_000_000

#: A document that starts as XML does (looked for without copying the text, as lstrip would).
_XML = re.compile(rb"\s*<")

#: How much of a file is read or inflated at a time.
_CHUNK = 2**20


class FlowShape(enum.Enum):
    """Which wrapper a flow came in."""

    DOWNLOAD = "flow definition"
    REGISTRY_SNAPSHOT = "registry snapshot"
    INSTANCE_FLOW = "instance flow (flow.json.gz)"
    REGISTRY_FILE = "NiFi Registry flow file"
    PROCESS_GROUP = "process group"
    TEMPLATE = "NiFi 1.x template"


@attrs.frozen
class NiFiDefinition:
    """A NiFi flow as read, whatever its wrapper.

    Attributes:
        shape: the wrapper it came in.
        root: the top process group (a ``VersionedProcessGroup`` as JSON).
        name: the flow's name (the registry's flow name, else the top group's).
        parameter_contexts: every parameter context of the file, by name.
        controller_services: services held outside the groups (an instance's controller level).
        external_services: services the flow references but does not hold, by identifier
            (a download's ``externalControllerServices``).
        nifi_major: NiFi's major version as the bundles of the processors say (1 or 2), or
            None when none says.
        source: where it came from, for messages (a path, or ``<dict>``).
    """

    shape: FlowShape
    root: Mapping[str, Any]
    name: str
    parameter_contexts: Mapping[str, Mapping[str, Any]]
    controller_services: tuple[Mapping[str, Any], ...]
    external_services: Mapping[str, Mapping[str, Any]]
    nifi_major: int | None
    source: str


def _inflated(path: Path, head: bytes, file: BinaryIO) -> bytearray:
    """The gzip stream in *file* (*head* its first bytes, read already), inflated.

    Inflated a chunk at a time and refused past :data:`MAX_DEFINITION_BYTES`, so a small file
    that inflates to gigabytes (a "gzip bomb") costs no more than the limit. Concatenated gzip
    members are read one after the other, as :func:`gzip.decompress` does.
    """
    inflated = bytearray()  # grown in place: no second copy of the whole, as a join makes
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    pending = head
    while True:
        if inflater.eof:  # a member ended: another may follow
            pending = inflater.unused_data + pending
            if not pending:
                pending = file.read(_CHUNK)
                if not pending:
                    break
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif not pending:
            pending = file.read(_CHUNK)
            if not pending:
                msg = "the stream ends before its end marker"
                raise EOFError(msg)
        # At most what the limit leaves, plus one byte to know it was passed.
        inflated += inflater.decompress(pending, MAX_DEFINITION_BYTES + 1 - len(inflated))
        pending = inflater.unconsumed_tail
        if len(inflated) > MAX_DEFINITION_BYTES:
            raise _too_large(path, "inflates to")
    return inflated


def _too_large(path: Path, what: str) -> NiFiFormatError:
    limit = MAX_DEFINITION_BYTES // 2**20
    msg = (
        f"NiFi flow {path} {what} more than {limit} MiB of JSON, more than flowcore reads "
        f"(flowcore.nifi.formats.MAX_DEFINITION_BYTES); export a smaller process group"
    )
    return NiFiFormatError(msg)


def _read(path: Path) -> bytes | bytearray:
    """The bytes of *path*, gunzipped when they are gzip (by the first bytes, not the name).

    Raises:
        NiFiFormatError: the file cannot be read, is not whole gzip, or holds more than
            :data:`MAX_DEFINITION_BYTES` (compressed or not).
    """
    try:
        with path.open("rb") as file:
            head = file.read(_CHUNK)
            if head[:2] == _GZIP_MAGIC:
                return _inflated(path, head, file)
            data = head + file.read(max(0, MAX_DEFINITION_BYTES + 1 - len(head)))
    except OSError as error:
        why = error.strerror or str(error)
        msg = f"NiFi flow {path} cannot be read: {why}"
        raise NiFiFormatError(msg) from None
    except (EOFError, zlib.error) as error:
        msg = f"NiFi flow {path} is not a whole gzip file ({error}); copy it again"
        raise NiFiFormatError(msg) from None
    if len(data) > MAX_DEFINITION_BYTES:
        raise _too_large(path, "holds")
    return data


def _load(path: Path) -> Any:
    """The JSON in *path*, gunzipped first when it is gzip (by its first bytes, not its name).

    XML (a NiFi 1.x template or flow.xml.gz) is read as such, into an :class:`XmlFlow`.

    The text is held to :data:`MAX_DEFINITION_BYTES` and its values to
    :data:`MAX_DEFINITION_VALUES` before it is parsed, which bounds what the parse holds; JSON
    nested too deeply for Python's parser is refused in one line.

    Raises:
        NiFiFormatError: the file cannot be read, is not gzip when it says so, is too large or
            nested too deeply, or is not JSON.
    """
    data = _read(path)
    if _XML.match(data):
        return read_xml(data, str(path))
    # Each value of the JSON is at most one comma, colon-less container or the first value:
    # counting the bytes that open one bounds the values (strings holding them count too).
    values = data.count(b",") + data.count(b"{") + data.count(b"[") + 1
    if values > MAX_DEFINITION_VALUES:
        msg = (
            f"NiFi flow {path} holds more than {MAX_DEFINITION_VALUES:,} JSON values (about "
            f"{values:,}), more than flowcore reads (flowcore.nifi.formats."
            "MAX_DEFINITION_VALUES); export a smaller process group"
        )
        raise NiFiFormatError(msg)
    try:
        return json.loads(data)
    except RecursionError:
        msg = (
            f"NiFi flow {path} is nested more than {MAX_DEPTH} levels deep, deeper than "
            "flowcore reads; NiFi does not write such flows: export it again"
        )
        raise NiFiFormatError(msg) from None
    except (ValueError, UnicodeDecodeError) as error:
        msg = f"NiFi flow {path} is not valid JSON: {error}"
        raise NiFiFormatError(msg) from None


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        msg = f"{where} must be a JSON object, got {json_type(value)}"
        raise NiFiFormatError(msg)
    return value


def _contexts_by_name(value: Any, where: str) -> dict[str, Mapping[str, Any]]:
    """Parameter contexts by name, from a download's map or an instance's list."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        entries = [(str(key), context) for key, context in value.items()]
    elif isinstance(value, list):
        entries = [(str(index), context) for index, context in enumerate(value)]
    else:
        msg = f"{where}: parameterContexts must be an object or a list"
        raise NiFiFormatError(msg)
    found = {}
    for key, context in entries:
        checked = _object(context, f"{where}: parameterContexts[{key}]")
        found[str(checked.get("name") or key)] = checked
    return found


def _services(value: Any, where: str) -> tuple[Mapping[str, Any], ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        msg = f"{where}: controllerServices must be a list"
        raise NiFiFormatError(msg)
    return tuple(_object(s, f"{where}: controllerServices[{i}]") for i, s in enumerate(value))


def _external(value: Any, where: str) -> dict[str, Mapping[str, Any]]:
    if value is None:
        return {}
    found = _object(value, f"{where}: externalControllerServices")
    # a null entry references nothing (the schema check lets null stand for absent everywhere)
    return {
        str(k): _object(v, f"{where}: externalControllerServices")
        for k, v in found.items()
        if v is not None
    }


def _nifi_major(group: Mapping[str, Any]) -> int | None:
    """NiFi's major version from the first Apache NiFi bundle found in *group* (depth first)."""
    for processor in group.get("processors") or ():
        bundle = processor.get("bundle") if isinstance(processor, Mapping) else None
        if isinstance(bundle, Mapping) and bundle.get("group") == "org.apache.nifi":
            major = str(bundle.get("version") or "").split(".", 1)[0]
            if major.isdigit():
                return int(major)
    for child in group.get("processGroups") or ():
        if isinstance(child, Mapping):
            found = _nifi_major(child)
            if found is not None:
                return found
    return None


def _shape(data: Mapping[str, Any]) -> FlowShape | None:
    if "header" in data and "content" in data:
        return FlowShape.REGISTRY_FILE
    if "rootGroup" in data:
        return FlowShape.INSTANCE_FLOW
    if "flowContents" in data:
        if "snapshotMetadata" in data:
            return FlowShape.REGISTRY_SNAPSHOT
        return FlowShape.DOWNLOAD
    if any(key in data for key in ("processors", "processGroups", "connections")):
        return FlowShape.PROCESS_GROUP
    return None


#: The NiFi class of each shape's top object, whose fields :func:`check_flow` checks.
_TOP_CLASS = {
    FlowShape.DOWNLOAD: "RegisteredFlowSnapshot",
    FlowShape.REGISTRY_SNAPSHOT: "RegisteredFlowSnapshot",
    FlowShape.INSTANCE_FLOW: "VersionedDataflow",
    FlowShape.PROCESS_GROUP: "VersionedProcessGroup",
}


def _root(data: Mapping[str, Any], shape: FlowShape, where: str) -> Mapping[str, Any]:
    """The top process group of a file of *shape* (other than a registry flow file)."""
    if shape is FlowShape.INSTANCE_FLOW:
        return _object(data["rootGroup"], f"{where}: rootGroup")
    if shape is FlowShape.PROCESS_GROUP:
        return data
    return _object(data["flowContents"], f"{where}: flowContents")


def _registry_content(
    data: Mapping[str, Any], where: str
) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """A NiFi Registry flow file's snapshot and top group, checked.

    Data model 3 holds a snapshot (``content.flowSnapshot``), data model 2 the group itself
    (``content``), which then stands for the snapshot too.

    Raises:
        NiFiFormatError: ``content`` is neither, or a field in it has the wrong type.
    """
    content = data.get("content")
    if isinstance(content, Mapping):
        snapshot = content.get("flowSnapshot")
        if isinstance(snapshot, Mapping) and "flowContents" in snapshot:
            check_flow(data, "RegistryFlowContentFile", where)
            root = _object(snapshot["flowContents"], f"{where}: content.flowSnapshot.flowContents")
            return snapshot, root
        if "flowSnapshot" not in content and _shape(content) is FlowShape.PROCESS_GROUP:
            check_flow(data, "RegistryProcessGroupFile", where)
            return content, content
    header = data.get("header")
    version = header.get("dataModelVersion") if isinstance(header, Mapping) else None
    msg = (
        f"{where} is a NiFi Registry flow file (header, content; dataModelVersion "
        f"{json.dumps(version)}) whose content is neither a flow snapshot (content.flowSnapshot "
        "with flowContents, data model 3) nor a process group (data model 2); copy the file "
        "again from the Registry's flow storage, or download the flow definition from NiFi"
    )
    raise NiFiFormatError(msg)


def _flow_name(data: Mapping[str, Any], root: Mapping[str, Any]) -> str:
    registered = data.get("flow")
    if isinstance(registered, Mapping) and registered.get("name"):
        return str(registered["name"])
    return str(root.get("name") or "NiFi Flow")


def _from_xml(flow: XmlFlow, where: str) -> NiFiDefinition:
    """A NiFi 1.x XML flow as the definition its JSON counterpart makes, its fields checked.

    A flow.xml.gz is an instance's flow (stopped processors noted, root ports site-to-site),
    as its successor flow.json.gz is; a template is read as a download's group.
    """
    check_flow(flow.root, "VersionedProcessGroup", where)
    return NiFiDefinition(
        shape=FlowShape.TEMPLATE if flow.template else FlowShape.INSTANCE_FLOW,
        root=flow.root,
        name=flow.name,
        parameter_contexts=flow.parameter_contexts,
        controller_services=flow.controller_services,
        external_services={},
        nifi_major=_nifi_major(flow.root),
        source=where,
    )


def read_definition(source: str | os.PathLike[str] | Mapping[str, Any]) -> NiFiDefinition:
    """Read a NiFi flow in any of its shapes.

    Args:
        source: a path to a ``.json`` or ``.json.gz`` file (or NiFi 1.x XML: a template, a
            ``flow.xml.gz``), or its parsed JSON.

    Raises:
        NiFiFormatError: the file cannot be read, is not JSON, or is none of NiFi's shapes;
            the message names the file and what it holds instead.
    """
    if isinstance(source, Mapping):
        where, data = "<dict>", source
    else:
        where = str(source)
        loaded = _load(Path(source))
        if isinstance(loaded, XmlFlow):
            return _from_xml(loaded, where)
        data = _object(loaded, f"NiFi flow {where}")
    shape = _shape(data)
    if shape is None:
        # Escaped as JSON escapes them, so that a key holding a line break keeps this one line
        keys = ", ".join(json.dumps(str(k))[1:-1] for k in sorted(map(str, data))[:8])
        keys = keys or "nothing"
        msg = (
            f"{where} is not a NiFi flow definition: it has {keys} but none of flowContents "
            "(a downloaded flow definition or a registry snapshot), rootGroup (an instance's "
            "flow.json.gz), header and content (a NiFi Registry flow file) or "
            "processors/processGroups (a process group)"
        )
        raise NiFiFormatError(msg)
    if shape is FlowShape.REGISTRY_FILE:
        data, root = _registry_content(data, where)  # the snapshot (or group) inside, checked
    else:
        check_flow(data, _TOP_CLASS[shape], where)
        root = _root(data, shape, where)
    return NiFiDefinition(
        shape=shape,
        root=root,
        name=_flow_name(data, root),
        parameter_contexts=_contexts_by_name(data.get("parameterContexts"), where),
        controller_services=_services(data.get("controllerServices"), where),
        external_services=_external(data.get("externalControllerServices"), where),
        nifi_major=_nifi_major(root),
        source=where,
    )
