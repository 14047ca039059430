"""Tests for provenance event files, written by tasks without the SQL repository."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventType
from repositories._provenance_rows import ROW_COLUMNS, decode_event_file
from repositories._provenance_schema import EVENTS
from repositories.event_files import EventFileWriter


def test_row_columns_match_the_event_table() -> None:
    """The spelled-out row columns are the SQL table's, in order, without the event id."""
    assert tuple(c.name for c in EVENTS.columns if c.name != "event_id") == ROW_COLUMNS


def test_a_writer_writes_its_events_as_one_file(tmp_path: Path) -> None:
    """Events appended in order come back from the file in order; no events, no file."""
    writer = EventFileWriter(tmp_path, "task-1")
    assert writer.close() is None
    events = [
        ProvenanceEvent(
            event_type=ProvenanceEventType.CREATE,
            flowfile_uuid=f"ff-{n}",
            component_id="gen-1",
            component_type="GenerateFlowFile",
            event_time=1_000 + n,
            file_size=n,
        )
        for n in range(3)
    ]
    writer.append(events)
    name = writer.close(sync=False)
    assert name is not None
    records = decode_event_file(tmp_path / name, (tmp_path / name).read_bytes())
    assert [r[0][ROW_COLUMNS.index("flowfile_uuid")] for r in records] == ["ff-0", "ff-1", "ff-2"]


def test_the_task_path_imports_neither_sqlalchemy_nor_networkx() -> None:
    """A Spark worker loads the task function and the processors: no SQL or graph library,
    which took half of a worker's start-up."""
    code = (
        "import sys, flowcore.runners, flowcore.engine.task, processors; "
        "print(sorted(m for m in ('sqlalchemy', 'networkx') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
