"""Tests for the XMLRecordSetWriter codec, byte for byte (cases after NiFi's TestWriteXMLResult)."""

from __future__ import annotations

import datetime as dt
import io

import pyarrow as pa
import pytest

from flowcore.errors import ConfigurationError, RecordError
from flowcore.records import schema as s
from flowcore.records.xml_writer import XmlRecordWriter, XmlWriterOptions, write_xml

PERSON = s.RecordSchema.of({"NAME": s.STRING, "AGE": s.INT, "COUNTRY": s.STRING})
ADDRESS = s.RecordType(s.RecordSchema.of({"STREET": s.STRING, "CITY": s.STRING}))
NESTED = s.RecordSchema.of({**{f.name: f.type for f in PERSON}, "ADDRESS": ADDRESS})
ROWS = [
    {"NAME": "Cleve Butler", "AGE": 42, "COUNTRY": "USA"},
    {"NAME": "Ainslie Fletcher", "AGE": 33, "COUNTRY": "UK"},
]
SIMPLE = (
    "<ROOT><PERSON><NAME>Cleve Butler</NAME><AGE>42</AGE><COUNTRY>USA</COUNTRY></PERSON>"
    "<PERSON><NAME>Ainslie Fletcher</NAME><AGE>33</AGE><COUNTRY>UK</COUNTRY></PERSON></ROOT>"
)
DECLARATION = '<?xml version="1.0" ?>'


def _xml(rows, schema=PERSON, **options) -> str:
    defaults = {"root_tag": "ROOT", "record_tag": "PERSON"}
    batch = pa.RecordBatch.from_pylist(rows, schema.to_arrow())
    out = io.BytesIO()
    write_xml([batch], out, XmlWriterOptions(**{**defaults, **options}), schema)
    return out.getvalue().decode()


def test_simple_record() -> None:
    """testSimpleRecord: the JDK's declaration, then the root, a tag per record and field."""
    assert _xml(ROWS) == DECLARATION + SIMPLE
    assert _xml(ROWS, omit_declaration=True) == SIMPLE


def test_record_name_from_the_schema_or_an_error() -> None:
    """testRecordNameIsNullSchemaIdentifierMissing/Exists: the schema's name, else NiFi's error."""
    named = s.RecordSchema(PERSON.fields, name="PERSON")
    assert _xml(ROWS, named, record_tag=None, omit_declaration=True) == SIMPLE
    with pytest.raises(ConfigurationError, match="'Name of Record Tag' has not been set"):
        XmlRecordWriter(io.BytesIO(), PERSON, XmlWriterOptions(root_tag="root"))


def test_root_name_is_null() -> None:
    """testRootNameIsNull / testSingleRecord: one record without a root, two refused."""
    assert _xml(ROWS[:1], root_tag=None, omit_declaration=True) == (
        "<PERSON><NAME>Cleve Butler</NAME><AGE>42</AGE><COUNTRY>USA</COUNTRY></PERSON>"
    )
    with pytest.raises(RecordError, match="although property 'Name of Root Tag' has not been"):
        _xml(ROWS, root_tag=None)


NULLS = [{"NAME": None, "AGE": 42, "COUNTRY": "USA"}, {"NAME": None, "AGE": 33, "COUNTRY": "UK"}]


@pytest.mark.parametrize(
    ("suppress", "name"),
    [
        ("always-suppress", ""),
        ("never-suppress", "<NAME></NAME>"),
        ("suppress-missing", "<NAME></NAME>"),
    ],
)
def test_simple_record_with_null_values(suppress: str, name: str) -> None:
    """testSimpleRecordWithNullValues*: a null is an empty element unless suppressed."""
    expected = (
        f"<ROOT><PERSON>{name}<AGE>42</AGE><COUNTRY>USA</COUNTRY></PERSON>"
        f"<PERSON>{name}<AGE>33</AGE><COUNTRY>UK</COUNTRY></PERSON></ROOT>"
    )
    assert _xml(NULLS, suppress_nulls=suppress, omit_declaration=True) == expected


def test_empty_record_set() -> None:
    """testEmptyRecordWithEmptySchema: the root alone."""
    out = io.BytesIO()
    attributes = write_xml([], out, XmlWriterOptions(root_tag="ROOT", record_tag="PERSON"))
    assert out.getvalue() == b'<?xml version="1.0" ?><ROOT></ROOT>'
    assert attributes == {"record.count": "0", "mime.type": "application/xml"}


def test_nested_record_and_null_suppression() -> None:
    """testNestedRecord / WithNullValues / WithOnlyNullValues: nested records, all-null records."""
    rows = [{**ROWS[0], "ADDRESS": {"STREET": None, "CITY": "Jersey City"}}]
    assert _xml(rows, NESTED, omit_declaration=True) == (
        "<ROOT><PERSON><NAME>Cleve Butler</NAME><AGE>42</AGE><COUNTRY>USA</COUNTRY>"
        "<ADDRESS><STREET></STREET><CITY>Jersey City</CITY></ADDRESS></PERSON></ROOT>"
    )
    only_nulls = [{**ROWS[0], "ADDRESS": {"STREET": None, "CITY": None}}]
    assert _xml(only_nulls, NESTED, omit_declaration=True, suppress_nulls="always-suppress") == (
        "<ROOT><PERSON><NAME>Cleve Butler</NAME><AGE>42</AGE><COUNTRY>USA</COUNTRY></PERSON></ROOT>"
    )
    assert "<ADDRESS><STREET></STREET><CITY></CITY></ADDRESS>" in _xml(only_nulls, NESTED)
    empty = [{"NAME": None, "AGE": None, "COUNTRY": None}]
    assert _xml(empty, omit_declaration=True, suppress_nulls="always-suppress") == "<ROOT></ROOT>"


ARRAYS = s.RecordSchema.of(
    {"array_field": s.ArrayType(s.INT), "name1": s.STRING, "name2": s.STRING}
)
ARRAY_ROWS = [{"array_field": [1, None, 3], "name1": "val1", "name2": None}]


@pytest.mark.parametrize(
    ("wrapping", "expected"),
    [
        (
            {},
            "<array_field>1</array_field><array_field></array_field><array_field>3</array_field>",
        ),
        (
            {"array_wrapping": "use-property-as-wrapper", "array_tag": "wrap"},
            "<wrap><array_field>1</array_field><array_field></array_field>"
            "<array_field>3</array_field></wrap>",
        ),
        (
            {"array_wrapping": "use-property-for-elements", "array_tag": "elem"},
            "<array_field><elem>1</elem><array_field></array_field><elem>3</elem></array_field>",
        ),
    ],
)
def test_array_wrapping(wrapping: dict, expected: str) -> None:
    """TestXMLRecordSetWriter testDefault / testArrayWrapping: arrays repeat or are wrapped."""
    xml = _xml(ARRAY_ROWS, ARRAYS, record_tag="record", omit_declaration=True, **wrapping)
    assert xml == f"<ROOT><record>{expected}<name1>val1</name1><name2></name2></record></ROOT>"


def test_array_wrapping_needs_a_tag() -> None:
    """testValidation: a wrapping without Array Tag Name is refused with NiFi's message."""
    with pytest.raises(ConfigurationError, match=r"has to be set\."):
        XmlWriterOptions(array_wrapping="use-property-as-wrapper")


def test_pretty_print_is_stax_utils_indentation() -> None:
    """Pretty Print XML: two spaces a level, empty elements inline, a newline at the end."""
    rows = [{**ROWS[0], "ADDRESS": {"STREET": None, "CITY": "Jersey City"}}]
    assert _xml(rows, NESTED, pretty_print=True) == (
        '<?xml version="1.0" ?>\n'
        "<ROOT>\n"
        "  <PERSON>\n"
        "    <NAME>Cleve Butler</NAME>\n"
        "    <AGE>42</AGE>\n"
        "    <COUNTRY>USA</COUNTRY>\n"
        "    <ADDRESS>\n"
        "      <STREET></STREET>\n"
        "      <CITY>Jersey City</CITY>\n"
        "    </ADDRESS>\n"
        "  </PERSON>\n"
        "</ROOT>\n"
    )


def test_data_types() -> None:
    """testDataTypes: Java's number texts, date/time/timestamp formats, maps, escapes."""
    schema = s.RecordSchema.of(
        {
            "string": s.STRING,
            "boolean": s.BOOLEAN,
            "float": s.FLOAT,
            "double": s.DOUBLE,
            "date": s.DATE,
            "time": s.TIME,
            "timestamp": s.TIMESTAMP,
            "choice": s.ChoiceType((s.INT, s.LONG)),
            "map": s.MapType(s.INT),
        }
    )
    row = {
        "string": "a<b & c>d \"'",
        "boolean": True,
        "float": 8.0,
        "double": 1e20,
        "date": dt.date(2017, 1, 1),
        "time": dt.time(17, 0),
        "timestamp": dt.datetime(2017, 1, 1, 17, 0),
        "choice": "48",
        "map": [("height", 48), ("width", 96)],
    }
    assert _xml([row], schema, record_tag="RECORD", omit_declaration=True) == (
        "<ROOT><RECORD><string>a&lt;b &amp; c&gt;d \"'</string><boolean>true</boolean>"
        "<float>8.0</float><double>1.0E20</double><date>2017-01-01</date><time>17:00:00</time>"
        "<timestamp>2017-01-01 17:00:00</timestamp><choice>48</choice>"
        "<map><height>48</height><width>96</width></map></RECORD></ROOT>"
    )
    formatted = _xml(
        [row],
        schema,
        record_tag="R",
        date_format="dd/MM/yyyy",
        timestamp_format="yyyy-MM-dd'T'HH:mm",
    )
    assert "<date>01/01/2017</date>" in formatted
    assert "<timestamp>2017-01-01T17:00</timestamp>" in formatted


def test_tag_names_drop_markup_characters() -> None:
    """NiFi strips / < > ! & ' \" from tag names."""
    schema = s.RecordSchema.of({"a/b<c>": s.STRING})
    assert _xml([{"a/b<c>": "x"}], schema, omit_declaration=True) == (
        "<ROOT><PERSON><abc>x</abc></PERSON></ROOT>"
    )


def test_character_set() -> None:
    """Character Set: the text is encoded with it; characters it lacks become references."""
    out = io.BytesIO()
    batch = pa.RecordBatch.from_pylist(
        [{"NAME": "Amélie ☃", "AGE": 1, "COUNTRY": "FR"}], PERSON.to_arrow()
    )
    options = XmlWriterOptions(root_tag="R", record_tag="P", character_set="ISO-8859-1")
    write_xml([batch], out, options, PERSON)
    assert "<NAME>Amélie &#9731;</NAME>".encode("latin-1") in out.getvalue()


def test_bytes_are_one_element_per_signed_byte() -> None:
    """WriteXMLResult writes an Object[] of Byte (an Avro bytes value) element by element."""
    schema = s.RecordSchema.of({"B": s.ArrayType(s.BYTE)})
    assert _xml([{"B": b"\x00\xffA"}], schema) == (
        DECLARATION + "<ROOT><PERSON><B>0</B><B>-1</B><B>65</B></PERSON></ROOT>"
    )


def test_microseconds_are_written_only_by_a_format_that_shows_them() -> None:
    """A TIMESTAMP's microseconds: NiFi's default format has no fraction, SSSSSS prints them."""
    schema = s.RecordSchema.of({"T": s.TIMESTAMP})
    rows = [{"T": dt.datetime(2024, 2, 6, 16, 51, 28, 351567)}]
    assert _xml(rows, schema, omit_declaration=True, record_tag="R") == (
        "<ROOT><R><T>2024-02-06 16:51:28</T></R></ROOT>"
    )
    micros = _xml(
        rows,
        schema,
        omit_declaration=True,
        record_tag="R",
        timestamp_format="yyyy-MM-dd HH:mm:ss.SSSSSS",
    )
    assert micros == "<ROOT><R><T>2024-02-06 16:51:28.351567</T></R></ROOT>"
