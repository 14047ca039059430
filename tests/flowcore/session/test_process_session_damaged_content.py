"""Tests for ProcessSession and damaged content: content.failure.reason on a FlowFile whose
content a read found damaged, when the processor routes it to failure itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowcore import FlowFile, Processor
from flowcore.errors import ContentChangedError
from flowcore.testing import TestRunner
from repositories.content import FileContentRepository
from tests.flowcore.session._session_runner import FAILURE, SUCCESS, session_for


class CatchAll(Processor):
    """Reads its FlowFile one way and routes it to failure itself when reading fails."""

    relationships = (SUCCESS, FAILURE)

    def __init__(self, how: str) -> None:
        super().__init__()
        self.how = how

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        flowfile = session.get()
        try:
            if self.how == "read_bytes":
                session.read_bytes(flowfile)
            elif self.how == "stream":
                with session.read(flowfile) as stream:
                    while stream.read(1000):
                        pass
            elif self.how == "rewrite":
                flowfile = session.rewrite(flowfile, lambda i, o: o.write(i.read()))
            elif self.how == "append":
                flowfile = session.append(flowfile, b"more")
            else:
                merged = session.create([flowfile])
                try:
                    session.merge([flowfile], merged)
                finally:
                    session.remove(merged)
        except Exception:
            session.transfer(flowfile, FAILURE)
            return
        session.transfer(flowfile, SUCCESS)


class FileRunner(TestRunner):
    """The harness over a real file content repository, to damage its claim files."""

    __test__ = False

    def __init__(self, processor: Processor, root: Path) -> None:
        super().__init__(processor)
        self.content = FileContentRepository(root)  # type: ignore[assignment]

    def enqueue_written(self, contents: list[bytes]) -> list[FlowFile]:
        writer = self.content.writer("test")
        flowfiles = []
        for data in contents:
            stream = writer.open_stream()
            stream.write(data)
            flowfile = FlowFile.create(self.next_flowfile_id(), self.now(), {"filename": "f"})
            flowfiles.append(flowfile.with_content(stream.close()))
        writer.close()
        for flowfile in flowfiles:
            self.content.increment_claimant_count(flowfile.content.resource_claim)
            self.input_queue.put(flowfile)
        return flowfiles


@pytest.mark.parametrize("how", ["read_bytes", "stream", "rewrite", "append", "merge"])
def test_a_processor_failing_damaged_content_itself_sets_the_reason(
    tmp_path: Path, how: str
) -> None:
    """Damaged content a processor routes to failure itself carries content.failure.reason."""
    runner = FileRunner(CatchAll(how), tmp_path)
    damaged, _sound = runner.enqueue_written([b"x" * 70_000, b"y" * 70_000])
    path = runner.content.path_of(damaged.content.resource_claim)
    raw = bytearray(path.read_bytes())
    raw[10] ^= 1  # block 0: the first FlowFile only
    path.write_bytes(bytes(raw))
    runner.run(2)
    (failed,) = runner.flowfiles_for("failure")
    reason = failed.attributes["content.failure.reason"]
    assert str(damaged.content.resource_claim) in reason
    assert "block 0 (bytes 0 to 65535)" in reason
    (passed,) = runner.flowfiles_for("success")
    assert "content.failure.reason" not in passed.attributes


def test_a_failure_for_another_reason_gets_no_content_reason(tmp_path: Path) -> None:
    """Only a read that found damage marks the FlowFile; other failures leave no reason."""
    path = tmp_path / "outside.txt"
    path.write_bytes(b"hello")
    runner = TestRunner(CatchAll("read_bytes"))
    runner.enqueue(b"fine")
    runner.run()
    assert runner.flowfiles_for("success")
    session = session_for(runner)
    flowfile = session.create()
    flowfile = session.import_by_reference(path, flowfile)
    path.write_bytes(b"changed!")
    with pytest.raises(ContentChangedError):
        session.read_bytes(flowfile)
    session.transfer(flowfile, FAILURE)
    assert (
        "changed after it was listed"
        in session.commit().outputs[0].flowfile.attributes["content.failure.reason"]
    )
