"""Tests for CompressContent: NiFi's properties, mime.type and filename rules, failures, flows."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore import Flow, ProvenanceEventType
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import CompressContent, GetFile, PutFile
from processors._codecs import CODECS
from repositories.repository_set import RepositorySet
from tests.processors._batch_flows import BatchOnly, OneByOne, agree_in_a_flow

TEXT = b"The quick brown fox jumps over the lazy dog.\n" * 200


def _run(content: bytes, attributes: dict[str, str] | None = None, **properties: object):
    runner = TestRunner(CompressContent(**properties))
    runner.enqueue(content, attributes or {})
    runner.run()
    return runner


def test_properties_are_nifis() -> None:
    """Mode, Compression Format, Compression Level, Update Filename with NiFi's defaults."""
    processor = CompressContent()
    names = [(d.display_name, d.default) for d in processor.descriptors()]
    assert names == [
        ("Mode", "compress"),
        ("Compression Format", "use mime.type attribute"),
        ("Compression Level", "1"),
        ("Update Filename", "false"),
    ]
    assert [v.value for v in CompressContent.COMPRESSION_FORMAT.allowable_values][1:] == list(
        CODECS
    )
    assert [r.name for r in processor.relationships] == ["success", "failure"]


def test_compression_level_applies_only_where_nifi_says() -> None:
    """Compression Level depends on Mode compress and the formats that take a level."""
    level = CompressContent.COMPRESSION_LEVEL
    on = {"Mode": "compress", "Compression Format": "zstd"}
    assert level.is_enabled(on)
    assert not level.is_enabled({**on, "Compression Format": "bzip2"})
    assert not level.is_enabled({**on, "Mode": "decompress"})
    TestRunner(CompressContent(compression_level="10")).assert_not_valid()


def test_snappy_hadoop_cannot_be_decompressed() -> None:
    """Decompressing snappy-hadoop is refused at validation with NiFi's explanation."""
    runner = TestRunner(CompressContent(mode="decompress", compression_format="snappy-hadoop"))
    runner.assert_not_valid()
    (problem,) = runner.processor.validate()
    assert "can not be decompressed" in problem.explanation
    TestRunner(CompressContent(compression_format="snappy-hadoop")).assert_valid()


@pytest.mark.parametrize("name", list(CODECS))
def test_compress_sets_mime_type_and_extension(name: str) -> None:
    """Compressing sets the format's mime.type and, with Update Filename, its extension."""
    runner = _run(TEXT, {"filename": "log.txt"}, compression_format=name, update_filename=True)
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("mime.type", CODECS[name].mime_type)
    out.assert_attribute_equals("filename", "log.txt" + CODECS[name].extension)
    assert [e.event_type for e in runner.provenance_events] == [
        ProvenanceEventType.CONTENT_MODIFIED
    ]


@pytest.mark.parametrize("name", [n for n, c in CODECS.items() if c.decompress])
def test_decompress_by_mime_type_removes_it_and_the_extension(name: str) -> None:
    """Decompressing by mime.type gives the content back, drops mime.type and the extension."""
    packed = _run(TEXT, {"filename": "log.txt"}, compression_format=name, update_filename=True)
    out = packed.flowfiles_for("success")[0]
    runner = _run(out.content, dict(out.attributes), mode="decompress", update_filename=True)
    runner.assert_all_flowfiles_transferred("success", 1)
    back = runner.flowfiles_for("success")[0]
    back.assert_content_equals(TEXT)
    back.assert_attribute_not_exists("mime.type")
    back.assert_attribute_equals("filename", "log.txt")


def test_nifi_mime_type_table() -> None:
    """application/x-gzip and application/x-xz name formats too; the extension is kept when
    the name does not end with it, and matched case-insensitively when it does."""
    runner = _run(
        gzip.compress(TEXT),
        {"mime.type": "application/x-gzip", "filename": "A.GZ"},
        mode="decompress",
        update_filename=True,
    )
    runner.flowfiles_for("success")[0].assert_attribute_equals("filename", "A")
    kept = _run(
        gzip.compress(TEXT),
        {"mime.type": "application/gzip", "filename": "a.bin"},
        mode="decompress",
        update_filename=True,
    )
    kept.flowfiles_for("success")[0].assert_attribute_equals("filename", "a.bin")


def test_without_mime_type_to_failure_and_unknown_type_passes() -> None:
    """No mime.type goes to failure; a type naming no format goes to success untouched."""
    _run(TEXT, mode="decompress").assert_all_flowfiles_transferred("failure", 1)
    runner = _run(TEXT, {"mime.type": "text/plain"}, mode="decompress")
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_content_equals(TEXT)
    runner.flowfiles_for("success")[0].assert_attribute_equals("mime.type", "text/plain")
    assert runner.provenance_events == []


def test_corrupt_input_goes_to_failure_unchanged() -> None:
    """Content that is not the format goes to failure with its content and attributes."""
    runner = _run(TEXT, {"mime.type": "application/gzip"}, mode="decompress")
    runner.assert_all_flowfiles_transferred("failure", 1)
    out = runner.flowfiles_for("failure")[0]
    out.assert_content_equals(TEXT)
    out.assert_attribute_equals("mime.type", "application/gzip")


def test_levels_reach_the_codec() -> None:
    """Level 0 gzip stores; deflate writes a zlib stream; zstd doubles NiFi's level."""
    stored = _run(TEXT, compression_format="gzip", compression_level="0")
    assert len(stored.flowfiles_for("success")[0].content) > len(TEXT)
    deflated = _run(TEXT, compression_format="deflate", compression_level="9")
    assert zlib.decompress(deflated.flowfiles_for("success")[0].content) == TEXT


def test_in_a_flow_with_provenance(tmp_path: Path) -> None:
    """GetFile -> CompressContent (gzip) -> PutFile: gzip files out, CONTENT_MODIFIED events."""
    (tmp_path / "in").mkdir()
    for name in ("a.txt", "b.txt"):
        (tmp_path / "in" / name).write_bytes(name.encode() * 1000)
    flow = Flow("compress")
    get = flow.add(GetFile(input_directory=str(tmp_path / "in")), name="get")
    squeeze = flow.add(
        CompressContent(compression_format="gzip", update_filename=True), name="squeeze"
    )
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(get, squeeze)
    flow.connect(squeeze, put, "success")
    flow.auto_terminate(squeeze, "failure")
    flow.auto_terminate(put, ["success", "failure"])
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    assert result.count("squeeze", "success") == 2
    for name in ("a.txt", "b.txt"):
        assert (
            gzip.decompress((tmp_path / "out" / f"{name}.gz").read_bytes()) == name.encode() * 1000
        )
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        kinds = [
            e.event_type
            for e in repos.provenance.search(limit=100)
            if e.component_name == "squeeze"
        ]
    finally:
        repos.close()
    assert kinds.count(ProvenanceEventType.CONTENT_MODIFIED) == 2


_BOUNDED = textwrap.dedent(
    """
    import json, resource, sys
    from pathlib import Path
    from flowcore import Flow
    from flowcore.driver.controller import run_flow
    from flowcore.settings import Settings
    from processors import CompressContent, GetFile, PutFile

    root = Path(sys.argv[1])
    flow = Flow("big")
    get = flow.add(GetFile(input_directory=str(root / "in")), name="get")
    mode = flow.add(CompressContent(mode=sys.argv[2], compression_format="gzip"), name="c")
    put = flow.add(PutFile(directory=str(root / "out")), name="put")
    flow.connect(get, mode)
    flow.connect(mode, put, "success")
    flow.auto_terminate(mode, "failure")
    flow.auto_terminate(put, ["success", "failure"])
    run_flow(flow, "direct", repository=root / "repo", settings=Settings(sync=False))
    # VmHWM, not ru_maxrss: ru_maxrss survives exec and counts the pytest process this was
    # forked from (hundreds of MB late in a full run); VmHWM is this program's own.
    status = [l for l in Path("/proc/self/status").read_text().splitlines() if l[:6] == "VmHWM:"]
    peak = int(status[0].split()[1]) / 1024 if status else (
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    )
    print(json.dumps({"max_rss_mib": peak}))
    """
)


@pytest.mark.slow
def test_a_large_file_compresses_and_decompresses_in_bounded_memory(tmp_path: Path) -> None:
    """A 768 MiB file gzips and gunzips through a flow with a peak RSS far below its size."""
    size = 768 << 20
    (tmp_path / "in").mkdir()
    block = bytes(range(256)) * 4096 + b"\n"  # 1 MiB and a byte: compressible, not trivially
    with (tmp_path / "in" / "big.bin").open("wb") as out:
        written = 0
        while written < size:
            out.write(block[: size - written])
            written += min(len(block), size - written)
    peaks = []
    for mode, source in (("compress", "big.bin"), ("decompress", "big.bin")):
        if mode == "decompress":
            (tmp_path / "out" / source).rename(tmp_path / "in" / source)
        env_root = tmp_path
        done = subprocess.run(
            [sys.executable, "-c", _BOUNDED, str(env_root), mode],
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        )
        peaks.append(json.loads(done.stdout.strip().splitlines()[-1])["max_rss_mib"])
    assert (tmp_path / "out" / "big.bin").stat().st_size == size
    assert max(peaks) < 400, peaks  # MiB: the file is 768


class _BatchOnlyCompressContent(BatchOnly, CompressContent):
    """CompressContent whose FlowFiles must all go through its batch form."""


class _OneByOneCompressContent(OneByOne, CompressContent):
    """CompressContent with its batch form declined."""


#: Formats this machine compresses and decompresses (snappy-hadoop only compresses).
_ROUND_TRIP = sorted(n for n, c in CODECS.items() if c.decompress is not None)


@settings(max_examples=60, deadline=None)
@given(
    codec=st.sampled_from(sorted(CODECS)),
    level=st.sampled_from(["0", "1", "9"]),
    rename=st.booleans(),
    contents=st.lists(st.binary(max_size=40), min_size=1, max_size=6),
)
def test_compressing_batch_form_agrees_with_one_by_one(
    codec: str, level: str, rename: bool, contents: list[bytes]
) -> None:
    """Compressed as a batch, each FlowFile gets the bytes, mime.type, filename and
    CONTENT_MODIFIED event on_trigger gives it."""
    runner = TestRunner(
        CompressContent(compression_format=codec, compression_level=level, update_filename=rename)
    )
    for index, content in enumerate(contents):
        runner.enqueue(content, {"filename": f"f{index}.txt", "mime.type": "text/plain"})
    runner.assert_batch_form_agrees()


@settings(max_examples=40, deadline=None)
@given(
    codecs=st.lists(st.sampled_from(_ROUND_TRIP), min_size=1, max_size=6),
    by_mime_type=st.booleans(),
    contents=st.data(),
)
def test_decompressing_batch_form_agrees_with_one_by_one(
    codecs: list[str], by_mime_type: bool, contents: st.DataObject
) -> None:
    """Decompressed as a batch (one format, or each FlowFile's by its mime.type, an unknown
    type passing untouched), each FlowFile ends as on_trigger leaves it."""
    if not by_mime_type:
        codecs = [codecs[0]] * len(codecs)
    runner = TestRunner(
        CompressContent(
            mode="decompress",
            compression_format="use mime.type attribute" if by_mime_type else codecs[0],
            update_filename=True,
        )
    )
    for index, name in enumerate(codecs):
        codec = CODECS[name]
        packed = _compressed(codec, contents.draw(st.binary(max_size=40)))
        mime = "text/plain" if by_mime_type and index == 2 else codec.mime_type
        runner.enqueue(packed, {"filename": f"f{index}{codec.extension}", "mime.type": mime})
    runner.assert_batch_form_agrees()


def _compressed(codec: object, data: bytes) -> bytes:
    out: list[bytes] = []
    codec.run_compress(io.BytesIO(data), out.append, 1)  # type: ignore[attr-defined]
    return b"".join(out)


def test_a_batch_with_a_failing_flowfile_goes_one_by_one() -> None:
    """Content that is not of the format, or no mime.type, fails one by one with its error:
    the batch declines, and the others still succeed."""
    runner = TestRunner(CompressContent(mode="decompress", compression_format="gzip"))
    runner.enqueue(gzip.compress(b"fine"))
    runner.enqueue(b"not gzip")
    runner.assert_batch_form_agrees(allow_decline=True)
    runner.assert_transfer_count("success", 1)
    runner.assert_transfer_count("failure", 1)
    runner = TestRunner(CompressContent())
    runner.enqueue(b"typed", {"mime.type": "application/gzip"})
    runner.enqueue(b"untyped")
    runner.assert_batch_form_agrees(allow_decline=True)
    assert runner.batch_use.whole == 0


def test_the_batch_form_in_a_flow_agrees_with_one_by_one(tmp_path: Path) -> None:
    """GetFile -> SplitText -> CompressContent (gzip) on the direct runner: the batch form
    records the same events, naming the same bytes before and after, as on_trigger."""
    lines = [f"10.0.0.{i % 250} GET /p/{i}\n".encode() for i in range(300)]
    config = {"compression_format": "gzip", "update_filename": True}
    shapes, transfers = agree_in_a_flow(
        tmp_path, lines, _BatchOnlyCompressContent(**config), _OneByOneCompressContent(**config)
    )
    assert transfers["step"]["success"][0] == 300
    modified = [s for s in shapes.elements() if s[0] == "CONTENT_MODIFIED"]
    assert {gzip.decompress(s[8]) for s in modified} == set(lines)


@pytest.mark.spark
def test_the_batch_form_on_spark_agrees_with_one_by_one(tmp_path: Path) -> None:
    """The same on Spark, compressing with zstd."""
    lines = [f"{i},x\n".encode() for i in range(50)]
    config = {"compression_format": "zstd"}
    agree_in_a_flow(
        tmp_path,
        lines,
        _BatchOnlyCompressContent(**config),
        _OneByOneCompressContent(**config),
        runner="spark",
    )


def test_a_batch_holding_a_large_content_goes_one_by_one() -> None:
    """Past HELD_CONTENT_MAX the batch form declines: one by one streams the content through
    the codec in bounded memory, with the same result."""
    from flowcore.session.batch_context import HELD_CONTENT_MAX

    runner = TestRunner(CompressContent(mode="compress", compression_format="gzip"))
    runner.enqueue(b"small")
    runner.enqueue(bytes(HELD_CONTENT_MAX + 1))
    runner.assert_batch_form_agrees(allow_decline=True)
    assert runner.batch_use.whole == 0
    assert runner.batch_use.declined
    out = runner.flowfiles_for("success")[1]
    assert gzip.decompress(out.content) == bytes(HELD_CONTENT_MAX + 1)
