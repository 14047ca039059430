"""Tests for ModifyBytes: NiFi's TestModifyBytes cases, zero-copy slices, provenance."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowcore import Flow, ProvenanceEventType
from flowcore.errors import ConfigurationError
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import GenerateFlowFile, ModifyBytes, PutFile
from repositories.repository_set import check_repositories

# NiFi's TestModifyBytes/testFile.txt: a 12-byte header and footer around 169 bytes.
_LINES = b"\nFodo DODO cujo Pojo\nBlue Dew clue hew\nGrampa Riley Huey" * 3
TEST_FILE = b"<<<HEADER>>>" + _LINES + b"\n<<<FOOTER>>>"


def modify(content: bytes = TEST_FILE, attributes: dict[str, str] | None = None, **props: object):  # type: ignore[no-untyped-def]
    runner = TestRunner(ModifyBytes(**props))
    runner.enqueue(content, attributes or {})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    return runner, runner.flowfiles_for("success")[0]


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        ("1 MB", "1 MB", b""),
        ("0 MB", "0 MB", TEST_FILE),
        ("12 B", "0 MB", TEST_FILE[12:]),
        ("181 B", "0 B", b"<<<FOOTER>>>"),
        ("0 B", "181 B", b"<<<HEADER>>>"),
        ("0 B", "12 B", TEST_FILE[:-12]),
        ("12 B", "12 B", TEST_FILE[12:-12]),
        ("97 B", "97 B", b""),
        ("94 B", "96 B", b"Dew"),
    ],
)
def test_nifi_cases(start: str, end: str, expected: bytes) -> None:
    """NiFi's cases: header, footer, both, nothing, everything."""
    assert len(TEST_FILE) == 193
    _, out = modify(start_offset=start, end_offset=end)
    out.assert_content_equals(expected)
    assert out.size == len(expected)


def test_offsets_from_attributes() -> None:
    """Both offsets take EL per FlowFile (testRemoveHeaderEL, testKeepHeaderEL)."""
    _, out = modify(attributes={"numBytes": "12 B"}, start_offset="${numBytes}")
    out.assert_content_equals(TEST_FILE[12:])
    _, out = modify(attributes={"numBytes": "181 B"}, end_offset="${numBytes}")
    out.assert_content_equals(b"<<<HEADER>>>")
    runner = TestRunner(ModifyBytes(start_offset="${n}"))
    runner.enqueue(b"abc", {"n": "lots"})
    with pytest.raises(ConfigurationError, match="Start Offset"):
        runner.run()
    assert runner.queue_size() == 1


def test_middle_and_remove_all() -> None:
    """A range in the middle is kept; Remove All Content empties it."""
    _, out = modify(b"xxxxDewyyyyy", start_offset="4 B", end_offset="5 B")
    out.assert_content_equals(b"Dew")
    _, out = modify(remove_all_content="true")
    assert out.size == 0
    out.assert_content_equals(b"")


def test_zero_copy_and_one_content_modified() -> None:
    """The kept range is a slice of the same claim (no byte copied); one CONTENT_MODIFIED each."""
    runner = TestRunner(ModifyBytes(start_offset="12 B", end_offset="12 B"))
    source = runner.enqueue(TEST_FILE).flowfile.content
    runner.run()
    claim = runner.flowfiles_for("success")[0].flowfile.content
    assert source is not None
    assert claim is not None
    assert claim.resource_claim == source.resource_claim  # the same bytes, not a copy
    assert (claim.offset, claim.length) == (source.offset + 12, len(TEST_FILE) - 24)
    types = [e.event_type for e in runner.provenance_events]
    assert types.count(ProvenanceEventType.CONTENT_MODIFIED) == 1
    runner = TestRunner(ModifyBytes())
    runner.enqueue(b"same")
    runner.run()
    types = [e.event_type for e in runner.provenance_events]
    assert types.count(ProvenanceEventType.CONTENT_MODIFIED) == 1  # NiFi rewrites it anyway


def test_in_a_flow_slices_are_kept_and_the_repository_checks_clean(tmp_path: Path) -> None:
    """GenerateFlowFile -> ModifyBytes -> PutFile: the files hold the kept bytes, and the
    repository's claims and counts stay consistent (``flowcore check`` finds nothing)."""
    flow = Flow("cut")
    gen = flow.add(GenerateFlowFile(custom_text="<<abcdef>", batch_size=3), name="gen")
    cut = flow.add(ModifyBytes(start_offset="2 B", end_offset="1 B"), name="cut")
    put = flow.add(
        PutFile(directory=str(tmp_path / "out"), conflict_resolution_strategy="replace"),
        name="put",
    )
    flow.connect(gen, cut)
    flow.connect(cut, put)
    flow.auto_terminate(put, ["success", "failure"])
    result = flow.run("direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    assert result.count("cut", "success") == 3
    assert {p.read_bytes() for p in (tmp_path / "out").iterdir()} == {b"abcdef"}
    assert check_repositories(tmp_path / "repo") == []
