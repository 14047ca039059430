"""XMLReader and XMLRecordSetWriter: NiFi's XML record services over the XML codecs."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import IO, ClassVar

import pyarrow as pa

from flowcore.controller_service import ServiceContext
from flowcore.errors import ConfigurationError
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.records.schema import RecordSchema
from flowcore.records.xml_reader import XmlReaderOptions, read_xml
from flowcore.records.xml_writer import XmlRecordWriter, XmlWriterOptions
from flowcore.validators import CHARACTER_SET_VALIDATOR, NON_EMPTY_VALIDATOR, ValidationResult
from processors.record_services._codec_writer import CodecWriterService
from processors.record_services.schema_access import (
    INFER_SCHEMA,
    READER_STRATEGIES,
    RecordReaderService,
    date_time_properties,
    schema_access_strategy,
    schema_inference_cache,
    schema_properties,
    writer_properties,
)

__all__ = ["XMLReader", "XMLRecordSetWriter"]

EL = ExpressionLanguageScope.FLOWFILE_ATTRIBUTES
_ACCESS = schema_access_strategy((*READER_STRATEGIES, INFER_SCHEMA), INFER_SCHEMA)

RECORD_FORMAT = PropertyDescriptor(
    "Expect Records as Array",
    description="This property defines whether the reader expects a FlowFile to consist of a "
    'single Record or a series of Records with a "wrapper element" that will be ignored.',
    default="false",
    required=True,
    allowable_values=(
        AllowableValue(
            "false",
            "false",
            'Each FlowFile will consist of a single record without any sort of "wrapper".',
        ),
        AllowableValue(
            "true",
            "true",
            "Each FlowFile will consist of zero or more records. The outer-most XML element is "
            'expected to be a "wrapper" and will be ignored.',
        ),
        AllowableValue(
            "${xml.stream.is.array}",
            "Use attribute 'xml.stream.is.array'",
            "Whether to treat a FlowFile as a single Record or an array of multiple Records is "
            "determined by the value of the 'xml.stream.is.array' attribute.",
        ),
    ),
    el_scope=EL,
    aliases=("record_format",),
)
ATTRIBUTE_PREFIX = PropertyDescriptor(
    "Attribute Prefix",
    description="If this property is set, the name of attributes will be prepended with a "
    "prefix when they are added to a record.",
    validators=(NON_EMPTY_VALIDATOR,),
    el_scope=EL,
    aliases=("attribute_prefix",),
)
CONTENT_FIELD_NAME = PropertyDescriptor(
    "Field Name for Content",
    description="If tags with content (e. g. <field>content</field>) are defined as nested "
    "records in the schema, the name of the tag will be used as name for the record and the "
    "value of this property will be used as name for the field.",
    validators=(NON_EMPTY_VALIDATOR,),
    el_scope=EL,
    aliases=("content_field_name",),
)
PARSE_XML_ATTRIBUTES = PropertyDescriptor(
    "Parse XML Attributes",
    description="When 'Schema Access Strategy' is 'Infer Schema' and this property is 'true' "
    "then XML attributes are parsed and added to the record as new fields. When the schema is "
    "inferred but this property is 'false', XML attributes and their values are ignored.",
    default="true",
    allowable_values=("true", "false"),
    dependencies=((_ACCESS, INFER_SCHEMA.value),),
    aliases=("parse_xml_attributes",),
)
SCHEMA_INFERENCE_CACHE = schema_inference_cache(_ACCESS)


class XMLReader(RecordReaderService):
    """Reads XML content into records; records are the second level of an enclosing root tag.

    NiFi's XMLReader: "Expect Records as Array" says whether the root is a wrapper of records
    or the one record; attributes become fields ("Attribute Prefix" first); text beside
    attributes or children goes to "Field Name for Content". Streamed (lxml iterparse, no
    entities, no DTD fetching).
    """

    nifi_types: ClassVar = ("org.apache.nifi.xml.XMLReader",)
    tags: ClassVar = ("xml", "record", "reader", "parser")
    property_descriptors: ClassVar = (
        *schema_properties(_ACCESS),
        PARSE_XML_ATTRIBUTES,
        SCHEMA_INFERENCE_CACHE,
        RECORD_FORMAT,
        ATTRIBUTE_PREFIX,
        CONTENT_FIELD_NAME,
        *date_time_properties(),
    )

    def on_enabled(self, context: ServiceContext) -> None:
        """Keep the schema access and the parsing of attributes (its value, any strategy)."""
        super().on_enabled(context)
        self._parse_attributes = self.get_property("Parse XML Attributes").value != "false"

    def _options(self, attributes: Mapping[str, str]) -> XmlReaderOptions:
        """The options for one FlowFile (three properties take its attributes).

        Raises:
            ConfigurationError: "Expect Records as Array" is neither true nor false.
        """
        fmt = (self._evaluate("Expect Records as Array", attributes) or "").strip()
        if fmt.lower() not in ("true", "false"):
            msg = (
                "Cannot parse XML Records because the 'Expect Records as Array' property "
                f"evaluates to '{fmt}', which is neither 'true' nor 'false'"
            )
            raise ConfigurationError(msg)
        prefix = self._evaluate("Attribute Prefix", attributes)
        content = self._evaluate("Field Name for Content", attributes)
        return XmlReaderOptions(
            records_as_array=fmt.lower() == "true",
            attribute_prefix=prefix.strip() if prefix else None,
            content_field_name=content.strip() if content else None,
            parse_xml_attributes=self._parse_attributes,
            date_format=self.get_property("Date Format").value,
            time_format=self.get_property("Time Format").value,
            timestamp_format=self.get_property("Timestamp Format").value,
        )

    def read(
        self,
        stream: IO[bytes],
        schema: RecordSchema | None,
        attributes: Mapping[str, str],
    ) -> Iterator[pa.RecordBatch]:
        """The XML codec."""
        return read_xml(stream, self._options(attributes), schema)


class XMLRecordSetWriter(CodecWriterService):
    """Writes records as XML (NiFi's XMLRecordSetWriter), byte for byte as NiFi does."""

    nifi_types: ClassVar = ("org.apache.nifi.xml.XMLRecordSetWriter",)
    options_type: ClassVar = XmlWriterOptions
    writer_type: ClassVar = XmlRecordWriter
    tags: ClassVar = ("xml", "resultset", "writer", "serialize", "record", "recordset", "row")
    property_descriptors: ClassVar = (
        *writer_properties(),
        *date_time_properties(),
        PropertyDescriptor(
            "Suppress Null Values",
            description="Specifies how the writer should handle a null field",
            default="never-suppress",
            required=True,
            allowable_values=(
                AllowableValue(
                    "never-suppress",
                    "Never Suppress",
                    "Fields that are missing (present in the schema but not in the record), or "
                    "that have a value of null, will be written out as a null value",
                ),
                AllowableValue(
                    "always-suppress",
                    "Always Suppress",
                    "Fields that are missing (present in the schema but not in the record), or "
                    "that have a value of null, will not be written out",
                ),
                AllowableValue(
                    "suppress-missing",
                    "Suppress Missing Values",
                    "When a field has a value of null, it will be written out. However, if a "
                    "field is defined in the schema and not present in the record, the field "
                    "will not be written out.",
                ),
            ),
            aliases=("suppress_nulls",),
        ),
        PropertyDescriptor(
            "Pretty Print XML",
            description="Specifies whether or not the XML should be pretty printed",
            default="false",
            required=True,
            allowable_values=("true", "false"),
            aliases=("pretty_print_xml",),
        ),
        PropertyDescriptor(
            "Omit XML Declaration",
            description="Specifies whether or not to include XML declaration",
            default="false",
            required=True,
            allowable_values=("true", "false"),
            aliases=("omit_xml_declaration",),
        ),
        PropertyDescriptor(
            "Name of Root Tag",
            description="Specifies the name of the XML root tag wrapping the record set. This "
            "property has to be defined if the writer is supposed to write multiple records in "
            "a single FlowFile.",
            validators=(NON_EMPTY_VALIDATOR,),
            aliases=("root_tag_name",),
        ),
        PropertyDescriptor(
            "Name of Record Tag",
            description="Specifies the name of the XML record tag wrapping the record fields. "
            "If this is not set, the writer will use the record name in the schema.",
            validators=(NON_EMPTY_VALIDATOR,),
            aliases=("record_tag_name",),
        ),
        PropertyDescriptor(
            "Wrap Elements of Arrays",
            description="Specifies how the writer wraps elements of fields of type array",
            default="no-wrapping",
            required=True,
            allowable_values=(
                AllowableValue(
                    "use-property-as-wrapper",
                    "Use Property as Wrapper",
                    'The value of the property "Array Tag Name" will be used as the tag name '
                    "to wrap elements of an array. The field name of the array field will be "
                    "used for the tag name of the elements.",
                ),
                AllowableValue(
                    "use-property-for-elements",
                    "Use Property for Elements",
                    'The value of the property "Array Tag Name" will be used for the tag name '
                    "of the elements of an array. The field name of the array field will be "
                    "used as the tag name to wrap elements.",
                ),
                AllowableValue(
                    "no-wrapping", "No Wrapping", "The elements of an array will not be wrapped"
                ),
            ),
            aliases=("array_wrapping",),
        ),
        PropertyDescriptor(
            "Array Tag Name",
            description='Name of the tag used by property "Wrap Elements of Arrays" to write '
            "arrays",
            validators=(NON_EMPTY_VALIDATOR,),
            aliases=("array_tag_name",),
        ),
        PropertyDescriptor(
            "Character Set",
            description="The Character set to use when writing the data to the FlowFile",
            default="UTF-8",
            required=True,
            validators=(CHARACTER_SET_VALIDATOR,),
        ),
    )

    def custom_validate(self, values: Mapping[str, str | None]) -> Iterable[ValidationResult]:
        """NiFi's check: a wrapping other than No Wrapping needs Array Tag Name."""
        problems = list(super().custom_validate(values))
        wrapping = values.get("Wrap Elements of Arrays")
        if wrapping not in (None, "no-wrapping") and not values.get("Array Tag Name"):
            problems.append(
                ValidationResult(
                    "Array Tag Name",
                    None,
                    False,
                    "if property 'Wrap Elements of Arrays' is defined as 'Use Property as "
                    "Wrapper' or 'Use Property for Elements' the property 'Array Tag Name' "
                    "has to be set.",
                )
            )
        return problems
