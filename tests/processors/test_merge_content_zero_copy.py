"""Tests for MergeContent's Zero Copy: a bundle that is a rope over its inputs' contents."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from processors import MergeContent, SplitText
from tests.processors._merge_runner import runner_for


@given(
    contents=st.lists(st.binary(max_size=20), min_size=1, max_size=6),
    delimiters=st.fixed_dictionaries(
        {},
        optional={
            "header": st.text("ab", min_size=1),
            "footer": st.text("c", min_size=1),
            "demarcator": st.text("|\n", min_size=1),
        },
    ),
)
def test_zero_copy_reads_exactly_like_a_copy(contents: list[bytes], delimiters: dict) -> None:
    """With Zero Copy the merged FlowFile is a rope of the inputs and reads byte for byte as
    the copying merge does, delimiters included."""
    results = []
    for zero_copy in (False, True):
        runner = runner_for(
            zero_copy=zero_copy,
            delimiter_strategy="Text",
            minimum_number_of_entries=len(contents),
            maximum_number_of_entries=len(contents),
            **delimiters,
        )
        for data in contents:
            runner.enqueue(data)
        runner.run()
        (bundle,) = runner.flowfiles_for("merged")
        results.append(bundle.content)
    assert results[0] == results[1]


def test_zero_copy_through_a_flow_writes_no_content(tmp_path: Path) -> None:
    """FileSplitter blocks -> MergeContent (Zero Copy) -> SplitText -> PutFile on the engine:
    the merge is a rope over the input files, the splits are slices of it, and the content
    repository stays empty while the output lines are all there."""
    from flowcore import Flow
    from flowcore.driver.controller import run_flow
    from processors import FileSplitter, PutFile, UpdateAttribute

    (tmp_path / "in").mkdir()
    for name in ("a", "b", "c"):
        (tmp_path / "in" / f"{name}.txt").write_text("".join(f"{name}{i}\n" for i in range(30)))
    flow = Flow("zero-copy")
    split_files = flow.add(
        FileSplitter(input_directory=str(tmp_path / "in"), block_size="40 B"), name="blocks"
    )
    merge = flow.add(MergeContent(zero_copy=True, minimum_number_of_entries=1_000), name="m")
    lines = flow.add(SplitText(line_split_count=7, remove_trailing_newlines=False), name="lines")
    put = flow.add(
        PutFile(directory=str(tmp_path / "out"), conflict_resolution_strategy="replace"),
        name="put",
    )
    flow.connect(split_files, merge, "blocks")
    flow.connect(merge, lines, "merged")
    name = flow.add(UpdateAttribute(filename="${uuid}"), name="name")
    flow.connect(lines, name, "splits")
    flow.connect(name, put)
    flow.auto_terminate(split_files, ["files", "failure"])
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(lines, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    result = run_flow(flow, "direct", repository=tmp_path / "repo")
    assert result.count("lines", "splits") > 10
    written = [p for p in (tmp_path / "repo" / "content").rglob("*") if p.is_file()]
    assert written == []
    out = b"".join(p.read_bytes() for p in (tmp_path / "out").iterdir())
    expected = b"".join(p.read_bytes() for p in (tmp_path / "in").iterdir())
    assert sorted(out.splitlines()) == sorted(expected.splitlines())
