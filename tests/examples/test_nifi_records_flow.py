"""Tests that examples/nifi_records_flow.json, a NiFi 2.x record flow, runs and Spark reads it."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parents[2]
FLOW = ROOT / "examples" / "nifi_records_flow.json"
DATA = ROOT / "examples" / "nifi-records-data" / "in"


def _run(tmp_path: Path, runner: str = "direct") -> subprocess.CompletedProcess[str]:
    """``flowcore run examples/nifi_records_flow.json`` over the example's input."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "flowcore",
            "run",
            str(FLOW),
            "--runner",
            runner,
            "--repository",
            str(tmp_path / "repository"),
            "--parameter",
            f"input.directory={DATA}",
            "--parameter",
            f"output.directory={tmp_path / 'out'}",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
        timeout=600,
    )


def _orders() -> list[dict[str, object]]:
    """Every input order, read with the standard library (the shop's CSV, the API's JSON)."""
    found: list[dict[str, object]] = []
    for path in sorted((DATA / "shop").glob("*.csv")):
        with path.open(newline="") as handle:
            found += [
                {**row, "order_id": int(row["order_id"]), "amount": float(row["amount"])}
                for row in csv.DictReader(handle)
            ]
    for path in sorted((DATA / "api").glob("*.json")):
        found += json.loads(path.read_text())
    return found


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run of the example on the direct runner: its output directory."""
    root = tmp_path_factory.mktemp("records-example")
    done = _run(root)
    assert done.returncode == 0, done.stderr
    return root / "out"


def test_valid_orders_land_once_in_their_country_partition_as_parquet(ran: Path) -> None:
    """QueryRecord keeps the CSV orders with a positive amount, UpdateRecord upper-cases every
    country, PartitionRecord and MergeRecord make one Parquet file per country, in
    ``orders/country=XX``: each valid order exactly once, with its values and types."""
    valid = [o for o in _orders() if float(str(o["amount"])) > 0]  # the API sends no others
    expected = sorted(
        (int(str(o["order_id"])), o["customer"], str(o["country"]).upper(), float(str(o["amount"])))
        for o in valid
    )
    written = []
    for directory in sorted((ran / "orders").iterdir()):
        files = list(directory.iterdir())
        assert len(files) == 1, files  # MergeRecord: one bin per country
        table = pq.read_table(files[0])
        assert table.schema.names == ["order_id", "customer", "country", "amount", "ordered_at"]
        rows = table.to_pylist()
        assert {r["country"] for r in rows} == {directory.name.removeprefix("country=")}
        written += [(r["order_id"], r["customer"], r["country"], r["amount"]) for r in rows]
    assert sorted(written) == expected


def test_rejected_orders_are_written_as_json_named_after_their_file(ran: Path) -> None:
    """QueryRecord's ``rejected`` query sends the CSV orders with an amount of 0 or less, as
    JSON, into ``rejected/<file>.rejected.json``."""
    rejected = {
        path.name: [o["order_id"] for o in json.loads(path.read_text())]
        for path in sorted((ran / "rejected").iterdir())
    }
    expected: Counter[str] = Counter()
    for path in sorted((DATA / "shop").glob("*.csv")):
        with path.open(newline="") as handle:
            for row in csv.DictReader(handle):
                if float(row["amount"]) <= 0:
                    expected[f"{path.stem}.rejected.json"] += 1
    assert {name: len(ids) for name, ids in rejected.items()} == dict(expected)


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs a Java runtime")
def test_spark_reads_the_dataset_with_its_country_partitions(ran: Path) -> None:
    """spark.read.parquet over the flow's output reads every valid order with Spark's types,
    the ``country=XX`` directories as the partitions."""
    from flowcore.runners.spark import SparkRunner

    frame = SparkRunner().session.read.parquet(str(ran / "orders"))
    assert dict(frame.dtypes) == {
        "order_id": "int",
        "customer": "string",
        "country": "string",
        "amount": "double",
        "ordered_at": "string",
    }
    counts = {row["country"]: row["count"] for row in frame.groupBy("country").count().collect()}
    expected = Counter(str(o["country"]).upper() for o in _orders() if float(str(o["amount"])) > 0)
    assert counts == dict(expected)
