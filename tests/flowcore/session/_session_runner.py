"""A processor that only declares relationships, and sessions over its harness, for the
test_process_session_*.py modules.

Each of those modules declares its own ``runner`` fixture (a harness of :class:`Dummy`): in a
``conftest.py`` here it would also replace tests/conftest.py's ``runner`` (a runner's name) for
the other modules of this directory."""

from __future__ import annotations

from flowcore import Processor, ProvenanceEventType, Relationship
from flowcore.session.process_session import ProcessSession
from flowcore.testing import TestRunner

E = ProvenanceEventType
SUCCESS = Relationship("success")
FAILURE = Relationship("failure")


class Dummy(Processor):
    """A processor that only declares relationships; tests drive its session directly."""

    relationships = (SUCCESS, FAILURE)


def session_for(runner: TestRunner) -> ProcessSession:
    return runner.create_session()


def types(runner: TestRunner) -> list[E]:
    return [e.event_type for e in runner.provenance_events]
