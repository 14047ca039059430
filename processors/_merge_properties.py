"""MergeContent's properties: NiFi's names, defaults, allowable values and dependencies.

Declarations only, apart from the processor's behaviour in :mod:`processors.merge_content`;
the class exposes each descriptor under the same name (``MergeContent.MERGE_STRATEGY``).
MergeRecord's binning descriptors (``RECORD_*``) are here too: NiFi's MergeRecord declares its
own (other descriptions, old names as aliases, other defaults), sharing MergeContent's
Bin-Packing value and Max Bin Age but for its bounds and old name.
"""

from __future__ import annotations

import attrs

import processors._merge_formats as formats
from flowcore.expression._nodes import ResultType
from flowcore.processor.binning import InsertionStrategy
from flowcore.properties import (
    AllowableValue,
    ExpressionLanguageScope,
    PropertyDependency,
    PropertyDescriptor,
)
from flowcore.validators import (
    ATTRIBUTE_KEY_VALIDATOR,
    BOOLEAN_VALIDATOR,
    DATA_SIZE_VALIDATOR,
    NON_EMPTY_VALIDATOR,
    POSITIVE_INTEGER_VALIDATOR,
    create_time_period_validator,
)

MERGE_STRATEGY_BIN_PACK = AllowableValue(
    "Bin-Packing Algorithm",
    "Bin-Packing Algorithm",
    "Generates 'bins' of FlowFiles and fills each bin as full as possible. FlowFiles are placed "
    "into a bin based on their size and optionally their attributes (if the <Correlation "
    "Attribute> property is set)",
)
MERGE_STRATEGY_DEFRAGMENT = AllowableValue(
    "Defragment",
    "Defragment",
    "Combines fragments that are associated by attributes back into a single cohesive FlowFile. "
    "If using this strategy, all FlowFiles must have the attributes <fragment.identifier>, "
    "<fragment.count>, and <fragment.index>.",
)
ATTRIBUTE_STRATEGY_ALL_COMMON = AllowableValue(
    "Keep Only Common Attributes",
    "Keep Only Common Attributes",
    "Any attribute that is not the same on all FlowFiles in a bin will be dropped.",
)
ATTRIBUTE_STRATEGY_ALL_UNIQUE = AllowableValue(
    "Keep All Unique Attributes",
    "Keep All Unique Attributes",
    "Any attribute that has the same value for all FlowFiles in a bin, or has no value for a "
    "FlowFile, will be kept; conflicting values drop the attribute.",
)
DELIMITER_STRATEGY_NONE = "Do Not Use Delimiters"

_BIN_PACK = (MERGE_STRATEGY_BIN_PACK.value,)


def _on(name: str, *values: str) -> PropertyDependency:
    return PropertyDependency(name, values)


MERGE_STRATEGY = PropertyDescriptor(
    "Merge Strategy",
    description="Specifies the algorithm used to merge content.",
    required=True,
    default=MERGE_STRATEGY_BIN_PACK.value,
    allowable_values=(MERGE_STRATEGY_BIN_PACK, MERGE_STRATEGY_DEFRAGMENT),
)
MERGE_FORMAT = PropertyDescriptor(
    "Merge Format",
    description="Determines the format that will be used to merge the content.",
    required=True,
    default=formats.FORMAT_CONCAT,
    allowable_values=(
        formats.FORMAT_TAR,
        formats.FORMAT_ZIP,
        formats.FORMAT_FLOWFILE_STREAM_V3,
        formats.FORMAT_FLOWFILE_STREAM_V2,
        formats.FORMAT_FLOWFILE_TAR_V1,
        formats.FORMAT_CONCAT,
        formats.FORMAT_AVRO,
    ),
)
ATTRIBUTE_STRATEGY = PropertyDescriptor(
    "Attribute Strategy",
    description="Determines which FlowFile attributes should be added to the bundle.",
    required=True,
    default=ATTRIBUTE_STRATEGY_ALL_COMMON.value,
    allowable_values=(ATTRIBUTE_STRATEGY_ALL_COMMON, ATTRIBUTE_STRATEGY_ALL_UNIQUE),
)
CORRELATION_ATTRIBUTE_NAME = PropertyDescriptor(
    "Correlation Attribute Name",
    description="If specified, like FlowFiles will be binned together, where 'like "
    "FlowFiles' means FlowFiles that have the same value for this Attribute.",
    required=False,
    validators=(ATTRIBUTE_KEY_VALIDATOR,),
    el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    dependencies=(_on("Merge Strategy", *_BIN_PACK),),
)
METADATA_STRATEGY = PropertyDescriptor(
    "Metadata Strategy",
    description="For FlowFiles whose input format supports metadata (Avro), this property "
    "determines which metadata should be added to the bundle.",
    required=True,
    default=formats.METADATA_DO_NOT_MERGE,
    allowable_values=(
        formats.METADATA_USE_FIRST,
        formats.METADATA_KEEP_COMMON,
        formats.METADATA_IGNORE,
        formats.METADATA_DO_NOT_MERGE,
    ),
    dependencies=(_on("Merge Format", formats.FORMAT_AVRO),),
    aliases=("mergecontent-metadata-strategy",),
)
MIN_ENTRIES = PropertyDescriptor(
    "Minimum Number of Entries",
    description="The minimum number of files to include in a bundle",
    required=True,
    default="1",
    validators=(POSITIVE_INTEGER_VALIDATOR,),
    dependencies=(_on("Merge Strategy", *_BIN_PACK),),
)
MAX_ENTRIES = PropertyDescriptor(
    "Maximum Number of Entries",
    description="The maximum number of files to include in a bundle",
    required=True,
    default="1000",
    validators=(POSITIVE_INTEGER_VALIDATOR,),
    dependencies=(_on("Merge Strategy", *_BIN_PACK),),
)
MIN_SIZE = PropertyDescriptor(
    "Minimum Group Size",
    description="The minimum size for the bundle",
    required=True,
    default="0 B",
    validators=(DATA_SIZE_VALIDATOR,),
    dependencies=(_on("Merge Strategy", *_BIN_PACK),),
)
MAX_SIZE = PropertyDescriptor(
    "Maximum Group Size",
    description="The maximum size for the bundle. If not specified, there is no maximum.",
    required=False,
    validators=(DATA_SIZE_VALIDATOR,),
    dependencies=(_on("Merge Strategy", *_BIN_PACK),),
)
BIN_TERMINATION_CHECK = PropertyDescriptor(
    "Bin Termination Check",
    description="An Expression Language boolean evaluated for each FlowFile; when true, the "
    "FlowFile's bin is completed and merged",
    required=False,
    el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    expected_type=ResultType.BOOLEAN,
    validators=(NON_EMPTY_VALIDATOR,),
    dependencies=(_on("Merge Strategy", *_BIN_PACK),),
)
FLOWFILE_INSERTION_STRATEGY = PropertyDescriptor(
    "FlowFile Insertion Strategy",
    description="Where the FlowFile that satisfies the Bin Termination Check goes",
    required=True,
    default=InsertionStrategy.LAST_IN_BIN.value,
    allowable_values=tuple(s.value for s in InsertionStrategy),
    dependencies=(_on("Bin Termination Check"),),
)
MAX_BIN_AGE = PropertyDescriptor(
    "Max Bin Age",
    description="The maximum age of a Bin that will trigger a Bin to be complete. Expected "
    "format is <duration> <time unit> where <duration> is a positive integer and time unit is "
    "one of seconds, minutes, hours",
    required=False,
    validators=(create_time_period_validator("1 sec", f"{2**31 - 1} secs"),),
)
MAX_BIN_COUNT = PropertyDescriptor(
    "Maximum Number of Bins",
    description="Specifies the maximum number of bins that can be held in memory at any one time",
    required=True,
    default="5",
    validators=(POSITIVE_INTEGER_VALIDATOR,),
    aliases=("Maximum number of Bins",),
)
DELIMITER_STRATEGY = PropertyDescriptor(
    "Delimiter Strategy",
    description="Determines if Header, Footer, and Demarcator should point to files "
    "containing the respective content, or if the values of the properties should be used as "
    "the content.",
    required=True,
    default=DELIMITER_STRATEGY_NONE,
    allowable_values=(
        formats.DELIMITER_FILENAME,
        formats.DELIMITER_TEXT,
        DELIMITER_STRATEGY_NONE,
    ),
    dependencies=(_on("Merge Format", formats.FORMAT_CONCAT),),
)
HEADER = PropertyDescriptor(
    "Header",
    description="Filename or text specifying the header to use",
    required=False,
    validators=(NON_EMPTY_VALIDATOR,),
    el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    dependencies=(_on("Delimiter Strategy", formats.DELIMITER_FILENAME, formats.DELIMITER_TEXT),),
    aliases=("Header File",),
)
FOOTER = PropertyDescriptor(
    "Footer",
    description="Filename or text specifying the footer to use",
    required=False,
    validators=(NON_EMPTY_VALIDATOR,),
    el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    dependencies=(_on("Delimiter Strategy", formats.DELIMITER_FILENAME, formats.DELIMITER_TEXT),),
    aliases=("Footer File",),
)
DEMARCATOR = PropertyDescriptor(
    "Demarcator",
    description="Filename or text specifying the demarcator to use; written between "
    "contents, not after the last",
    required=False,
    validators=(NON_EMPTY_VALIDATOR,),
    el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    dependencies=(_on("Delimiter Strategy", formats.DELIMITER_FILENAME, formats.DELIMITER_TEXT),),
    aliases=("Demarcator File",),
)
COMPRESSION_LEVEL = PropertyDescriptor(
    "Compression Level",
    description="Specifies the compression level to use when using the Zip Merge Format; if "
    "not using the Zip Merge Format, this value is ignored",
    required=True,
    default="1",
    allowable_values=tuple(str(i) for i in range(10)),
    dependencies=(_on("Merge Format", formats.FORMAT_ZIP),),
)
KEEP_PATH = PropertyDescriptor(
    "Keep Path",
    description="If using the Zip or Tar Merge Format, specifies whether or not the "
    "FlowFiles' paths should be included in their entry names.",
    required=True,
    default="false",
    allowable_values=("true", "false"),
    validators=(BOOLEAN_VALIDATOR,),
    dependencies=(_on("Merge Format", formats.FORMAT_ZIP, formats.FORMAT_TAR),),
)
TAR_MODIFIED_TIME = PropertyDescriptor(
    "Tar Modified Time",
    description="If using the Tar Merge Format, specifies if the Tar entry should store the "
    "modified timestamp either by expression (e.g. ${file.lastModifiedTime}) or static value, "
    "both of which must match the ISO8601 format 'yyyy-MM-dd'T'HH:mm:ssZ'.",
    required=False,
    default="${file.lastModifiedTime}",
    validators=(NON_EMPTY_VALIDATOR,),
    el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    dependencies=(_on("Merge Format", formats.FORMAT_TAR),),
)
ZERO_COPY = PropertyDescriptor(
    "Zero Copy",
    description="(flowcore) With Binary Concatenation, build the merged content as a rope "
    "of the inputs' byte ranges instead of copying them; it reads identically. Ropes with "
    "too many pieces, or pinning mostly dead content, are copied anyway",
    required=True,
    default="false",
    allowable_values=("true", "false"),
    validators=(BOOLEAN_VALIDATOR,),
    dependencies=(_on("Merge Format", formats.FORMAT_CONCAT),),
    flowcore_only=True,
)

PROPERTY_DESCRIPTORS = (
    MERGE_STRATEGY,
    MERGE_FORMAT,
    ATTRIBUTE_STRATEGY,
    CORRELATION_ATTRIBUTE_NAME,
    METADATA_STRATEGY,
    MIN_ENTRIES,
    MAX_ENTRIES,
    MIN_SIZE,
    MAX_SIZE,
    BIN_TERMINATION_CHECK,
    FLOWFILE_INSERTION_STRATEGY,
    MAX_BIN_AGE,
    MAX_BIN_COUNT,
    DELIMITER_STRATEGY,
    HEADER,
    FOOTER,
    DEMARCATOR,
    COMPRESSION_LEVEL,
    KEEP_PATH,
    TAR_MODIFIED_TIME,
    ZERO_COPY,
)


# --- MergeRecord's binning descriptors (NiFi's MergeRecord declares its own) -----------------

RECORD_MERGE_STRATEGY_DEFRAGMENT = AllowableValue(
    "Defragment",
    "Defragment",
    "Combines fragments that are associated by attributes back into a single cohesive FlowFile. "
    "If using this strategy, all FlowFiles must have the attributes <fragment.identifier> and "
    '<fragment.count>. All FlowFiles with the same value for "fragment.identifier" will be '
    'grouped together. All FlowFiles in this group must have the same value for the "fragment.'
    'count" attribute. The ordering of the Records that are output is not guaranteed.',
)
RECORD_MERGE_STRATEGY = PropertyDescriptor(
    "Merge Strategy",
    description="Specifies the algorithm used to merge records. The 'Defragment' algorithm "
    "combines fragments that are associated by attributes back into a single cohesive FlowFile. "
    "The 'Bin-Packing Algorithm' generates a FlowFile populated by arbitrarily chosen FlowFiles",
    required=True,
    default=MERGE_STRATEGY_BIN_PACK.value,
    allowable_values=(MERGE_STRATEGY_BIN_PACK, RECORD_MERGE_STRATEGY_DEFRAGMENT),
    aliases=("merge-strategy",),
)
RECORD_CORRELATION_ATTRIBUTE_NAME = PropertyDescriptor(
    "Correlation Attribute Name",
    description="If specified, two FlowFiles will be binned together only if they have the same "
    "value for this Attribute. If not specified, FlowFiles are bundled by the order in which "
    "they are pulled from the queue.",
    required=False,
    validators=(ATTRIBUTE_KEY_VALIDATOR,),
    aliases=("correlation-attribute-name",),
)
RECORD_MIN_SIZE = PropertyDescriptor(
    "Minimum Bin Size",
    description="The minimum size of for the bin",
    required=True,
    default="0 B",
    validators=(DATA_SIZE_VALIDATOR,),
    aliases=("min-bin-size",),
)
RECORD_MAX_SIZE = PropertyDescriptor(
    "Maximum Bin Size",
    description="The maximum size for the bundle. If not specified, there is no maximum. This "
    "is a 'soft limit' in that if a FlowFile is added to a bin, all records in that FlowFile "
    "will be added, so this limit may be exceeded by up to the number of bytes in last input "
    "FlowFile.",
    required=False,
    validators=(DATA_SIZE_VALIDATOR,),
    aliases=("max-bin-size",),
)
RECORD_MIN_RECORDS = PropertyDescriptor(
    "Minimum Number of Records",
    description="The minimum number of records to include in a bin",
    required=True,
    default="1",
    validators=(POSITIVE_INTEGER_VALIDATOR,),
    el_scope=ExpressionLanguageScope.ENVIRONMENT,
    aliases=("min-records",),
)
RECORD_MAX_RECORDS = PropertyDescriptor(
    "Maximum Number of Records",
    description="The maximum number of Records to include in a bin. This is a 'soft limit' in "
    "that if a FlowFIle is added to a bin, all records in that FlowFile will be added, so this "
    "limit may be exceeded by up to the number of records in the last input FlowFile.",
    required=False,
    default="1000",
    validators=(POSITIVE_INTEGER_VALIDATOR,),
    el_scope=ExpressionLanguageScope.ENVIRONMENT,
    aliases=("max-records",),
)
RECORD_MAX_BIN_COUNT = PropertyDescriptor(
    "Maximum Number of Bins",
    description="Specifies the maximum number of bins that can be held in memory at any one "
    "time. This number should not be smaller than the maximum number of concurrent threads for "
    "this Processor, or the bins that are created will often consist only of a single incoming "
    "FlowFile.",
    required=True,
    default="10",
    validators=(POSITIVE_INTEGER_VALIDATOR,),
    aliases=("max.bin.count",),
)
RECORD_MAX_BIN_AGE = attrs.evolve(
    MAX_BIN_AGE,
    validators=(create_time_period_validator("0 sec", f"{2**31 - 1} secs"),),
    aliases=("max-bin-age",),
)
