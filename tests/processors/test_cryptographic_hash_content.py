"""Tests for CryptographicHashContent: NiFi's algorithms and names, empty content, batches."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import AttributesToJSON, CryptographicHashContent, GetFile, PutFile

# Published test vectors (NIST FIPS 180-4 / 202 examples, RFC 7693's BLAKE2b)
VECTORS = [
    ("MD5", b"", "d41d8cd98f00b204e9800998ecf8427e"),
    ("SHA-1", b"abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
    ("SHA-256", b"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    ("SHA-512/224", b"abc", "4634270f707b6a54daae7530460842e20e37ed265ceee9a43e8924aa"),
    ("SHA3-256", b"abc", "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"),
    ("BLAKE2-160", b"", "3345524abf6bbe1809449224b5972c41790b6cf2"),
    ("BLAKE2-256", b"", "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8"),
]


@pytest.mark.parametrize(("algorithm", "content", "digest"), VECTORS)
def test_known_digests_under_nifi_s_attribute_names(
    algorithm: str, content: bytes, digest: str
) -> None:
    """content_<algorithm> holds the lower-case hex digest; one ATTRIBUTES_MODIFIED event."""
    runner = TestRunner(CryptographicHashContent(hash_algorithm=algorithm))
    runner.enqueue(content)
    runner.run()
    (out,) = runner.flowfiles_for("success")
    out.assert_attribute_equals(f"content_{algorithm}", digest)
    out.assert_content_equals(content)
    assert [e.event_type.value for e in runner.provenance_events] == ["ATTRIBUTES_MODIFIED"]


def test_every_listed_algorithm_but_md2_works() -> None:
    """NiFi's seventeen names are offered; MD2 is refused by validation, the rest hash."""
    names = [v.value for v in CryptographicHashContent.HASH_ALGORITHM.allowable_values]
    assert names[0] == "MD2"
    assert len(names) == 17
    (problem,) = CryptographicHashContent(hash_algorithm="MD2").validate()
    assert "MD2 is not available" in problem.explanation
    for name in names[1:]:
        runner = TestRunner(CryptographicHashContent(hash_algorithm=name))
        runner.enqueue(b"apachenifi")
        runner.run()
        runner.flowfiles_for("success")[0].assert_attribute_exists(f"content_{name}")
    descriptions = {
        v.value: v.description for v in CryptographicHashContent.HASH_ALGORITHM.allowable_values
    }
    assert descriptions["SHA-1"].startswith(
        "SHA-1 (20 byte output) [WARNING -- Cryptographically broken]"
    )


def test_empty_content_is_hashed_unless_it_should_fail() -> None:
    """Empty content hashes by default; with Fail if the content is empty it goes to failure."""
    runner = TestRunner(CryptographicHashContent())
    runner.enqueue(b"")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner = TestRunner(CryptographicHashContent(fail_if_the_content_is_empty="true"))
    runner.enqueue(b"")
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    runner.flowfiles_for("failure")[0].assert_attribute_not_exists("content_SHA-256")
    assert runner.provenance_events == []


def test_large_content_is_streamed() -> None:
    """Content past the read chunk gives the same digest as the whole."""
    import hashlib

    content = bytes(range(256)) * 20_000
    runner = TestRunner(CryptographicHashContent(hash_algorithm="SHA-512"))
    runner.enqueue(content)
    runner.run()
    expected = hashlib.sha512(content).hexdigest()
    runner.flowfiles_for("success")[0].assert_attribute_equals("content_SHA-512", expected)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    contents=st.lists(st.binary(max_size=40), min_size=1, max_size=10),
    fail_empty=st.sampled_from(["true", "false"]),
    algorithm=st.sampled_from(["MD5", "SHA-256", "BLAKE2-160", "SHA3-512"]),
)
def test_batch_form_agrees_with_on_trigger(
    contents: list[bytes], fail_empty: str, algorithm: str
) -> None:
    """The batch form hashes each FlowFile as on_trigger does, empty ones routed alike."""
    runner = TestRunner(
        CryptographicHashContent(hash_algorithm=algorithm, fail_if_the_content_is_empty=fail_empty)
    )
    for content in contents:
        runner.enqueue(content, {"content_MD5": "stale"})
    runner.assert_batch_form_agrees()
    assert runner.batch_use.whole == len(contents)


def test_in_a_flow(tmp_path: Path) -> None:
    """GetFile -> CryptographicHashContent -> AttributesToJSON -> PutFile, in the engine."""
    inbox = tmp_path / "in"
    inbox.mkdir()
    (inbox / "abc.txt").write_bytes(b"abc")
    flow = Flow("hash")
    get = flow.add(GetFile(input_directory=str(inbox)), name="get")
    hashing = flow.add(CryptographicHashContent(), name="hash")
    to_json = flow.add(
        AttributesToJSON(attributes_list="content_SHA-256", destination="flowfile-content"),
        name="to-json",
    )
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(get, hashing)
    flow.connect(hashing, to_json, "success")
    flow.connect(to_json, put, "success")
    flow.auto_terminate(hashing, "failure")
    flow.auto_terminate(to_json, "failure")
    flow.auto_terminate(put, ["success", "failure"])
    run_flow(
        flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False, parallelism=1)
    )
    assert (tmp_path / "out" / "abc.txt").read_text() == (
        '{"content_SHA-256":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}'
    )
