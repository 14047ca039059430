"""A sink that records what reaches it, and helpers to compare runs on different runners."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

from flowcore import Processor, PropertyDescriptor, Relationship

#: Attributes that differ between two runs of the same flow on copies of the same input.
VOLATILE = frozenset(
    {
        "uuid",
        "fragment.identifier",
        "merge.bin.age",
        "merge.uuid",
        "absolute.path",
        "file.creationTime",
        "file.lastModifiedTime",
        "file.lastAccessTime",
    }
)


class Capture(Processor):
    """Writes each FlowFile (content and stable attributes) to a file named by its digest."""

    DIRECTORY = PropertyDescriptor("Directory", required=True)
    property_descriptors = (DIRECTORY,)
    relationships = (Relationship("success", "captured"),)

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        directory = Path(context.get_property(self.DIRECTORY).value)
        directory.mkdir(parents=True, exist_ok=True)
        for flowfile in session.get(1000):
            attributes = {k: v for k, v in flowfile.attributes.items() if k not in VOLATILE}
            if attributes.get("filename", "").isdigit():
                del attributes["filename"]  # MergeContent names bundles by a clock
            content = session.read_bytes(flowfile).decode("latin-1")
            record = {"content": content, "attributes": attributes}
            text = json.dumps(record, sort_keys=True)
            digest = hashlib.sha256(text.encode()).hexdigest()[:24]
            (directory / f"{digest}-{flowfile.uuid}.json").write_text(text)
            session.transfer(flowfile, "success")


def captured(directory: Path) -> Counter[str]:
    """The multiset of captured FlowFiles (by digest)."""
    if not directory.exists():
        return Counter()
    return Counter(p.name.split("-", 1)[0] for p in directory.iterdir())


def captured_records(directory: Path) -> list[dict]:
    """The captured FlowFiles, sorted by content."""
    records = [json.loads(p.read_text()) for p in directory.iterdir()]
    return sorted(records, key=lambda r: (r["content"], sorted(r["attributes"].items())))
