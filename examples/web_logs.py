"""The web-logs flow: access logs in, one merged file per HTTP status class out.

    GetFile (a directory of generated access logs)
      -> SplitText (one FlowFile per line)
      -> ParseAccessLog (a user-written FlowFileTransform: regex groups become attributes)
      -> RouteOnAttribute (one relationship per status class)
      -> UpdateAttribute (Expression Language tags)
      -> MergeContent (one bundle per status class: Correlation Attribute Name)
      -> UpdateAttribute (names the bundle) -> PutFile

Run it on Spark (``local[*]``) with a summary::

    python examples/web_logs.py [WORKDIR] [--runner direct|spark] [--files N] [--lines N]

or as a flow file: ``flowcore run examples/web_logs.py`` (it reads ``$WEB_LOGS_DATA/in``,
default ``examples/web-logs-data/in``, and writes ``.../out``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from access_logs import STATUS_CLASSES, STATUS_ROUTES, TAGS, ParseAccessLog, generate_logs

from flowcore import Flow
from processors import (
    GetFile,
    MergeContent,
    PutFile,
    RouteOnAttribute,
    SplitText,
    UpdateAttribute,
)

DATA = Path(os.environ.get("WEB_LOGS_DATA", Path(__file__).resolve().parent / "web-logs-data"))


def build_flow(data: Path) -> Flow:
    """The flow over *data*/in, writing *data*/out."""
    flow = Flow("web-logs")
    get = flow.add(GetFile(input_directory=str(data / "in"), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    parse = flow.add(ParseAccessLog(), name="parse")
    route = flow.add(
        RouteOnAttribute(**STATUS_ROUTES),
        name="route",
    )
    tag = flow.add(
        UpdateAttribute(**TAGS),
        name="tag",
    )
    merge = flow.add(
        MergeContent(
            correlation_attribute_name="status.class",
            minimum_number_of_entries=100_000,
            maximum_number_of_entries=100_000,
            delimiter_strategy="Text",
            demarcator="\n",
            max_bin_age="5 min",
        ),
        name="merge",
    )
    name = flow.add(UpdateAttribute(filename="${status.class}.log"), name="name")
    put = flow.add(
        PutFile(directory=str(data / "out"), conflict_resolution_strategy="replace"), name="put"
    )
    flow.connect(get, split)
    flow.connect(split, parse, "splits")
    flow.connect(parse, route, "success")
    flow.connect(route, tag, list(STATUS_CLASSES))
    flow.connect(tag, merge)
    flow.connect(merge, name, "merged")
    flow.connect(name, put)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(parse, ["invalid", "failure"])
    flow.auto_terminate(route, "unmatched")
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    return flow


flow = build_flow(DATA)


def draw_pictures(demo: Flow, workdir: Path, provenance: Any) -> list[tuple[str, Path]]:
    """Draw the flow with the run's counts, and one merged file's lineage, beside the output.

    SVG when Graphviz's ``dot`` program is installed, else DOT text (``dot -Tsvg`` draws it).
    """
    from flowcore.errors import DrawingError  # noqa: PLC0415
    from flowcore.pictures.lineage_picture import lineage_picture  # noqa: PLC0415
    from flowcore.pictures.render import render  # noqa: PLC0415

    repository = workdir / ".flowcore"
    try:
        drawn, suffix = demo.explain("svg", repository=repository), "svg"
    except DrawingError:
        drawn, suffix = demo.explain("dot", repository=repository), "dot"
    written = [("the flow, with this run's counts", workdir / f"web-logs.{suffix}")]
    written[0][1].write_text(drawn)
    sent = provenance.search(event_type="SEND", limit=1)
    if sent:
        uuid = sent[0].flowfile_uuid
        picture = lineage_picture(provenance.lineage(uuid), uuid)
        path = workdir / f"lineage.{suffix}"
        path.write_text(render(picture, suffix))
        written.append((f"the lineage of {sent[0].filename} (FlowFile {uuid})", path))
    return written


def main(argv: list[str] | None = None) -> None:
    """Generate logs, run the flow, print a summary and the plan."""
    from rich.console import Console  # noqa: PLC0415

    from flowcore.cli import print_result  # noqa: PLC0415

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workdir", nargs="?", default=str(DATA))
    parser.add_argument("--runner", choices=("direct", "spark"), default="spark")
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--lines", type=int, default=2_000)
    args = parser.parse_args(argv)
    console = Console()
    workdir = Path(args.workdir).resolve()
    if workdir.exists():
        shutil.rmtree(workdir)
    expected = generate_logs(workdir / "in", files=args.files, lines=args.lines)
    demo = build_flow(workdir)
    console.rule(f"web-logs: {args.files} files, {expected:,} access-log lines")
    result = demo.run(args.runner, repository=workdir / ".flowcore")
    print_result(result)
    console.rule("plan")
    console.print(result.plan, highlight=False, markup=False)
    console.rule("output files")
    lines = 0
    for path in sorted((workdir / "out").iterdir()):
        count = path.read_text().count("\n") + 1
        lines += count
        console.print(f"  {path.relative_to(workdir)}: {count:,} lines, {path.stat().st_size:,} B")
    events = Counter()
    from repositories.repository_set import RepositorySet  # noqa: PLC0415

    repositories = RepositorySet.open(workdir / ".flowcore")
    try:
        for event in repositories.provenance.search(limit=10_000_000):
            events[event.event_type.value] += 1
        pictures = draw_pictures(demo, workdir, repositories.provenance)
    finally:
        repositories.close()
    console.print("provenance events by type:", dict(sorted(events.items())))
    console.rule("pictures")
    for what, path in pictures:
        console.print(f"  {what}: {path}", highlight=False, soft_wrap=True)
    if lines != expected:
        sys.exit(f"expected {expected} lines in the output, found {lines}")


if __name__ == "__main__":
    main()
