"""Tests for the XMLReader and XMLRecordSetWriter services: properties, validation, round trip."""

from __future__ import annotations

import io

import pytest

from flowcore.controller_service import ServiceContext
from flowcore.errors import ConfigurationError
from flowcore.registry import BUILTIN_SERVICES
from flowcore.testing import TestRunner
from processors import ConvertRecord
from processors.record_services import (
    JsonRecordSetWriter,
    JsonTreeReader,
    XMLReader,
    XMLRecordSetWriter,
)

PEOPLE = b"""<PEOPLE><PERSON ID="P1"><NAME>Cleve Butler</NAME><AGE>42</AGE></PERSON>
<PERSON ID="P2"><NAME>Ainslie Fletcher</NAME><AGE>33</AGE></PERSON></PEOPLE>"""


def _enabled(service):
    return service.enable(ServiceContext(service))


def test_nifi_names_defaults_and_nifi_1_names() -> None:
    """NiFi's defaults; NiFi 1's internal names are aliases; both are registered."""
    reader = XMLReader("r", record_format="true", attribute_prefix="A_")
    assert reader.get_property("Expect Records as Array").value == "true"
    assert reader.get_property("Attribute Prefix").value == "A_"
    assert reader.get_property("Schema Access Strategy").value == "infer-schema"
    assert XMLReader("r").get_property("Parse XML Attributes").value == "true"
    writer = XMLRecordSetWriter("w", suppress_nulls="always-suppress", root_tag_name="root")
    assert writer.get_property("Suppress Null Values").value == "always-suppress"
    assert writer.get_property("Name of Root Tag").value == "root"
    assert writer.get_property("Wrap Elements of Arrays").value == "no-wrapping"
    assert writer.get_property("Character Set").value == "UTF-8"
    assert BUILTIN_SERVICES["XMLReader"] is XMLReader
    assert BUILTIN_SERVICES["XMLRecordSetWriter"] is XMLRecordSetWriter


def test_array_wrapping_needs_array_tag_name() -> None:
    """TestXMLRecordSetWriter.testValidation: NiFi's explanation names both properties."""
    problems = XMLRecordSetWriter(
        "w", array_wrapping="use-property-as-wrapper", root_tag_name="root"
    ).validate()
    (problem,) = [p for p in problems if p.subject == "Array Tag Name"]
    assert "Wrap Elements of Arrays" in problem.explanation
    assert problem.explanation.endswith("has to be set.")
    assert not XMLRecordSetWriter(
        "w", array_wrapping="use-property-as-wrapper", array_tag_name="wrap"
    ).validate()


def test_expect_records_from_the_attribute() -> None:
    """testRecordFormatDeterminedBasedOnAttribute: Use attribute 'xml.stream.is.array' (true/false
    from the FlowFile), else NiFi's error."""
    reader = _enabled(XMLReader("r", expect_records_as_array="${xml.stream.is.array}"))
    rows = [
        r
        for b in reader.create_reader({"xml.stream.is.array": "TRUE"}, io.BytesIO(PEOPLE))
        for r in b.to_pylist()
    ]
    assert [r["ID"] for r in rows] == ["P1", "P2"]
    with pytest.raises(ConfigurationError, match="which is neither 'true' nor 'false'"):
        reader.create_reader({}, io.BytesIO(PEOPLE))


def test_round_trip_through_both_services() -> None:
    """XML read with an inferred schema and written back, pretty printed."""
    reader = _enabled(XMLReader("r", expect_records_as_array="true"))
    writer = _enabled(
        XMLRecordSetWriter(
            "w", root_tag_name="PEOPLE", record_tag_name="PERSON", omit_xml_declaration="true"
        )
    )
    batches = list(reader.create_reader({}, io.BytesIO(PEOPLE)))
    out = io.BytesIO()
    sink = writer.create_writer(batches[0].schema, {}, out)
    for batch in batches:
        sink.write(batch)
    assert sink.finish() == {"record.count": "2", "mime.type": "application/xml"}
    assert out.getvalue() == (
        b"<PEOPLE><PERSON><ID>P1</ID><NAME>Cleve Butler</NAME><AGE>42</AGE></PERSON>"
        b"<PERSON><ID>P2</ID><NAME>Ainslie Fletcher</NAME><AGE>33</AGE></PERSON></PEOPLE>"
    )


def test_convert_record_xml_to_json_and_back() -> None:
    """ConvertRecord with the XML services: XML to JSON, JSON to XML, bad XML to failure."""

    runner = TestRunner(ConvertRecord(record_reader="reader", record_writer="writer"))
    runner.add_service(XMLReader("reader", expect_records_as_array="true"))
    runner.add_service(JsonRecordSetWriter("writer"))
    runner.enqueue(PEOPLE)
    runner.enqueue(b"<PEOPLE><PERSON><NAME>x</NAME></PEOPLE>")
    runner.run(2)
    (out,) = runner.flowfiles_for("success")
    out.assert_content_equals(
        '[{"ID":"P1","NAME":"Cleve Butler","AGE":42},'
        '{"ID":"P2","NAME":"Ainslie Fletcher","AGE":33}]'
    )
    out.assert_attribute_equals("record.count", "2")
    runner.assert_transfer_count("failure", 1)

    back = TestRunner(ConvertRecord(record_reader="reader", record_writer="writer"))
    back.add_service(JsonTreeReader("reader"))
    back.add_service(
        XMLRecordSetWriter(
            "writer", root_tag_name="root", record_tag_name="r", pretty_print_xml="true"
        )
    )
    back.enqueue(b'[{"a": 1, "b": [1, 2]}]')
    back.run()
    (xml,) = back.flowfiles_for("success")
    xml.assert_content_equals(
        '<?xml version="1.0" ?>\n<root>\n  <r>\n    <a>1</a>\n    <b>1</b>\n    <b>2</b>\n'
        "  </r>\n</root>\n"
    )
    xml.assert_attribute_equals("mime.type", "application/xml")
