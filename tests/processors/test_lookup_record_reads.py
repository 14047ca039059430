"""LookupRecord's reads and answers: the columnar and per-record paths agree, the answers memo
is bounded, the content is parsed once, and the values are kept (microseconds) or widened.

flowcore's own tests beside the ones ported from NiFi's TestLookupRecord (test_lookup_record.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from flowcore.testing import TestRunner
from processors import LookupRecord
from processors.lookup_services import SimpleKeyValueLookupService
from processors.record_services import CSVRecordSetWriter, JsonRecordSetWriter, JsonTreeReader
from tests.processors._lookup_record import (
    SPORTS,
    InPlaceLookup,
    MapLookup,
    people_runner,
    run_once,
)


def test_column_path_agrees_with_the_record_path() -> None:
    """A plain-field coordinate (columns) and the same value by a function (per record) agree.

    4,000 records, some names unknown and some null: the same matched and
    unmatched FlowFiles, byte for byte.
    """
    names = ["John Doe", "Jane Doe", "Jimmy Doe", "Nobody", None]
    people = [{"name": names[i % 5], "age": i % 90} for i in range(4_000)]
    content = json.dumps(people).encode()
    fast = run_once(people_runner(), content)
    slow = run_once(people_runner(lookup="toString(/name, 'UTF-8')"), content)
    for relationship in ("matched", "unmatched"):
        (a,) = fast.flowfiles_for(relationship)
        (b,) = slow.flowfiles_for(relationship)
        assert a.content == b.content
        assert a.attributes["record.count"] == b.attributes["record.count"]
    assert fast.flowfiles_for("matched")[0].attributes["record.count"] == "2400"


class CountingLookup(MapLookup):
    """A lookup that counts the coordinates it was asked and answers each with its key."""

    asked: ClassVar[list[str]] = []

    def lookup(self, coordinates: Mapping[str, Any], context: Mapping[str, str] | None = None):
        """Count, then answer."""
        CountingLookup.asked.append(str(coordinates.get("lookup")))
        return str(coordinates.get("lookup"))


def test_the_memo_of_answers_is_a_bounded_lru() -> None:
    """The answers kept per FlowFile are an LRU of ``entries``: ten distinct keys leave three
    held, the most recent is answered from memory and an evicted one is asked again."""
    from processors._lookup_records import MEMO_ENTRIES, Lookups

    CountingLookup.asked.clear()
    lookups = Lookups(CountingLookup("lookup"), {}, entries=3)
    for n in range(10):
        lookups.get({"lookup": f"k{n}"})
    assert len(lookups) == 3
    lookups.get({"lookup": "k9"})
    lookups.get({"lookup": "k0"})
    assert CountingLookup.asked == [*(f"k{n}" for n in range(10)), "k0"]
    assert Lookups(CountingLookup("lookup"), {}).entries == MEMO_ENTRIES


def test_a_flowfile_of_many_distinct_keys_keeps_at_most_the_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """5,000 distinct names (columnar path) with a bound of 100: every record still enriched
    and routed, and never more than 100 answers held."""
    import processors._lookup_records as memo

    monkeypatch.setattr(memo, "MEMO_ENTRIES", 100)
    held: list[int] = []
    get = memo.Lookups.get

    def watched(self: memo.Lookups, coordinates: Mapping[str, Any]) -> Any:
        held.append(len(self))
        return get(self, coordinates)

    monkeypatch.setattr(memo.Lookups, "get", watched)
    values = {f"n{i}": f"s{i}" for i in range(0, 5_000, 2)}
    content = json.dumps([{"name": f"n{i}", "age": 1} for i in range(5_000)]).encode()
    runner = run_once(people_runner(values), content)
    assert max(held) <= 100
    runner.flowfiles_for("matched")[0].assert_attribute_equals("record.count", "2500")
    runner.flowfiles_for("unmatched")[0].assert_attribute_equals("record.count", "2500")


def test_matched_and_unmatched_come_from_one_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """Routing to matched and unmatched parses the content once (plus NiFi's schema pass,
    which stops at the first match); replacing values in place parses it once."""
    import processors.lookup_record as module

    parses: list[int] = []
    read = module.read_records

    def counted(*args: Any, **kwargs: Any) -> Any:
        parses.append(1)
        return read(*args, **kwargs)

    monkeypatch.setattr(module, "read_records", counted)
    runner = run_once(people_runner({"John Doe": "Soccer", "Jimmy Doe": "Football"}))
    runner.assert_transfer_count("matched", 1)
    runner.assert_transfer_count("unmatched", 1)
    assert len(parses) == 2
    parses.clear()
    runner = run_once(
        people_runner(
            {"John Doe": "Soccer"},
            service=InPlaceLookup("lookup", **{"John Doe": "JD"}),
            result_recordpath=None,
            record_update_strategy="replace-existing-values",
        )
    )
    runner.flowfiles_for("matched")[0].assert_content_equals("JD,48,\n")
    runner.flowfiles_for("unmatched")[0].assert_attribute_equals("record.count", "2")
    assert len(parses) == 1


def test_microseconds_survive_the_lookup() -> None:
    """A TIMESTAMP field read with a SSSSSS format keeps its microseconds in the matched
    records LookupRecord rewrites."""
    micros = "yyyy-MM-dd HH:mm:ss.SSSSSS"
    runner = people_runner(
        service=SimpleKeyValueLookupService("lookup", **SPORTS), lookup=None, key="/name"
    )
    runner.add_service(JsonTreeReader("reader", timestamp_format=micros))
    runner.add_service(
        CSVRecordSetWriter("writer", include_header_line="false", timestamp_format=micros)
    )
    run_once(runner, b'[{"name": "John Doe", "at": "2024-02-06 11:51:28.351567"}]')
    runner.flowfiles_for("matched")[0].assert_content_equals(
        "John Doe,2024-02-06 11:51:28.351567,Soccer\n"
    )


@pytest.mark.parametrize("coordinate", ["/k", "toString(/k, 'UTF-8')"])
def test_a_text_answer_widens_a_boolean_field_to_a_choice_with_string(coordinate: str) -> None:
    """A text answer in a BOOLEAN field makes it CHOICE[BOOLEAN, STRING] (NiFi's inferDataType
    and mergeDataTypes): "1" and "yes" stay text, "TRUE" is written as the boolean NiFi's
    writer picks, unmatched records keep theirs; both lookup paths, one FlowFile of all."""
    runner = TestRunner(
        LookupRecord(
            record_reader="reader",
            record_writer="writer",
            lookup_service="lookup",
            key=coordinate,
            result_recordpath="/v",
            routing_strategy="route-to-success",
        )
    )
    runner.add_service(JsonTreeReader("reader"))
    runner.add_service(JsonRecordSetWriter("writer", schema_write_strategy="full-schema-attribute"))
    runner.add_service(SimpleKeyValueLookupService("lookup", a="1", b="yes", c="TRUE"))
    runner.enqueue(
        b'[{"k":"a","v":true},{"k":"b","v":false},{"k":"c","v":false},{"k":"z","v":true}]'
    )
    runner.run()
    (out,) = runner.flowfiles_for("success")
    out.assert_content_equals(
        '[{"k":"a","v":"1"},{"k":"b","v":"yes"},{"k":"c","v":true},{"k":"z","v":true}]'
    )
    field = json.loads(out.attributes["avro.schema"])["fields"][1]
    assert field["type"] == ["boolean", "string", "null"]
