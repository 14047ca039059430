"""A small real flow run through the processor test harness.

    generated access-log lines
      -> ParseAccessLog (a user-written FlowFileTransform, defined below)
      -> RouteOnAttribute (one relationship per HTTP status class)
      -> UpdateAttribute (tags each FlowFile with Expression Language)

Each step is driven by ``flowcore.testing.TestRunner`` through the real ProcessSession, exactly as
the engine will drive it; the output of one step is enqueued into the next. Until the Spark engine
lands this is what ``make demo`` runs.
"""

from __future__ import annotations

import random
import re
from collections import Counter

from rich.console import Console
from rich.table import Table

from flowcore import FlowFileTransform, PropertyDescriptor, Relationship, TransformResult
from flowcore.testing import TestRunner
from flowcore.validators import REGULAR_EXPRESSION_VALIDATOR
from processors import RouteOnAttribute, UpdateAttribute

LOG_PATTERN = (
    r'(?P<ip>\S+) \S+ \S+ \[(?P<time>[^\]]+)\] "(?P<method>\S+) (?P<request>\S+) [^"]*" '
    r"(?P<status>\d{3}) (?P<bytes>\d+)"
)


class ParseAccessLog(FlowFileTransform):
    """Parses one access-log line into attributes; lines that do not match go to 'invalid'."""

    LINE_PATTERN = PropertyDescriptor(
        "Line Pattern",
        description="Regex with named groups; each group becomes an attribute",
        required=True,
        default=LOG_PATTERN,
        validators=(REGULAR_EXPRESSION_VALIDATOR,),
    )
    property_descriptors = (LINE_PATTERN,)
    relationships = (
        Relationship("success", "Parsed lines"),
        Relationship("invalid", "Lines that do not match the pattern"),
        Relationship("failure", "Content that is not UTF-8 text"),
    )

    def transform(self, context, flowfile):
        match = re.match(context.get_property(self.LINE_PATTERN).value, flowfile.text())
        if match is None:
            return TransformResult(relationship="invalid")
        return TransformResult(attributes=dict(match.groupdict().items()))


def generate_lines(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    paths = ["/", "/index.html", "/api/orders", "/api/users/42", "/static/app.js", "/login"]
    statuses = [200] * 12 + [201, 204, 301, 302, 304, 400, 401, 403, 404, 404, 500, 502, 503]
    lines = []
    for i in range(count):
        ip = f"10.0.{rng.randint(0, 9)}.{rng.randint(1, 254)}"
        when = f"22/Nov/2026:10:{i // 60 % 60:02d}:{i % 60:02d} +0000"
        method = rng.choice(["GET", "GET", "GET", "POST"])
        lines.append(
            f'{ip} - - [{when}] "{method} {rng.choice(paths)} HTTP/1.1" '
            f"{rng.choice(statuses)} {rng.randint(120, 9000)}"
        )
    lines.append("this line is not an access log line")
    return lines


def main() -> None:
    console = Console()
    lines = generate_lines(200)

    parse = TestRunner(ParseAccessLog())
    for line in lines:
        parse.enqueue(line, {"source.file": "access.log"})
    parse.run(len(lines))

    route = TestRunner(
        RouteOnAttribute(
            **{
                "success": "${status:startsWith('2')}",
                "redirect": "${status:startsWith('3')}",
                "client_error": "${status:startsWith('4')}",
                "server_error": "${status:ge(500)}",
            }
        )
    )
    for out in parse.flowfiles_for("success"):
        route.enqueue(out.content, dict(out.attributes))
    route.run(route.queue_size())

    tag = TestRunner(
        UpdateAttribute(
            **{
                "status.class": "${RouteOnAttribute.Route}",
                "alert": "${status:ge(500):ifElse('page-oncall', 'none')}",
                "endpoint": "${request:substringBefore('/42')}",
                "received": "${time:toDate('dd/MMM/yyyy:HH:mm:ss Z')"
                ":format('yyyy-MM-dd HH:mm:ss', 'UTC')}",
                "Delete Attributes Expression": "source\\..*",
            }
        )
    )
    for relationship in ("success", "redirect", "client_error", "server_error"):
        for out in route.flowfiles_for(relationship):
            tag.enqueue(out.content, dict(out.attributes))
    tag.run(tag.queue_size())
    tagged = tag.flowfiles_for("success")

    table = Table(title="flowcore harness demo: access log -> parse -> route -> tag")
    for column in ("step", "relationship", "FlowFiles", "bytes"):
        table.add_column(column, justify="right" if column in ("FlowFiles", "bytes") else "left")
    for name, runner in (
        ("ParseAccessLog", parse),
        ("RouteOnAttribute", route),
        ("UpdateAttribute", tag),
    ):
        for relationship in runner.processor.relationship_names():
            flowfiles = runner.flowfiles_for(relationship)
            if flowfiles:
                table.add_row(
                    name, relationship, str(len(flowfiles)), str(sum(f.size for f in flowfiles))
                )
    console.print(table)

    events = Counter(e.event_type.value for r in (parse, route, tag) for e in r.provenance_events)
    console.print("provenance events:", dict(sorted(events.items())))
    by_class = Counter(f.attributes["status.class"] for f in tagged)
    console.print("FlowFiles per status class:", dict(sorted(by_class.items())))
    sample = next(f for f in tagged if f.attributes["alert"] == "page-oncall")
    shown = {k: v for k, v in sample.attributes.items() if k != "uuid"}
    console.print("a server error, as it left UpdateAttribute:", shown)
    console.print("its content:", sample.content.decode())
    assert len(tagged) == len(lines) - 1, "every parsed line must come out tagged"
    assert all("source.file" not in f.attributes for f in tagged)


if __name__ == "__main__":
    main()
