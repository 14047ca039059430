"""Tests for the package face: compiled paths, the cache, pickling, relative evaluation."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs

from flowcore.record_path import (
    RecordPath,
    compile_record_path,
    is_valid_record_path,
)


def test_compile_is_cached_by_text() -> None:
    """The same text gives the same compiled path (NiFi's RecordPathCache)."""
    assert compile_record_path("/a/b") is compile_record_path("/a/b")
    assert compile_record_path("/a/b") == RecordPath("/a/b", compile_record_path("/a/b").tree)


def test_pickles_as_its_text() -> None:
    """A compiled path pickles small (its text) and unpickles through the cache."""
    path = compile_record_path("/accounts[*][./balance > 100]/id")
    data = pickle.dumps(path)
    assert len(data) < 200
    assert pickle.loads(data) is path


@attrs.frozen
class _HoldsPaths:
    """A processor-like value holding compiled paths, as Spark ships one."""

    paths: tuple[RecordPath, ...]


def test_a_holder_ships_to_another_process(tmp_path: Path) -> None:
    """A value holding compiled paths unpickles in a fresh interpreter and evaluates there."""
    holder = _HoldsPaths((compile_record_path("/name"), compile_record_path("count(//id)")))
    blob = tmp_path / "paths.pickle"
    blob.write_bytes(pickle.dumps(holder.paths))
    code = (
        "import pickle, sys; paths = pickle.loads(open(sys.argv[1], 'rb').read()); "
        "record = {'name': 'x', 'id': 1, 'a': {'id': 2}}; "
        "print([[fv.value for fv in p.evaluate(record)] for p in paths])"
    )
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, "-c", code, str(blob)],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
    )
    assert done.stdout.strip() == "[['x'], [2]]"


def test_is_absolute() -> None:
    """Paths from the root are absolute; ``.``/``..`` starts and functions are not."""
    assert compile_record_path("/a").is_absolute
    assert not compile_record_path("./a").is_absolute
    assert not compile_record_path("concat(/a)").is_absolute


def test_is_valid_record_path() -> None:
    """The validator processors use says whether a property value compiles."""
    assert is_valid_record_path("/a[0]")
    assert not is_valid_record_path("/a[")


def test_update_record_relative_replacement(record: dict[str, Any]) -> None:
    """UpdateRecord's Relative strategy: for each field the path selects, evaluate the
    replacement from that field as context and write the result back."""
    selected = compile_record_path("/accounts[*]/address").evaluate(record)
    replacement = compile_record_path("concat(./city, ', ', ./state)")
    for fv in selected:
        (value,) = replacement.evaluate(record, context=fv)
        fv.update_value(value.value)
    assert [a["address"] for a in record["accounts"]] == ["Las Vegas, Nevada", "Austin, Texas"]


def test_iter_values_is_lazy(record: dict[str, Any]) -> None:
    """iter_values yields one FieldValue at a time (no list built for a large array)."""
    values = compile_record_path("/numbers[*]").iter_values(record)
    assert next(values).value == 0
    assert next(values).value == 1
