"""Access logs for the examples: a generator and a user-written parser processor.

``ParseAccessLog`` is what NiFi users would do with ExtractText: a regex with named groups turns
one log line into attributes. It is a :class:`~flowcore.FlowFileTransform`, the short way to
write a per-FlowFile processor.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from flowcore import FlowFileTransform, PropertyDescriptor, Relationship, TransformResult
from flowcore.validators import REGULAR_EXPRESSION_VALIDATOR

__all__ = [
    "LOG_PATTERN",
    "STATUS_CLASSES",
    "STATUS_ROUTES",
    "TAGS",
    "ParseAccessLog",
    "generate_logs",
]

LOG_PATTERN = (
    r'(?P<ip>\S+) \S+ \S+ \[(?P<time>[^\]]+)\] "(?P<method>\S+) (?P<request>\S+) [^"]*" '
    r"(?P<status>\d{3}) (?P<bytes>\d+)"
)
STATUS_CLASSES = ("success", "redirect", "client_error", "server_error")

#: RouteOnAttribute's dynamic properties: one relationship per HTTP status class.
STATUS_ROUTES = {
    "success": "${status:startsWith('2')}",
    "redirect": "${status:startsWith('3')}",
    "client_error": "${status:startsWith('4')}",
    "server_error": "${status:ge(500)}",
}
#: UpdateAttribute's properties: the status class, an alert flag, a normalised time.
TAGS = {
    "status.class": "${RouteOnAttribute.Route}",
    "alert": "${status:ge(500):ifElse('page-oncall', 'none')}",
    "received": "${time:toDate('dd/MMM/yyyy:HH:mm:ss Z'):format('yyyy-MM-dd HH:mm:ss', 'UTC')}",
    "Delete Attributes Expression": "file\\..*",
}


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
        return TransformResult(attributes=match.groupdict())


def generate_logs(directory: Path, files: int = 3, lines: int = 200, seed: int = 7) -> int:
    """Write access-log files; return how many valid lines they hold."""
    rng = random.Random(seed)
    paths = ["/", "/index.html", "/api/orders", "/api/users/42", "/static/app.js", "/login"]
    statuses = [200] * 12 + [201, 204, 301, 302, 304, 400, 401, 403, 404, 404, 500, 502, 503]
    directory.mkdir(parents=True, exist_ok=True)
    for f in range(files):
        rows = []
        for i in range(lines):
            ip = f"10.0.{rng.randint(0, 9)}.{rng.randint(1, 254)}"
            when = f"22/Nov/2026:1{f}:{i // 60 % 60:02d}:{i % 60:02d} +0000"
            method = rng.choice(["GET", "GET", "GET", "POST"])
            rows.append(
                f'{ip} - - [{when}] "{method} {rng.choice(paths)} HTTP/1.1" '
                f"{rng.choice(statuses)} {rng.randint(120, 9000)}\n"
            )
        if f == 0:
            rows.insert(5, "this line is not an access log line\n")
        (directory / f"access-{f}.log").write_text("".join(rows))
    return files * lines
