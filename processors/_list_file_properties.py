"""ListFile's properties, with NiFi 2.x's names, defaults and allowable values."""

from __future__ import annotations

from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.validators import (
    NON_EMPTY_VALIDATOR,
    POSITIVE_INTEGER_VALIDATOR,
    TIME_PERIOD_VALIDATOR,
    create_directory_exists_validator,
    create_time_period_validator,
)
from processors.get_file import GetFile

__all__ = [
    "BY_ENTITIES",
    "BY_TIMESTAMPS",
    "DIRECTORY",
    "INCLUDE_FILE_ATTRIBUTES",
    "LISTING_STRATEGY",
    "MAX_LISTING_TIME",
    "NO_TRACKING",
    "PROPERTY_DESCRIPTORS",
    "RECORD_WRITER",
    "RESET_BY",
    "TIMESTAMP_PRECISION",
]

_ENTITIES_NOTE = "Used by 'Tracking Entities' strategy."

BY_TIMESTAMPS = AllowableValue(
    "timestamps",
    "Tracking Timestamps",
    "This strategy tracks the latest timestamp of listed entity to determine new/updated "
    "entities. Since it only tracks few timestamps, it can manage listing state efficiently. "
    "However, any newly added, or updated entity having timestamp older than the tracked latest "
    "timestamp can not be picked by this strategy.",
)
BY_ENTITIES = AllowableValue(
    "entities",
    "Tracking Entities",
    "This strategy tracks information of all the listed entities within the latest 'Entity "
    "Tracking Time Window' to determine new/updated entities. This strategy can pick entities "
    "having old timestamp that can be missed with 'Tracking Timestamps'. flowcore keeps them in "
    "a MapCacheService, written with the listed FlowFiles.",
)
NO_TRACKING = AllowableValue(
    "none",
    "No Tracking",
    "This strategy lists an entity without any tracking. The same entity will be listed each "
    "time on executing this processor (once in a flowcore batch run).",
)

DIRECTORY = PropertyDescriptor(
    "Input Directory",
    description="The input directory from which files to pull files",
    required=True,
    validators=(NON_EMPTY_VALIDATOR, create_directory_exists_validator()),
    el_scope=ExpressionLanguageScope.ENVIRONMENT,
)
LISTING_STRATEGY = PropertyDescriptor(
    "Listing Strategy",
    name="listing-strategy",
    description="Specify how to determine new/updated entities. See each strategy descriptions "
    "for detail.",
    required=True,
    default=BY_TIMESTAMPS.value,
    allowable_values=(BY_TIMESTAMPS, BY_ENTITIES, NO_TRACKING),
)
RECURSE = PropertyDescriptor(
    "Recurse Subdirectories",
    description="Indicates whether to list files from subdirectories of the directory",
    required=True,
    default="true",
    allowable_values=("true", "false"),
)
RECORD_WRITER = PropertyDescriptor(
    "Record Writer",
    name="record-writer",
    description="Specifies the Record Writer to use for creating the listing. If not specified, "
    "one FlowFile will be created for each entity that is listed. If the Record Writer is "
    "specified, all entities will be written to a single FlowFile instead of adding attributes "
    "to individual FlowFiles.",
    required=False,
    identifies_service="RecordSetWriterFactory",
)
DIRECTORY_LOCATION = PropertyDescriptor(
    "Input Directory Location",
    description="Specifies where the Input Directory is located. This is used to determine "
    "whether state should be stored locally or across the cluster (flowcore keeps it in its "
    "repository either way).",
    required=True,
    default="Local",
    allowable_values=(
        AllowableValue(
            "Local", "Local", "Input Directory is located on a local disk. State will be stored "
            "locally on each node in the cluster."
        ),
        AllowableValue(
            "Remote", "Remote", "Input Directory is located on a remote system. State will be "
            "stored across the cluster."
        ),
    ),
)  # fmt: skip
FILE_FILTER = GetFile.FILE_FILTER  # the same as GetFile's
PATH_FILTER = GetFile.PATH_FILTER  # the same as GetFile's
INCLUDE_FILE_ATTRIBUTES = PropertyDescriptor(
    "Include File Attributes",
    description="Whether or not to include information such as the file's Last Modified Time "
    "and Owner as FlowFile Attributes. Depending on the File System being used, gathering this "
    "information can be expensive and as a result should be disabled. This is especially true "
    "of remote file shares.",
    required=True,
    default="true",
    allowable_values=("true", "false"),
)
MIN_AGE = GetFile.MIN_AGE  # the same as GetFile's
MAX_AGE = PropertyDescriptor(
    "Maximum File Age",
    description="The maximum age that a file must be in order to be pulled; any file older "
    "than this amount of time (according to last modification date) will be ignored",
    required=False,
    validators=(create_time_period_validator("100 millis", "106751 days"),),
)
MIN_SIZE = GetFile.MIN_SIZE  # the same as GetFile's
MAX_SIZE = GetFile.MAX_SIZE  # the same as GetFile's
IGNORE_HIDDEN_FILES = PropertyDescriptor(
    "Ignore Hidden Files",
    description="Indicates whether or not hidden files should be ignored",
    required=True,
    default="true",
    allowable_values=("true", "false"),
)
TIMESTAMP_PRECISION = PropertyDescriptor(
    "Target System Timestamp Precision",
    name="target-system-timestamp-precision",
    description="Specify timestamp precision at the target system. Since this processor uses "
    "timestamp of entities to decide which should be listed, it is crucial to use the right "
    "timestamp precision.",
    required=True,
    default="auto-detect",
    allowable_values=(
        AllowableValue(
            "auto-detect",
            "Auto Detect",
            "Automatically detect time unit deterministically based on candidate entries "
            "timestamp.",
        ),
        AllowableValue(
            "millis",
            "Milliseconds",
            "This option provides the minimum latency for an entry from being available to "
            "being listed if target system supports millis, if not, use other options.",
        ),
        AllowableValue(
            "seconds",
            "Seconds",
            "For a target system that does not have millis precision, but has in seconds.",
        ),
        AllowableValue(
            "minutes", "Minutes", "For a target system that only supports precision in minutes."
        ),
    ),
)
TRACKING_STATE_CACHE = PropertyDescriptor(
    "Entity Tracking State Cache",
    name="et-state-cache",
    description="Listed entities are stored in the specified cache storage so that this "
    "processor can resume listing across restarts. Cache key format is "
    f"'ListedEntities::{{processorId}}(::{{nodeId}})'. {_ENTITIES_NOTE}",
    required=False,
    identifies_service="DistributedMapCacheClient",
)
TRACKING_TIME_WINDOW = PropertyDescriptor(
    "Entity Tracking Time Window",
    name="et-time-window",
    description=f"Specify how long this processor should track already-listed entities. "
    f"{_ENTITIES_NOTE}",
    required=False,
    default="3 hours",
    validators=(TIME_PERIOD_VALIDATOR,),
    el_scope=ExpressionLanguageScope.ENVIRONMENT,
)
INITIAL_LISTING_TARGET = PropertyDescriptor(
    "Entity Tracking Initial Listing Target",
    name="et-initial-listing-target",
    description=f"Specify how initial listing should be handled. {_ENTITIES_NOTE}",
    required=False,
    default="all",
    allowable_values=(
        AllowableValue(
            "window",
            "Tracking Time Window",
            "Ignore entities having timestamp older than the specified 'Tracking Time Window' "
            "at the initial listing activity.",
        ),
        AllowableValue(
            "all",
            "All Available",
            "Regardless of entities timestamp, all existing entities will be listed at the "
            "initial listing activity.",
        ),
    ),
)
NODE_IDENTIFIER = PropertyDescriptor(
    "Entity Tracking Node Identifier",
    name="et-node-identifier",
    description="The configured value will be appended to the cache key (flowcore: not "
    "appended; it keeps one listing state per repository, listed on the driver, whatever the "
    f"host). {_ENTITIES_NOTE}",
    required=False,
    default="${hostname()}",
    validators=(NON_EMPTY_VALIDATOR,),
    el_scope=ExpressionLanguageScope.ENVIRONMENT,
)
TRACK_PERFORMANCE = PropertyDescriptor(
    "Track Performance",
    name="track-performance",
    description="Whether or not the Processor should track the performance of disk access "
    "operations. Accepted for NiFi flows; flowcore does not track per-file timings.",
    required=True,
    default="false",
    allowable_values=("true", "false"),
)
MAX_TRACKED_FILES = PropertyDescriptor(
    "Maximum Number of Files to Track",
    name="max-performance-metrics",
    description="If the 'Track Performance' property is set to 'true', this property indicates "
    "the maximum number of files whose performance metrics should be held onto (not used by "
    "flowcore).",
    required=True,
    default="100000",
    validators=(POSITIVE_INTEGER_VALIDATOR,),
    el_scope=ExpressionLanguageScope.ENVIRONMENT,
)
MAX_DISK_OPERATION_TIME = PropertyDescriptor(
    "Max Disk Operation Time",
    name="max-operation-time",
    description="The maximum amount of time that any single disk operation is expected to take "
    "(not tracked per operation by flowcore).",
    required=False,
    default="10 secs",
    validators=(TIME_PERIOD_VALIDATOR,),
    el_scope=ExpressionLanguageScope.ENVIRONMENT,
)
MAX_LISTING_TIME = PropertyDescriptor(
    "Max Directory Listing Time",
    name="max-listing-time",
    description="The maximum amount of time that listing the Input Directory (with its "
    "subdirectories) is expected to take; a longer listing logs a warning.",
    required=False,
    default="3 mins",
    validators=(TIME_PERIOD_VALIDATOR,),
    el_scope=ExpressionLanguageScope.ENVIRONMENT,
)

PROPERTY_DESCRIPTORS = (
    DIRECTORY,
    LISTING_STRATEGY,
    RECURSE,
    RECORD_WRITER,
    DIRECTORY_LOCATION,
    FILE_FILTER,
    PATH_FILTER,
    INCLUDE_FILE_ATTRIBUTES,
    MIN_AGE,
    MAX_AGE,
    MIN_SIZE,
    MAX_SIZE,
    IGNORE_HIDDEN_FILES,
    TIMESTAMP_PRECISION,
    TRACKING_STATE_CACHE,
    TRACKING_TIME_WINDOW,
    INITIAL_LISTING_TARGET,
    NODE_IDENTIFIER,
    TRACK_PERFORMANCE,
    MAX_TRACKED_FILES,
    MAX_DISK_OPERATION_TIME,
    MAX_LISTING_TIME,
)
#: Properties whose change starts the listing over (NiFi's isListingResetNecessary).
RESET_BY = (
    DIRECTORY,
    RECURSE,
    FILE_FILTER,
    PATH_FILTER,
    MIN_AGE,
    MAX_AGE,
    MIN_SIZE,
    MAX_SIZE,
    IGNORE_HIDDEN_FILES,
)
