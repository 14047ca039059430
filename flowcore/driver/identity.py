"""Which flow a repository belongs to, and what its queues and state belong to (DESIGN §9c).

A repository keeps queues under connection ids, and state and park queues under component ids.
Those ids come from what the user names (:mod:`flowcore.definition.flow`), and the repository
records the flow that owns it, with every component and connection it had, in the write-ahead log (a
state entry under :data:`IDENTITY_KEY`, committed like any other). Each run starts by
:func:`claim_repository`:

- a repository another flow owns is refused, naming both flows and the ways out;
- a component renamed since the last run (same type, same properties, a new name) keeps its
  old id, so its state, queues and provenance stay its own, as a NiFi component keeps its id
  through a rename;
- a queue holding FlowFiles whose connection the flow no longer has is never re-attached to
  another: the run is refused, naming the queue by its endpoints, how many FlowFiles wait there,
  and the fix that applies (as NiFi refuses to delete a connection that holds data).

``flowcore adopt`` hands a repository to another flow on purpose (:func:`adopt_repository`).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

from flowcore.controller_service import ControllerService
from flowcore.definition.flow import Component, FlowDefinition
from flowcore.definition.queues import parked_component
from flowcore.errors import FlowIdentityError
from flowcore.parameters import MASK
from flowcore.services import MapCacheService
from repositories.flowfile_wal import WriteAheadFlowFileRepository
from repositories.records import Transaction

__all__ = [
    "IDENTITY_KEY",
    "FlowRecord",
    "OrphanQueue",
    "adopt_repository",
    "check_owner",
    "claim_repository",
    "orphan_queues",
]

#: The state entry holding the owner record (no component id can be it: names never hold NUL).
IDENTITY_KEY = "\x00flow"
_VERSION = "1"


def _fingerprint(component: Component, *, masked: bool = True) -> str:
    """What a component is apart from its name: its type and its properties' values.

    Values as written, with defaults filled in (``batch_size=10`` is GetFile's default, so
    writing it out, as a NiFi import does, changes nothing). A sensitive property's value
    (declared or dynamic, written in the flow or a ``#{parameter}`` reference) counts only as
    set: no secret enters the digest, which the repository keeps. Unless not *masked*: the
    fingerprint records made before sensitive values were masked hold (see ``_kept_ids``).
    """
    processor = component.processor
    values: dict[str, str] = {}
    if processor is not None:
        values = {d.name: d.default for d in processor.descriptors() if d.default is not None}
        for name, value in processor.raw_configured.items():
            found = processor.resolve_descriptor(name)
            secret = masked and found is not None and found.sensitive
            values[name] = MASK if secret else value
    text = json.dumps([component.type_name, sorted(values.items())], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _service_fingerprint(service: ControllerService) -> str:
    """A service's settings apart from its name (and its secrets)."""
    return service.fingerprint()


def _service_moves(record: FlowRecord, flow: FlowDefinition) -> dict[str, str]:
    """Recorded service name -> its new name, for services renamed (same settings) since."""
    gone: dict[str, list[str]] = defaultdict(list)
    for name, fingerprint in record.services.items():
        if name not in flow.services:
            gone[fingerprint].append(name)
    new: dict[str, list[str]] = defaultdict(list)
    for name, service in flow.services.items():
        if name not in record.services:
            new[_service_fingerprint(service)].append(name)
    return {
        gone[key][0]: names[0]
        for key, names in new.items()
        if len(names) == 1 and len(gone.get(key, ())) == 1
    }


@attrs.frozen
class FlowRecord:
    """The flow a repository belongs to, as its last run left it.

    Attributes:
        flow: the flow's name.
        components: component id -> ``(name, type, fingerprint)``.
        connections: connection id -> ``(source id, relationships, destination id)``.
    """

    flow: str
    components: Mapping[str, tuple[str, str, str]]
    connections: Mapping[str, tuple[str, tuple[str, ...], str]]
    services: Mapping[str, str] = attrs.field(factory=dict)

    @classmethod
    def of(cls, flow: FlowDefinition) -> FlowRecord:
        """The record of *flow* as it is defined now."""
        return cls(
            flow.name,
            {c.id: (c.name, c.type_name, _fingerprint(c)) for c in flow.components},
            {c.id: (c.source, tuple(c.relationships), c.destination) for c in flow.connections},
            {name: _service_fingerprint(s) for name, s in flow.services.items()},
        )

    def to_state(self) -> dict[str, str]:
        """The record as a state map (strings only, as every state is)."""
        return {
            "version": _VERSION,
            "flow": self.flow,
            "components": json.dumps({k: list(v) for k, v in self.components.items()}),
            "connections": json.dumps(
                {k: [s, list(r), d] for k, (s, r, d) in self.connections.items()}
            ),
            "services": json.dumps(dict(self.services)),
        }

    @classmethod
    def from_state(cls, state: Mapping[str, str]) -> FlowRecord | None:
        """The record kept in *state*; None when the repository has none (new, or older)."""
        if not state or "flow" not in state:
            return None
        components = json.loads(state.get("components", "{}"))
        connections = json.loads(state.get("connections", "{}"))
        return cls(
            state["flow"],
            {k: (v[0], v[1], v[2]) for k, v in components.items()},
            {k: (v[0], tuple(v[1]), v[2]) for k, v in connections.items()},
            json.loads(state.get("services", "{}")),
        )

    def name_of(self, component_id: str) -> str:
        """A recorded component's name (its id when the record does not know it)."""
        known = self.components.get(component_id)
        return known[0] if known is not None else component_id


def read_record(wal: WriteAheadFlowFileRepository) -> FlowRecord | None:
    """The owner record of the repository *wal* belongs to, if it has one."""
    return FlowRecord.from_state(wal.state(IDENTITY_KEY))


def _kept_ids(record: FlowRecord, flow: FlowDefinition) -> dict[str, str]:
    """Component id in *flow* -> the id the repository knows it by, where they differ.

    In order: an id given (``id=``) that the record knows keeps itself; a name the record
    knows takes that component's recorded id (a component renamed once keeps its old id for
    good); components that swapped names, as unnamed ones of one class do when their ``add()``
    calls are reordered, take the ids their properties match; a name the record never saw,
    of the same type and properties as exactly one recorded component whose name is gone, is
    that component renamed. Anything else is new, and never takes an id the record gave to
    another component.
    """
    recorded = record.components
    by_name = {name: rid for rid, (name, _, _) in recorded.items()}
    names = {c.name for c in flow.components}
    kind = {c.id: (c.type_name, _fingerprint(c)) for c in flow.components}
    final: dict[str, str] = {}
    for component in flow.components:  # ids given, which the record knows
        if component.id != component.name and component.id in recorded:
            final[component.id] = component.id
    claimed = set(final.values())
    for component in flow.components:  # names the record knows
        rid = by_name.get(component.name)
        if component.id in final or rid is None or rid in claimed:
            continue
        if recorded[rid][1] == component.type_name:
            final[component.id] = rid
            claimed.add(rid)
    _swap(final, recorded, kind)
    gone: dict[tuple[str, str], list[str]] = defaultdict(list)
    for rid, (name, type_name, fingerprint) in recorded.items():
        if rid not in claimed and name not in names:
            gone[(type_name, fingerprint)].append(rid)
    new: dict[tuple[str, str], list[str]] = defaultdict(list)
    for component in flow.components:
        if component.id not in final and component.name not in by_name:
            new[kind[component.id]].append(component.id)
    for key, ids in new.items():  # renamed: the same type and properties, a new name
        if len(ids) == 1 and len(gone.get(key, ())) == 1:
            final[ids[0]] = gone[key][0]
    _renamed_since_upgrade(final, gone, [i for ids in new.values() for i in ids], flow)
    taken = set(final.values()) | set(recorded) | {c.id for c in flow.components}
    for component in flow.components:  # new: never an id the record gave another
        if component.id in final:
            continue
        fresh, n = component.id, 1
        while fresh in recorded or (fresh != component.id and fresh in taken):
            n += 1
            fresh = f"{component.id}#{n}"
        final[component.id] = fresh
        taken.add(fresh)
    return {cid: rid for cid, rid in final.items() if cid != rid}


def _renamed_since_upgrade(
    final: dict[str, str],
    gone: Mapping[tuple[str, str], list[str]],
    new: Iterable[str],
    flow: FlowDefinition,
) -> None:
    """Renames the record shows by the fingerprints made before sensitive values were masked.

    A repository last run by an older flowcore recorded them with the values as written: a
    component with a sensitive property, renamed in the same edit as the upgrade, is found by
    that fingerprint (computed here, never kept; the run records the masked one).
    """
    taken = set(final.values())
    older: dict[tuple[str, str], list[str]] = defaultdict(list)
    for component in (flow.component(cid) for cid in new if cid not in final):
        legacy = _fingerprint(component, masked=False)
        if legacy != _fingerprint(component):
            older[(component.type_name, legacy)].append(component.id)
    for key, ids in older.items():
        rids = [r for r in gone.get(key, ()) if r not in taken]
        if len(ids) == 1 and len(rids) == 1:
            final[ids[0]] = rids[0]


def _swap(
    final: dict[str, str],
    recorded: Mapping[str, tuple[str, str, str]],
    kind: Mapping[str, tuple[str, str]],
) -> None:
    """Give components matched by name the ids their properties match, when names swapped.

    Only a whole permutation is taken (every component that moves lands on an id another
    one left), so no id is ever given twice; otherwise the names stand.
    """
    changed = [c for c, rid in final.items() if recorded[rid][1:] != kind[c]]
    if len(changed) < 2:
        return
    pool: dict[tuple[str, str], list[str]] = defaultdict(list)
    for cid in changed:
        pool[recorded[final[cid]][1:]].append(final[cid])
    wanted: dict[tuple[str, str], list[str]] = defaultdict(list)
    for cid in changed:
        wanted[kind[cid]].append(cid)
    moves = {
        cids[0]: pool[key][0]
        for key, cids in wanted.items()
        if len(cids) == 1 and len(pool.get(key, ())) == 1
    }
    if moves and sorted(moves.values()) == sorted(final[c] for c in moves):
        final.update(moves)


def _reconcile(
    record: FlowRecord | None, flow: FlowDefinition
) -> tuple[FlowDefinition, dict[str, str]]:
    """*flow* with the ids the repository knows its components by, and the renames found."""
    if record is None:
        return flow, {}
    kept = _kept_ids(record, flow)
    renamed = {}
    for component in flow.components:
        rid = kept.get(component.id, component.id)
        if rid in record.components and record.components[rid][0] != component.name:
            renamed[record.components[rid][0]] = component.name
    return flow.reidentified(kept), renamed


@attrs.frozen
class OrphanQueue:
    """A queue holding FlowFiles that no connection of the flow reads.

    Attributes:
        queue_id: the queue's id in the repository.
        label: the queue as people read it, ``source -[relationships]-> destination``.
        count: FlowFiles waiting in it.
        fix: what the user can do, in one clause.
    """

    queue_id: str
    label: str
    count: int
    fix: str


def orphan_queues(
    record: FlowRecord | None, flow: FlowDefinition, wal: WriteAheadFlowFileRepository
) -> list[OrphanQueue]:
    """Queues in *wal* holding FlowFiles that *flow* has no connection or component for."""
    record = record or FlowRecord(flow.name, {}, {})
    connections = {c.id for c in flow.connections}
    components = {c.id: c for c in flow.components}
    orphans = []
    for queue_id in wal.queue_ids():
        count = wal.queue_size(queue_id)[0]
        if not count or queue_id in connections:
            continue
        parked = parked_component(queue_id)
        if parked is not None:
            if parked in components:
                continue
            name = record.name_of(parked)
            label = f"{name} (returned after errors)"
            fix = f"add {name!r} back (a component with that name or id={parked!r})"
        else:
            label, fix = _orphan_fix(record, flow, queue_id)
        orphans.append(OrphanQueue(queue_id, label, count, fix))
    return orphans


def _orphan_fix(record: FlowRecord, flow: FlowDefinition, queue_id: str) -> tuple[str, str]:
    """A lost connection's label and the fix that applies to it."""
    recorded = record.connections.get(queue_id)
    if recorded is None:  # a repository of a flowcore that numbered its connections
        return queue_id, (
            "it was queued by an earlier flowcore, whose ids came from the order of connect() "
            "calls; finish it with that version, or give its connection id="
            f"{queue_id!r}"
        )
    source, relationships, destination = recorded
    label = f"{record.name_of(source)} -[{','.join(relationships)}]-> {record.name_of(destination)}"
    ids = {c.id for c in flow.components}
    missing = [record.name_of(x) for x in dict.fromkeys((source, destination)) if x not in ids]
    if missing:
        return label, f"add back {' and '.join(map(repr, missing))}, with the connection"
    same_ends = [c for c in flow.connections if (c.source, c.destination) == (source, destination)]
    if same_ends:
        return label, (
            f"give the connection {flow.describe(same_ends[0])} id={queue_id!r} to carry "
            f"these FlowFiles over to it, or connect {','.join(relationships)} again"
        )
    rels = relationships[0] if len(relationships) == 1 else list(relationships)
    return label, (
        f"connect them again: flow.connect({record.name_of(source)}, "
        f"{record.name_of(destination)}, {rels!r})"
    )


def _describe_orphans(orphans: Iterable[OrphanQueue], directory: Path, flow: str) -> str:
    parts = [f"{o.label} holds {o.count:,} FlowFile(s): {o.fix}" for o in orphans]
    return (
        f"repository {directory}: {'; '.join(parts)}; or drop them with "
        f"`flowcore adopt FLOW --repository {directory} --drop-orphaned` (flow {flow!r})"
    )


def check_owner(
    flow: FlowDefinition, wal: WriteAheadFlowFileRepository, directory: str | Path
) -> FlowRecord | None:
    """The repository's flow record, after checking it is *flow*'s (or no flow's yet).

    Cheap and changing nothing: a run checks it before it starts Spark (a refused run said
    so after the 14 s a session takes to start).

    Raises:
        FlowIdentityError: another flow owns the repository.
    """
    record = read_record(wal)
    if record is not None and record.flow != flow.name:
        msg = (
            f"repository {Path(directory)} belongs to flow {record.flow!r}, not {flow.name!r}: run "
            f"{flow.name!r} with another --repository, or hand this one over with "
            f"`flowcore adopt FLOW --repository {Path(directory)}`"
        )
        raise FlowIdentityError(msg)
    return record


def claim_repository(
    flow: FlowDefinition, wal: WriteAheadFlowFileRepository, directory: str | Path
) -> tuple[FlowDefinition, dict[str, str]]:
    """Check that *flow* may run on the repository; record it as the repository's flow.

    Returns:
        The flow to run (renamed components carry their recorded ids) and the renames found,
        old name -> new name.

    Raises:
        FlowIdentityError: another flow owns the repository, or a queue holding FlowFiles
            belongs to a connection the flow no longer has; nothing was changed.
    """
    record = check_owner(flow, wal, directory)
    directory = Path(directory)
    flow, renamed = _reconcile(record, flow)
    orphans = orphan_queues(record, flow, wal)
    if orphans:
        raise FlowIdentityError(_describe_orphans(orphans, directory, flow.name))
    # A renamed service (a map cache) takes its entries along, in the record's transaction.
    moves = _service_moves(record, flow) if record is not None else {}
    state: dict[str, dict[str, str] | None] = {}
    for old, new in moves.items():
        state[flow.services[new].state_key] = dict(wal.state(MapCacheService(old).state_key))
        state[MapCacheService(old).state_key] = None
        renamed[f"service {old}"] = f"service {new}"
    _record(flow, wal, record, state)
    return flow, renamed


def _record(
    flow: FlowDefinition,
    wal: WriteAheadFlowFileRepository,
    previous: FlowRecord | None,
    state: Mapping[str, dict[str, str] | None] | None = None,
) -> None:
    """Commit *flow*'s record, when it differs from what the repository holds (with *state*)."""
    record = FlowRecord.of(flow)
    if record != previous or state:
        wal.commit(Transaction(state={**(state or {}), IDENTITY_KEY: record.to_state()}))


def adopt_repository(
    flow: FlowDefinition,
    wal: WriteAheadFlowFileRepository,
    directory: str | Path,
    *,
    drop_orphaned: bool = False,
) -> tuple[str | None, list[OrphanQueue]]:
    """Hand the repository to *flow*: ``flowcore adopt``.

    Its queues and state stay under their ids; those *flow* has (the same names, or ids
    given) become its own. Queues it has no connection for are refused, or with
    *drop_orphaned* emptied (their FlowFiles' content is released at the next start).

    Returns:
        The flow that owned the repository before (None: none recorded), and the queues
        dropped.

    Raises:
        FlowIdentityError: queues hold FlowFiles *flow* has no connection for, and
            *drop_orphaned* is not set.
    """
    record = read_record(wal)
    flow, _ = _reconcile(record, flow)  # what the flow keeps, as a run would see it
    orphans = orphan_queues(record, flow, wal)
    if orphans and not drop_orphaned:
        raise FlowIdentityError(_describe_orphans(orphans, Path(directory), flow.name))
    dropped = [s.segment_id for o in orphans for s in wal.segments(o.queue_id)]
    wal.commit(Transaction(dequeued=dropped, state={IDENTITY_KEY: FlowRecord.of(flow).to_state()}))
    return (record.flow if record is not None else None), orphans
