"""Tests for the XMLReader codec (cases after NiFi's TestXMLRecordReader)."""

from __future__ import annotations

import io
import json

import pytest

from flowcore.errors import RecordError
from flowcore.records import schema as s
from flowcore.records.xml_reader import XmlReaderOptions, read_xml

PEOPLE = """<PEOPLE attr="attr1">
  <PERSON ID="P1"><NAME>Cleve Butler</NAME><AGE>42</AGE><COUNTRY>USA</COUNTRY></PERSON>
  <PERSON ID="P2"><NAME>Ainslie Fletcher</NAME><AGE>33</AGE><COUNTRY>UK</COUNTRY></PERSON>
  <PERSON ID="P3"><NAME>Amélie Bonfils</NAME><AGE>74</AGE><COUNTRY>FR</COUNTRY></PERSON>
  <PERSON ID="P4"><NAME>Elenora Scrivens</NAME><AGE>16</AGE><COUNTRY>USA</COUNTRY></PERSON>
</PEOPLE>""".encode()
TAG_IN_CHARACTERS = b"""<PEOPLE>
  <PERSON ID="P1"><NAME ATTR="attr content">Cleve <INNER>inner content</INNER>Butler</NAME>
    <AGE>42</AGE></PERSON>
  <PERSON ID="P2"><NAME ATTR="attr content">Ainslie <INNER>inner content</INNER>Fletcher</NAME>
    <AGE>33</AGE></PERSON>
  <PERSON ID="P5"><NAME><INNER>inner content</INNER></NAME></PERSON>
</PEOPLE>"""
SIMPLE = s.RecordSchema.of({"NAME": s.STRING, "AGE": s.INT, "COUNTRY": s.STRING})
ARRAY = XmlReaderOptions(records_as_array=True, content_field_name="CONTENT")


def _rows(data: bytes, options: XmlReaderOptions = ARRAY, schema=None) -> list[dict]:
    return [r for b in read_xml(io.BytesIO(data), options, schema) for r in b.to_pylist()]


def test_single_record() -> None:
    """testSingleRecord: without Expect Records as Array the root is the record."""
    person = (
        b'<PERSON ID="P1"><NAME>Cleve Butler</NAME><AGE>42</AGE><COUNTRY>USA</COUNTRY></PERSON>'
    )
    rows = _rows(person, XmlReaderOptions(content_field_name="CONTENT"), SIMPLE)
    assert rows == [{"NAME": "Cleve Butler", "AGE": 42, "COUNTRY": "USA"}]


def test_simple_record() -> None:
    """testSimpleRecord: each element inside the wrapper is a record, coerced to the schema."""
    rows = _rows(PEOPLE, schema=SIMPLE)
    assert [list(r.values()) for r in rows] == [
        ["Cleve Butler", 42, "USA"],
        ["Ainslie Fletcher", 33, "UK"],
        ["Amélie Bonfils", 74, "FR"],
        ["Elenora Scrivens", 16, "USA"],
    ]


def test_simple_record_with_attribute() -> None:
    """testSimpleRecordWithAttribute: an attribute is a field of its name."""
    schema = s.RecordSchema.of({**{f.name: f.type for f in SIMPLE}, "ID": s.STRING})
    rows = _rows(PEOPLE, schema=schema)
    assert rows[0] == {"NAME": "Cleve Butler", "AGE": 42, "COUNTRY": "USA", "ID": "P1"}
    assert rows[3]["ID"] == "P4"


def test_attribute_prefix_and_no_attributes() -> None:
    """testSimpleRecordWithAttribute2/3: a prefix names attributes; not parsing drops them."""
    schema = s.RecordSchema.of({"ATTR_ID": s.STRING, "NAME": s.STRING})
    prefixed = XmlReaderOptions(records_as_array=True, attribute_prefix="ATTR_")
    assert _rows(PEOPLE, prefixed, schema)[1] == {"ATTR_ID": "P2", "NAME": "Ainslie Fletcher"}
    inferred = _rows(PEOPLE, XmlReaderOptions(records_as_array=True, parse_xml_attributes=False))
    assert "ID" not in inferred[0]


def test_tag_in_characters_simple_field() -> None:
    """testTagInCharactersSimpleField: a STRING field takes its element's own text only."""
    rows = _rows(TAG_IN_CHARACTERS, schema=SIMPLE)
    assert [list(r.values()) for r in rows] == [
        ["Cleve Butler", 42, None],
        ["Ainslie Fletcher", 33, None],
        [None, None, None],
    ]


def test_tag_in_characters_record() -> None:
    """testTagInCharactersRecord: a RECORD field keeps its text under Field Name for Content."""
    name = s.RecordType(
        s.RecordSchema.of({"ATTR": s.STRING, "INNER": s.STRING, "CONTENT": s.STRING})
    )
    schema = s.RecordSchema.of({"NAME": name, "AGE": s.INT})
    rows = _rows(TAG_IN_CHARACTERS, schema=schema)
    assert rows[0] == {
        "NAME": {"ATTR": "attr content", "INNER": "inner content", "CONTENT": "Cleve Butler"},
        "AGE": 42,
    }
    assert rows[2] == {
        "NAME": {"ATTR": None, "INNER": "inner content", "CONTENT": None},
        "AGE": None,
    }


def test_map() -> None:
    """testMap: a MAP field's children are its entries, by element name."""
    data = b"""<PEOPLE><PERSON ID="P1"><MAP><NAME>Cleve Butler</NAME><AGE>42</AGE></MAP></PERSON>
      <PERSON ID="P2"><MAP><NAME>Ainslie Fletcher</NAME><AGE>33</AGE></MAP></PERSON></PEOPLE>"""
    schema = s.RecordSchema.of({"ID": s.STRING, "MAP": s.MapType(s.STRING)})
    rows = _rows(data, schema=schema)
    assert rows[0]["ID"] == "P1"
    assert dict(rows[0]["MAP"]) == {"NAME": "Cleve Butler", "AGE": "42"}


def test_map_with_records() -> None:
    """testMapWithRecords: map values that are records."""
    data = b"""<PEOPLE><PERSON ID="P1"><MAP>
      <ENTRY><NAME>Cleve Butler</NAME><AGE>42</AGE></ENTRY>
      <ENTRY2><NAME>Ainslie Fletcher</NAME><AGE>33</AGE></ENTRY2></MAP></PERSON></PEOPLE>"""
    entry = s.RecordType(s.RecordSchema.of({"NAME": s.STRING, "AGE": s.INT}))
    schema = s.RecordSchema.of({"ID": s.STRING, "MAP": s.MapType(entry)})
    (row,) = _rows(data, schema=schema)
    assert dict(row["MAP"]) == {
        "ENTRY": {"NAME": "Cleve Butler", "AGE": 42},
        "ENTRY2": {"NAME": "Ainslie Fletcher", "AGE": 33},
    }


def test_arrays_of_one_and_of_many() -> None:
    """testSimpleArray: repeated elements form an array; one element is an array of one."""
    data = b"""<PEOPLE><PERSON><NAME>A</NAME><CHILD>x</CHILD></PERSON>
      <PERSON><NAME>B</NAME><CHILD>y</CHILD><CHILD>z</CHILD></PERSON><PERSON><NAME>C</NAME></PERSON></PEOPLE>"""
    schema = s.RecordSchema.of({"NAME": s.STRING, "CHILD": s.ArrayType(s.STRING)})
    assert [r["CHILD"] for r in _rows(data, schema=schema)] == [["x"], ["y", "z"], None]


def test_inferred_schema_types_text() -> None:
    """NiFi's XML inference: text typed as INT, FLOAT, BOOLEAN or STRING; nested records."""
    data = b"""<root><r><n>1</n><f>1.5</f><b>true</b><s>x</s><addr><city>Oslo</city></addr></r>
      <r><n>2</n><f>2.5</f><b>false</b><s>y</s></r></root>"""
    (batch,) = list(read_xml(io.BytesIO(data), ARRAY))
    nifi = s.RecordSchema.from_arrow(batch.schema)
    assert [f.type for f in nifi.fields][:4] == [s.INT, s.FLOAT, s.BOOLEAN, s.STRING]
    assert batch.to_pylist()[0]["addr"] == {"city": "Oslo"}


def test_whitespace_only_text_is_ignored_and_comments_skipped() -> None:
    """Whitespace between elements is not content; comments and PIs are not fields."""
    data = b"<r>\n  <!-- c --><?pi x?>\n  <a> v </a>\n</r>"
    assert _rows(data, XmlReaderOptions()) == [{"a": " v "}]


def test_entities_and_external_dtds_are_refused() -> None:
    """Hardened as processors/_xml.py: declared entities and external DTDs are refused."""
    bomb = b'<!DOCTYPE r [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;">]><r><x>&b;</x></r>'
    with pytest.raises(RecordError, match="entities"):
        _rows(bomb, XmlReaderOptions())
    external = b'<!DOCTYPE r SYSTEM "http://example.invalid/r.dtd"><r><x>1</x></r>'
    with pytest.raises(RecordError, match="external DTD"):
        _rows(external, XmlReaderOptions())


def test_malformed_xml_names_the_line_after_the_records_before() -> None:
    """Not well-formed XML: a RecordError naming its line, after the batches read before it."""
    good = b"".join(b"<r><a>%d</a></r>\n" % n for n in range(4_000))
    data = b"<root>\n" + good + b"<r><a>3</b></r></root>"
    options = XmlReaderOptions(records_as_array=True, batch_size=100)
    batches = read_xml(io.BytesIO(data), options, s.RecordSchema.of({"a": s.INT}))
    assert next(batches).to_pylist()[0] == {"a": 0}
    with pytest.raises(RecordError, match=r"line 4002.*not well-formed XML"):
        list(batches)


def test_memory_is_one_batch_not_the_document() -> None:
    """Records are streamed: the peak is a fraction of what all the records would hold."""
    import tracemalloc

    name = b"x" * 60
    body = b"".join(b"<r><id>%d</id><name>%s %d</name></r>" % (n, name, n) for n in range(3_000))
    data = b"<root>" + body + b"</root>"
    options = XmlReaderOptions(records_as_array=True, batch_size=100)
    schema = s.RecordSchema.of({"id": s.INT, "name": s.STRING})
    tracemalloc.start()
    count = 0
    for batch in read_xml(io.BytesIO(data), options, schema):
        count += batch.num_rows
    streamed = tracemalloc.get_traced_memory()[1]
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    held = [{"id": n, "name": f"{name.decode()} {n}"} for n in range(3_000)]
    whole = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert count == len(held)
    assert streamed < whole / 2


def _inferred(data: bytes, options: XmlReaderOptions) -> s.RecordSchema:
    (batch,) = list(read_xml(io.BytesIO(data), options))
    return s.RecordSchema.from_arrow(batch.schema)


def test_infer_flat_xml_with_temporal_formats() -> None:
    """TestInferXmlSchema.testFlatXml: text typed by the date, time and timestamp formats."""
    person = b"""<PERSON ID="P1"><NAME>Cleve Butler</NAME><AGE>42</AGE><COUNTRY>USA</COUNTRY>
      <DOB>11/30/1983</DOB><TOB>10:30:00</TOB><TSOB>11/30/1983 10:30:00.000</TSOB></PERSON>"""
    options = XmlReaderOptions(
        date_format="MM/dd/yyyy", time_format="HH:mm:ss", timestamp_format="MM/dd/yyyy HH:mm:ss.SSS"
    )
    schema = _inferred(person, options)
    assert [(f.name, f.type) for f in schema.fields] == [
        ("ID", s.STRING),
        ("NAME", s.STRING),
        ("AGE", s.INT),
        ("COUNTRY", s.STRING),
        ("DOB", s.DATE),
        ("TOB", s.TIME),
        ("TSOB", s.TIMESTAMP),
    ]


TEXT_WITH_ATTRIBUTE = b"""<root><record><num>123</num><name>John Doe</name>
  <software favorite="true">Apache NiFi</software></record></root>"""


def test_infer_string_field_with_attributes() -> None:
    """testStringFieldWithAttributes / ...Ignored: text beside attributes makes a RECORD."""
    options = XmlReaderOptions(records_as_array=True, content_field_name="contentfield")
    schema = _inferred(TEXT_WITH_ATTRIBUTE, options)
    assert [(f.name, f.type.name) for f in schema.fields] == [
        ("num", "int"),
        ("name", "string"),
        ("software", "record"),
    ]
    software = schema.field("software").type.schema
    assert [(f.name, f.type) for f in software.fields] == [
        ("favorite", s.BOOLEAN),
        ("contentfield", s.STRING),
    ]
    (row,) = _rows(TEXT_WITH_ATTRIBUTE, options)
    assert row["software"] == {"favorite": True, "contentfield": "Apache NiFi"}
    ignored = XmlReaderOptions(records_as_array=True, parse_xml_attributes=False)
    assert _inferred(TEXT_WITH_ATTRIBUTE, ignored).field("software").type == s.STRING


EXPECTED_PEOPLE = [
    ["Cleve Butler", 42, "USA"],
    ["Ainslie Fletcher", 33, "UK"],
    ["Amélie Bonfils", 74, "FR"],
    ["Elenora Scrivens", 16, "USA"],
]


def test_cdata_and_namespaced_elements_read_as_plain_fields() -> None:
    """testCData / testNameSpaces: CDATA text is the value; a prefixed element (F:NAME) is the
    field of its local name."""
    people = [(n, a, c) for n, a, c in EXPECTED_PEOPLE]
    cdata = "<PEOPLE>" + "".join(
        f"<PERSON><NAME><![CDATA[{n}]]></NAME><AGE><![CDATA[{a}]]></AGE>"
        f"<COUNTRY><![CDATA[{c}]]></COUNTRY></PERSON>"
        for n, a, c in people
    )
    rows = _rows((cdata + "</PEOPLE>").encode(), schema=SIMPLE)
    assert [list(r.values()) for r in rows] == EXPECTED_PEOPLE
    spaced = '<PEOPLE xmlns:F="http://www.nifi-testfile.org">' + "".join(
        f"<PERSON><F:NAME>{n}</F:NAME><F:AGE>{a}</F:AGE><F:COUNTRY>{c}</F:COUNTRY></PERSON>"
        for n, a, c in people
    )
    rows = _rows((spaced + "</PEOPLE>").encode(), schema=SIMPLE)
    assert [list(r.values()) for r in rows] == EXPECTED_PEOPLE


def test_empty_elements_are_null() -> None:
    """testParseEmptyFields: <NAME></NAME> and <NAME/> are null, for every type."""
    data = b"""<PEOPLE><PERSON ID=""><NAME></NAME><AGE></AGE><COUNTRY></COUNTRY></PERSON>
      <PERSON><NAME/><AGE/><COUNTRY/></PERSON></PEOPLE>"""
    assert [list(r.values()) for r in _rows(data, schema=SIMPLE)] == [[None, None, None]] * 2


def test_an_empty_root_is_no_records_and_empty_content_is_refused() -> None:
    """testParseEmptyArray / testEmptyStreamAsArray / testEmptyStreamAsSingleRecord /
    testEmptyStreamWIthXmlHeader: <root></root> has no records; no root element is an error."""
    assert _rows(b"<root></root>", schema=SIMPLE) == []
    single = XmlReaderOptions(content_field_name="CONTENT")
    for data in (b"", b'<?xml version="1.0" encoding="utf-8"?>'):
        for options in (ARRAY, single):
            with pytest.raises(RecordError):
                _rows(data, options, SIMPLE)


def test_a_record_where_a_simple_field_is_expected_is_null() -> None:
    """testSimpleFieldExpectedButRecordFound: a STRING field whose element has children (and no
    Field Name for Content text) is null."""
    data = b"""<PEOPLE><PERSON><NAME>Cleve Butler</NAME><AGE>42</AGE><COUNTRY>USA</COUNTRY>
      <ADDRESS><STREET>292 West Street</STREET><CITY>Jersey City</CITY></ADDRESS></PERSON>
      </PEOPLE>"""
    schema = s.RecordSchema.of({**{f.name: f.type for f in SIMPLE}, "ADDRESS": s.STRING})
    (row,) = _rows(data, schema=schema)
    assert row["ADDRESS"] is None
    assert row["NAME"] == "Cleve Butler"


def test_nested_array_in_nested_record() -> None:
    """testNestedArrayInNestedRecord: CHILDREN is a record whose CHILD array holds every
    repeated element; a person without CHILDREN has null."""
    data = b"""<PEOPLE>
      <PERSON><NAME>Cleve Butler</NAME><AGE>42</AGE><COUNTRY>USA</COUNTRY>
        <CHILDREN><CHILD>child1</CHILD><CHILD>child2</CHILD></CHILDREN></PERSON>
      <PERSON><NAME>Ainslie Fletcher</NAME><AGE>33</AGE><COUNTRY>UK</COUNTRY>
        <CHILDREN><CHILD>child1</CHILD></CHILDREN></PERSON>
      <PERSON><NAME>Elenora Scrivens</NAME><AGE>16</AGE><COUNTRY>USA</COUNTRY></PERSON>
    </PEOPLE>"""
    children = s.RecordType(s.RecordSchema.of({"CHILD": s.ArrayType(s.STRING)}))
    schema = s.RecordSchema.of({**{f.name: f.type for f in SIMPLE}, "CHILDREN": children})
    rows = _rows(data, schema=schema)
    assert [r["CHILDREN"] for r in rows] == [
        {"CHILD": ["child1", "child2"]},
        {"CHILD": ["child1"]},
        None,
    ]


def test_infer_schema_without_a_content_field_name() -> None:
    """TestXMLReader.testInferSchemaContentFieldNameNotSet / testInferSchemaIgnoreAttributes: a
    single record; without Field Name for Content the text beside an attribute is dropped, and
    without parsing attributes the element is its text."""
    single = b"""<record><num>123</num><name>John Doe</name>
      <software favorite="true">Apache NiFi</software></record>"""
    rows = _rows(single, XmlReaderOptions())
    assert rows == [{"num": 123, "name": "John Doe", "software": {"favorite": True}}]
    ignored = XmlReaderOptions(parse_xml_attributes=False)
    assert _rows(single, ignored) == [{"num": 123, "name": "John Doe", "software": "Apache NiFi"}]


def test_infer_schema_where_name_values_have_mixed_types() -> None:
    """TestXMLReader.testInferSchemaWhereNameValuesHasMixedTypes: repeated Data elements with a
    Name attribute and text of mixed types are an array of records, the text under Value."""
    data = b"""<UserData><Data Name="Param1">String1</Data><Data Name="Param2">2</Data>
      <Data Name="Param3">String3</Data></UserData>"""
    (row,) = _rows(data, XmlReaderOptions(content_field_name="Value"))
    # Value is a CHOICE[INT, STRING]: each value the JSON text of the option it took
    values = [(d["Name"], json.loads(d["Value"])) for d in row["Data"]]
    assert values == [("Param1", "String1"), ("Param2", 2), ("Param3", "String3")]
