"""Tests for the write-ahead log framing: whole transactions, torn tails, corruption."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore.errors import WalCorruptionError
from repositories._wal_codec import (
    JOURNAL_COMPLETE,
    JOURNAL_HEADER,
    decode_checkpoint,
    encode_checkpoint,
    encode_transaction,
    read_journal,
)

payloads = st.lists(st.binary(min_size=0, max_size=40), min_size=1, max_size=6)


def journal(tmp_path: Path, frames: list[bytes], tail: bytes = b"") -> tuple[Path, list[int]]:
    data = JOURNAL_HEADER
    ends = []
    for txn_id, payload in enumerate(frames, start=1):
        data += encode_transaction(txn_id, payload)
        ends.append(len(data))
    path = tmp_path / "1.journal"
    path.write_bytes(data + tail)
    return path, ends


def test_round_trip_and_clean_end(tmp_path: Path) -> None:
    """Whole transactions read back in order; the completion marker means a clean close."""
    path, _ = journal(tmp_path, [b"a", b"bb"], bytes([JOURNAL_COMPLETE]))
    result = read_journal(path)
    assert [(f.txn_id, f.payload) for f in result.frames] == [(1, b"a"), (2, b"bb")]
    assert result.clean
    assert result.warning is None


@given(payloads, st.data())
def test_truncation_at_any_byte_keeps_whole_transactions(
    tmp_path_factory, frames: list[bytes], data: st.DataObject
) -> None:  # type: ignore[no-untyped-def]
    """Cutting the journal anywhere keeps exactly the transactions that ended before the cut."""
    path, ends = journal(tmp_path_factory.mktemp("wal"), frames)
    full = path.read_bytes()
    cut = data.draw(st.integers(len(JOURNAL_HEADER), len(full)))
    path.write_bytes(full[:cut])
    result = read_journal(path)
    assert len(result.frames) == sum(1 for end in ends if end <= cut)
    assert (result.warning is None) == (cut in ends or cut == len(JOURNAL_HEADER))


@given(payloads, st.integers(1, 5000))
def test_trailing_zeros_end_the_journal(tmp_path_factory, frames: list[bytes], zeros: int) -> None:  # type: ignore[no-untyped-def]
    """Zero bytes after the last transaction (power loss) end it with a warning."""
    path, _ = journal(tmp_path_factory.mktemp("wal"), frames, b"\x00" * zeros)
    result = read_journal(path)
    assert len(result.frames) == len(frames)
    assert "zero bytes" in (result.warning or "")


def test_corruption_in_the_middle_names_file_and_offset(tmp_path: Path) -> None:
    """A damaged transaction followed by data is corruption, reported with file and offset."""
    path, ends = journal(tmp_path, [b"first", b"second", b"third"])
    data = bytearray(path.read_bytes())
    data[ends[0] + 20] ^= 0xFF  # inside the second payload
    path.write_bytes(bytes(data))
    with pytest.raises(WalCorruptionError, match=rf"{path.name} is corrupt at offset {ends[0]}"):
        read_journal(path)
    data = bytearray(path.read_bytes())
    data[ends[0]] = 0x13  # a bad marker
    path.write_bytes(bytes(data))
    with pytest.raises(WalCorruptionError, match="unexpected byte 0x13"):
        read_journal(path)


def test_last_transaction_with_bad_checksum_is_a_torn_tail(tmp_path: Path) -> None:
    """A final transaction whose bytes are garbage was torn by a crash; it is dropped."""
    path, _ = journal(tmp_path, [b"first", b"second"])
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    result = read_journal(path)
    assert [f.payload for f in result.frames] == [b"first"]
    assert "torn" in (result.warning or "")


def test_bad_headers_and_versions(tmp_path: Path) -> None:
    """A file that is not a journal, or of another version, is refused."""
    path = tmp_path / "1.journal"
    path.write_bytes(b"garbage, not a journal at all")
    with pytest.raises(WalCorruptionError, match="not a flowcore journal"):
        read_journal(path)
    path.write_bytes(JOURNAL_HEADER[:-2] + b"\x00\x09")
    with pytest.raises(WalCorruptionError, match="version 9"):
        read_journal(path)


def test_checkpoint_round_trip_and_damage(tmp_path: Path) -> None:
    """Checkpoints read back; any damage is corruption (they are fsynced before use)."""
    path = tmp_path / "checkpoint"
    path.write_bytes(encode_checkpoint(42, b"payload"))
    assert decode_checkpoint(path) == (42, b"payload")
    path.write_bytes(encode_checkpoint(42, b"payload")[:-1])
    with pytest.raises(WalCorruptionError, match="checksum"):
        decode_checkpoint(path)
    path.write_bytes(b"nope")
    with pytest.raises(WalCorruptionError, match="not a flowcore checkpoint"):
        decode_checkpoint(path)
