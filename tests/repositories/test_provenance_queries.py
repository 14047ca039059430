"""Tests for the provenance queries over batch runs: a flow run on columnar batches and the same
flow forced one FlowFile at a time give the same answer to every search (each searchable field,
alone and combined, time ranges and limits) and the same lineage.

The two runs' uuids, ids and times differ; tests/repositories/_batch_runs.py pairs their
FlowFiles by lineage and compares events field by field.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcore.clock import now_ms
from tests.repositories._batch_runs import assert_queries_agree, run_both, write_inputs

_LINE = st.text(st.sampled_from("ab 5"), max_size=6).map(str.encode)
_FILES = st.lists(st.lists(_LINE, min_size=1, max_size=12), min_size=1, max_size=4)


def _two_runs(root: Path, files: list[list[bytes]], lines_per_split: int, runner: str) -> int:
    """Run both paths over *files*, then again over later files; return when the later began."""
    write_inputs(root / "in", files)
    run_both(root, lines_per_split, runner)
    time.sleep(0.005)
    since = now_ms()
    for number, lines in enumerate(files[:2]):
        (root / "in" / f"late{number}.log").write_bytes(b"".join(b"%s\n" % x for x in lines))
    run_both(root, lines_per_split, runner)
    return since


@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(files=_FILES, lines_per_split=st.integers(1, 3))
def test_every_search_of_a_batch_run_finds_what_the_one_by_one_run_finds(
    tmp_path_factory: pytest.TempPathFactory, files: list[list[bytes]], lines_per_split: int
) -> None:
    """By uuid, filename, event type, component, time range, indexed and stored attributes and
    limit, alone and combined: the same events, in the same order per component and type; and
    the same lineage around sampled FlowFiles."""
    root = tmp_path_factory.mktemp("search")
    since = _two_runs(root, files, lines_per_split, "direct")
    assert_queries_agree({name: root / name for name in ("batches", "single")}, since)


def test_searches_of_a_batch_run_on_spark_find_what_the_one_by_one_run_finds(
    tmp_path: Path, runner: str
) -> None:
    """The batch run on this runner answers every search as the direct one-by-one run."""
    files = [[b"line %d" % i for i in range(n)] for n in (40, 9, 13, 21)]
    since = _two_runs(tmp_path, files, 2, runner)
    assert_queries_agree({name: tmp_path / name for name in ("batches", "single")}, since)
