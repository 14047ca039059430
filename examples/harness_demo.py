"""The web-logs flow, run processor by processor through the test harness.

    GetFile (generated access logs)
      -> SplitText (one FlowFile per line)
      -> ParseAccessLog (a user-written FlowFileTransform, defined below)
      -> RouteOnAttribute (one relationship per HTTP status class)
      -> UpdateAttribute (Expression Language tags)
      -> MergeContent (one bundle per status class, by correlation attribute)
      -> PutFile

Each step is driven by ``flowcore.testing.TestRunner`` through the real ProcessSession; the
output of one step is enqueued into the next. ``examples/web_logs.py`` runs the same processors
as one flow on Spark (``make demo``).
"""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))

from access_logs import STATUS_CLASSES, STATUS_ROUTES, TAGS, ParseAccessLog, generate_logs

from flowcore.testing import MockFlowFile, TestRunner
from processors import (
    GetFile,
    MergeContent,
    PutFile,
    RouteOnAttribute,
    SplitText,
    UpdateAttribute,
)


def feed(runner: TestRunner, flowfiles: list[MockFlowFile]) -> None:
    """Enqueue the output of one step as the input of the next, then run it over all of it."""
    for flowfile in flowfiles:
        runner.enqueue(flowfile.content, dict(flowfile.attributes))
    runner.run(max(1, runner.queue_size()))


def main(workdir: Path) -> None:
    console = Console()
    if workdir.exists():
        shutil.rmtree(workdir)
    expected = generate_logs(workdir / "in")

    get = TestRunner(GetFile(input_directory=str(workdir / "in"), keep_source_file=True))
    get.run()
    split = TestRunner(SplitText(line_split_count=1))
    feed(split, get.flowfiles_for("success"))
    parse = TestRunner(ParseAccessLog())
    feed(parse, split.flowfiles_for("splits"))
    route = TestRunner(RouteOnAttribute(**STATUS_ROUTES))
    feed(route, parse.flowfiles_for("success"))
    tag = TestRunner(UpdateAttribute(**TAGS))
    feed(tag, [f for r in STATUS_CLASSES for f in route.flowfiles_for(r)])
    merge = TestRunner(
        MergeContent(
            correlation_attribute_name="status.class",
            maximum_number_of_entries=10_000,
            delimiter_strategy="Text",
            demarcator="\n",
            max_bin_age="1 min",
        )
    )
    feed(merge, tag.flowfiles_for("success"))
    merge.run(2)  # nothing more arrives: the bins are full enough and merge
    put = TestRunner(
        PutFile(directory=str(workdir / "out"), conflict_resolution_strategy="replace")
    )
    for bundle in merge.flowfiles_for("merged"):
        attributes = dict(bundle.attributes)
        attributes["filename"] = f"{attributes['status.class']}.log"
        put.enqueue(bundle.content, attributes)
    put.run(max(1, put.queue_size()))

    table = Table(title="flowcore harness demo: the web-logs flow, step by step")
    for column in ("step", "relationship", "FlowFiles", "bytes"):
        table.add_column(column, justify="right" if column in ("FlowFiles", "bytes") else "left")
    steps = (
        ("GetFile", get),
        ("SplitText", split),
        ("ParseAccessLog", parse),
        ("RouteOnAttribute", route),
        ("UpdateAttribute", tag),
        ("MergeContent", merge),
        ("PutFile", put),
    )
    for name, runner in steps:
        for relationship in runner.processor.relationship_names():
            out = runner.flowfiles_for(relationship)
            if out:
                table.add_row(name, relationship, str(len(out)), str(sum(f.size for f in out)))
    console.print(table)
    events = Counter(e.event_type.value for _, r in steps for e in r.provenance_events)
    console.print("provenance events:", dict(sorted(events.items())))
    for path in sorted((workdir / "out").iterdir()):
        lines = path.read_text().count("\n") + 1
        console.print(f"  {path.relative_to(workdir)}: {lines} lines")
    sample = next(f for f in tag.flowfiles_for("success") if f.attributes["alert"] == "page-oncall")
    shown = {
        k: v
        for k, v in sample.attributes.items()
        if not k.startswith(("uuid", "fragment", "segment"))
    }
    console.print("a server error after UpdateAttribute:", shown)

    merged_lines = sum(f.content.count(b"\n") + 1 for f in merge.flowfiles_for("merged"))
    assert merged_lines == expected, "every valid line must reach the output exactly once"
    assert len(parse.flowfiles_for("invalid")) == 1


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("demo-output"))
