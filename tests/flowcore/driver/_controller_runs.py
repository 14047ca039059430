"""The settings and the failing processor the test_controller_*.py modules share."""

from __future__ import annotations

from flowcore import Processor, Relationship
from flowcore.settings import Settings

# every stage run goes to the runner under test, however small (see driver_run_max_flowfiles)
SETTINGS = Settings(sync=False, parallelism=2, shuffle_partitions=3, driver_run_max_flowfiles=0)


class Explode(Processor):
    """Always fails."""

    relationships = (Relationship("success", "never"),)

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        if session.get() is not None:
            msg = "this processor always fails"
            raise RuntimeError(msg)


class Tee(Processor):
    """Sends each FlowFile to ``success`` and a clone to ``copies``, auto-terminated by default."""

    relationships = (
        Relationship("success", "the FlowFile"),
        Relationship("copies", "a clone, dropped unless connected", auto_terminated=True),
    )

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        flowfile = session.get()
        if flowfile is not None:
            copy = session.clone(flowfile)
            session.transfer(flowfile, "success")
            session.transfer(copy, "copies")
