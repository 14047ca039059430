"""Tests for ``flowcore dataset``, run as the real command."""

from __future__ import annotations

from pathlib import Path

from flowcore.datasets import Chunk, Dataset, Manifest
from flowcore.datasets.store import write_chunk
from tests.flowcore.cli.conftest import piped_to_head

LINE = b"a line of the dataset\n"


def big_dataset(root: Path) -> Path:
    """A dataset of 4 MB of lines: more than a pipe holds."""
    dataset = Dataset(root)
    data = LINE * 200_000
    write_chunk(dataset.chunk_path("c1"), [data])
    dataset.stage(Manifest(1, (Chunk("c1", len(data), 200_000, 0),), demarcator=b""))
    dataset.publish(1)
    return dataset.path


def test_cat_piped_to_head_stops_quietly_with_141(tmp_path: Path) -> None:
    """`flowcore dataset cat DS | head`: head gets its lines, flowcore prints nothing on stderr
    and exits with 141, as `cat` killed by SIGPIPE does."""
    path = big_dataset(tmp_path / "ds")
    out, err, status = piped_to_head(tmp_path, "dataset", "cat", str(path), head="-n 3")
    assert out == LINE * 3
    assert err == ""
    assert status == 141
