"""Uuids derived from what a FlowFile is made of, so a replayed task attempt makes the same ones.

NiFi gives every new FlowFile a random uuid. In flowcore a task attempt that never commits (a
crash, a kill -9) is replayed from the last committed transaction; with random uuids the replay
would make FlowFiles that differ from the first attempt's, and so would names built from them
(``${uuid}``, MergeContent's default names). Here a new FlowFile's uuid is a hash of the
component, how it was made (fork, join, clone, fan-out, or a source's work item) and from which
parents, plus its ordinal among the FlowFiles made the same way in the task: the replay of the
same input makes the same uuids, whatever the runner or the moment.

The uuids keep the engine's consecutive form (:func:`flowcore.flowfile.sequence_uuid`): the
children of one parent share a 28-character prefix and count up, so provenance still stores a
split's events as a run. They remain valid RFC 4122 version-4 uuids.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from flowcore.flowfile import UUID_SEQUENCE_BITS, new_uuid, sequence_uuid

if TYPE_CHECKING:
    from flowcore.flowfile import FlowFile
    from flowcore.session.host import SessionHost

__all__ = ["UuidSource", "derived_prefix"]

_VARIANT = "89ab"  # RFC 4122 variant: the top two bits of the clock sequence are 10


def derived_prefix(scope: str) -> str:
    """The 28-character uuid prefix (version 4, RFC 4122 variant) for *scope*."""
    h = hashlib.blake2b(scope.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"


class UuidSource:
    """The uuids of the FlowFiles one session makes, derived from what they are made of."""

    def __init__(self, host: SessionHost) -> None:
        self._host = host
        #: what FlowFiles made from nothing are made of (a source's work item), or None
        self._seed: str | None = None

    def derive_uuids_from(self, seed: str | None) -> None:
        """FlowFiles made from nothing are now made from *seed* (a source's work item).

        Without a seed (a processor creating FlowFiles with no input, such as a generator
        triggered on a timer) they get random uuids, as in NiFi.
        """
        self._seed = seed

    def identifier_for(self, flowfile: FlowFile, purpose: str) -> str:
        """A new uuid a processor gives *flowfile*'s outputs, such as ``fragment.identifier``.

        NiFi draws these at random; here they are derived like FlowFile uuids (from the
        component, *purpose*, *flowfile* and the task's input), so a replayed task attempt
        gives the same identifier while the same FlowFile passing again later gets a new one.
        """
        return self.next(f"id:{purpose}", flowfile.uuid)

    def _sequence(self, how: str, parents: tuple[str, ...]) -> tuple[str, list]:
        """The scope of FlowFiles made *how* from *parents*, and its ``[prefix, next number]``.

        The salt names the task's committed input (its segments): a FlowFile that comes back in
        a later micro-batch (a loop, a retry) is in another segment, so its children differ
        from the first pass's, while a replay reads the same segments. Sequences are kept in
        the host: several sessions of one task can make children of the same parent, and each
        must get a new number.
        """
        salt = self._host.uuid_salt
        scope = "\0".join((self._host.component.id, how, salt, self._seed or "", *parents))
        sequences = self._host.uuid_sequences
        sequence = sequences.get(scope)
        if sequence is None:
            sequence = sequences[scope] = [derived_prefix(scope), 0]
        return scope, sequence

    def run(self, how: str, count: int, *parents: str) -> tuple[str, int] | None:
        """The next *count* uuids made *how* from *parents*, as ``(prefix, first number)``.

        They are the uuids *count* calls of :meth:`next` would give; None when those
        would not share one prefix (past 4 billion children, or random root uuids).
        """
        if how == "root" and self._seed is None:
            return None
        _, sequence = self._sequence(how, parents)
        number = sequence[1]
        if (number + count) >> UUID_SEQUENCE_BITS:
            return None
        sequence[1] = number + count
        return sequence[0], number

    def skip_children(self, parent: FlowFile, count: int, how: str = "clone") -> None:
        """Pass over the uuids of *parent*'s first *count* children made *how*.

        A task splitting one block of a larger file (:mod:`flowcore.session.block_views`)
        numbers its children after those the blocks before it make, so each child has the
        uuid the one-task split gives it. *how*: ``"clone"`` for children cut from the
        parent's content (``clone`` with a range, ``fork_batch``), ``"fork"`` for children
        made with ``create(parent)``.
        """
        if count:
            self.run(how, count, parent.uuid)

    def next(self, how: str, *parents: str) -> str:
        """The next uuid for a FlowFile made *how* from *parents* by this component."""
        if how == "root" and self._seed is None:
            return new_uuid()
        scope, sequence = self._sequence(how, parents)
        number = sequence[1]
        sequence[1] = number + 1
        if number >> UUID_SEQUENCE_BITS:  # past 4 billion children: a prefix of its own
            scope = f"{scope}\0{number >> UUID_SEQUENCE_BITS}"
            return sequence_uuid(derived_prefix(scope), number & ((1 << UUID_SEQUENCE_BITS) - 1))
        return sequence_uuid(sequence[0], number)
