"""PutDatabaseRecord's properties, relationships and statement types (NiFi's names).

Kept apart from the processor (:mod:`processors.sql.put_database_record`) and the statement
building (:mod:`processors.sql.record_statements`), which both read them.
"""

from __future__ import annotations

from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.validators import (
    NON_EMPTY_VALIDATOR,
    NON_NEGATIVE_INTEGER_VALIDATOR,
    REGULAR_EXPRESSION_VALIDATOR,
    TIME_PERIOD_VALIDATOR,
)
from processors.lookup_record import RECORD_PATH_VALIDATOR
from processors.sql.database_types import database_type_descriptor

_FF = ExpressionLanguageScope.FLOWFILE_ATTRIBUTES
PUT_DATABASE_RECORD_ERROR = "putdatabaserecord.error"
STATEMENT_TYPE_ATTRIBUTE = "statement.type"

REL_SUCCESS = Relationship("success", "Successfully created FlowFile from SQL query result set.")
REL_RETRY = Relationship(
    "retry",
    "A FlowFile is routed to this relationship if the database cannot be updated but "
    "attempting the operation again may succeed",
)
REL_FAILURE = Relationship(
    "failure",
    "A FlowFile is routed to this relationship if the database cannot be updated and "
    "retrying the operation will also fail, such as an invalid query or an integrity constraint "
    "violation",
)

USE_ATTR_TYPE = "Use statement.type Attribute"
USE_RECORD_PATH = "Use Record Path"
SQL_TYPE = "SQL"  # NiFi: not a Statement Type value, only the statement.type attribute's
STATEMENT_TYPES = ("UPDATE", "INSERT", "UPSERT", "INSERT_IGNORE", "DELETE")
#: What the statement.type attribute may say (any case).
ATTRIBUTE_TYPES = (*STATEMENT_TYPES, SQL_TYPE)

RECORD_READER = PropertyDescriptor(
    "Record Reader",
    description="Specifies the Controller Service to use for parsing incoming data and "
    "determining the data's schema.",
    required=True,
    identifies_service="RecordReaderFactory",
    aliases=("put-db-record-record-reader",),
)
DB_TYPE = database_type_descriptor(
    "Database Type for generating statements specific to a particular service or vendor "
    "(flowcore takes the dialect from the pool).",
    "db-type",
)
STATEMENT_TYPE = PropertyDescriptor(
    "Statement Type",
    description="Specifies the type of SQL Statement to generate. 'Use statement.type "
    "Attribute' takes it from the FlowFile's statement.type attribute, the only way to the "
    "'SQL' type: each record's Field Containing SQL is run as it is. 'Use Record Path' takes "
    "it per record from the Statement Type Record Path.",
    required=True,
    allowable_values=(
        *STATEMENT_TYPES,
        AllowableValue(USE_ATTR_TYPE),
        AllowableValue(USE_RECORD_PATH),
    ),
    aliases=("put-db-record-statement-type",),
)
STATEMENT_TYPE_RECORD_PATH = PropertyDescriptor(
    "Statement Type Record Path",
    description="Specifies a RecordPath to evaluate against each Record in order to determine "
    "the Statement Type. The RecordPath should equate to either INSERT, UPDATE, UPSERT, or "
    'DELETE. (Debezium style operation types are also supported: "r" and "c" for INSERT, '
    '"u" for UPDATE, and "d" for DELETE)',
    required=True,
    validators=(RECORD_PATH_VALIDATOR,),
    dependencies=((STATEMENT_TYPE, USE_RECORD_PATH),),
)
DATA_RECORD_PATH = PropertyDescriptor(
    "Data Record Path",
    description="If specified, this property denotes a RecordPath that will be evaluated "
    "against each incoming Record and the Record that results from evaluating the RecordPath "
    "will be sent to the database instead of sending the entire incoming Record. If not "
    "specified, the entire incoming Record will be published to the database.",
    validators=(RECORD_PATH_VALIDATOR,),
)
PRE_PROCESSING_SQL = PropertyDescriptor(
    "Pre-Processing SQL",
    description="One or more SQL statements, separated by semicolons, executed on the current "
    "database connection, before processing records for each FlowFile. Literal semicolons "
    "can be included in SQL statements by prefixing the semicolon with a backslash character.",
    validators=(NON_EMPTY_VALIDATOR,),
    el_scope=_FF,
)
POST_PROCESSING_SQL = PropertyDescriptor(
    "Post-Processing SQL",
    description="One or more SQL statements, separated by semicolons, executed on the current "
    "database connection, after processing records for each FlowFile. Literal semicolons can "
    "be included in SQL statements by prefixing the semicolon with a backslash.",
    validators=(NON_EMPTY_VALIDATOR,),
    el_scope=_FF,
)
DBCP_SERVICE = PropertyDescriptor(
    "Database Connection Pooling Service",
    description="The Controller Service that is used to obtain a connection to the database "
    "for sending records.",
    required=True,
    identifies_service="DBCPService",
    aliases=("put-db-record-dcbp-service",),
)
CATALOG_NAME = PropertyDescriptor(
    "Database Name",
    el_scope=_FF,
    aliases=("put-db-record-catalog-name", "Catalog Name"),
    description="The name of the database (or the name of the catalog, depending on the "
    "destination system) that the statement should update (flowcore: not used, the pool's "
    "URL names the database).",
)
SCHEMA_NAME = PropertyDescriptor(
    "Schema Name",
    el_scope=_FF,
    aliases=("put-db-record-schema-name",),
    description="The name of the schema that the table belongs to.",
)
TABLE_NAME = PropertyDescriptor(
    "Table Name",
    required=True,
    el_scope=_FF,
    aliases=("put-db-record-table-name",),
    description="The name of the table that the statement should affect.",
)
BINARY_STRING_FORMAT_UTF8 = "UTF-8"
BINARY_STRING_FORMAT_HEXADECIMAL = "Hexadecimal"
BINARY_STRING_FORMAT_BASE64 = "Base64"
BINARY_STRING_FORMAT = PropertyDescriptor(
    "Binary String Format",
    description="The format to be applied when decoding string values to binary.",
    required=True,
    el_scope=_FF,
    default=BINARY_STRING_FORMAT_UTF8,
    allowable_values=(
        AllowableValue(
            BINARY_STRING_FORMAT_UTF8,
            description="String values for binary columns contain the original value as "
            "text via UTF-8 character encoding",
        ),
        AllowableValue(
            BINARY_STRING_FORMAT_HEXADECIMAL,
            description="String values for binary columns contain the original value in "
            "hexadecimal format",
        ),
        AllowableValue(
            BINARY_STRING_FORMAT_BASE64,
            description="String values for binary columns contain the original value in "
            "Base64 encoded format",
        ),
    ),
    aliases=("put-db-record-binary-format",),
)
TRANSLATE_FIELD_NAMES = PropertyDescriptor(
    "Translate Field Names",
    description="If true, the Processor will attempt to translate field names into the "
    "appropriate column names for the table specified. If false, the field names must match "
    "the column names exactly, or the column will not be updated",
    default="true",
    allowable_values=("true", "false"),
    aliases=("put-db-record-translate-field-names",),
)
#: NiFi's TranslationStrategy values (the enum's names), as its NameNormalizers apply them.
REMOVE_UNDERSCORE = "REMOVE_UNDERSCORE"
REMOVE_SPACE = "REMOVE_SPACE"
REMOVE_UNDERSCORE_AND_SPACE = "REMOVE_UNDERSCORE_AND_SPACE"
REMOVE_ALL_SPECIAL_CHAR = "REMOVE_ALL_SPECIAL_CHAR"
PATTERN = "PATTERN"
TRANSLATION_STRATEGY = PropertyDescriptor(
    "Column Name Translation Strategy",
    description="The strategy used to normalize table column name. Column Name will be "
    "uppercased to do case-insensitive matching irrespective of strategy",
    required=True,
    default=REMOVE_UNDERSCORE,
    allowable_values=(
        AllowableValue(
            REMOVE_UNDERSCORE,
            "Remove Underscore",
            "Underscores '_' will be removed from column names Ex: 'Pics_1_23' becomes 'PICS123'",
        ),
        AllowableValue(
            REMOVE_SPACE,
            "Remove Space",
            "Spaces will be removed from column names Ex. 'User Name' becomes 'USERNAME'",
        ),
        AllowableValue(
            REMOVE_UNDERSCORE_AND_SPACE,
            "Remove Underscores and Spaces",
            "Spaces and Underscores will be removed from column names Ex. 'User_1 Name' "
            "becomes 'USER1NAME'",
        ),
        AllowableValue(
            REMOVE_ALL_SPECIAL_CHAR,
            "Remove Regular Expression Characters",
            "Remove Regular Expression Characters Ex. 'user-id' becomes USERID ,"
            "total(estimated) become TOTALESTIMATED",
        ),
        AllowableValue(
            PATTERN,
            "Regular Expression",
            "Remove characters matching this Regular Expression from the column names Ex.1. "
            "'\\d' will  Remove all numbers 2. '[^a-zA-Z0-9_]' will remove special characters "
            "except underscore",
        ),
    ),
    dependencies=((TRANSLATE_FIELD_NAMES, "true"),),
)
TRANSLATION_PATTERN = PropertyDescriptor(
    "Column Name Translation Pattern",
    description="Column name will be normalized with this regular expression",
    required=True,
    validators=(NON_EMPTY_VALIDATOR, REGULAR_EXPRESSION_VALIDATOR),
    dependencies=((TRANSLATION_STRATEGY, PATTERN),),
)
IGNORE_UNMATCHED_FIELD = "Ignore Unmatched Fields"
FAIL_UNMATCHED_FIELD = "Fail on Unmatched Fields"
UNMATCHED_FIELD_BEHAVIOR = PropertyDescriptor(
    "Unmatched Field Behavior",
    description="If an incoming record has a field that does not map to any of the database "
    "table's columns, this property specifies how to handle the situation",
    default=IGNORE_UNMATCHED_FIELD,
    allowable_values=(IGNORE_UNMATCHED_FIELD, FAIL_UNMATCHED_FIELD),
    aliases=("put-db-record-unmatched-field-behavior",),
)
IGNORE_UNMATCHED_COLUMN = "Ignore Unmatched Columns"
WARNING_UNMATCHED_COLUMN = "Warn on Unmatched Columns"
FAIL_UNMATCHED_COLUMN = "Fail on Unmatched Columns"
UNMATCHED_COLUMN_BEHAVIOR = PropertyDescriptor(
    "Unmatched Column Behavior",
    description="If an incoming record does not have a field mapping for all of the database "
    "table's columns, this property specifies how to handle the situation",
    default=FAIL_UNMATCHED_COLUMN,
    allowable_values=(IGNORE_UNMATCHED_COLUMN, WARNING_UNMATCHED_COLUMN, FAIL_UNMATCHED_COLUMN),
    aliases=("put-db-record-unmatched-column-behavior",),
)
UPDATE_KEYS = PropertyDescriptor(
    "Update Keys",
    description="A comma-separated list of column names that uniquely identifies a row in the "
    "database for UPDATE statements. If the Statement Type is UPDATE and this property is "
    "not set, the table's Primary Keys are used. This property is ignored if the Statement "
    "Type is INSERT",
    el_scope=_FF,
    dependencies=((STATEMENT_TYPE, "UPDATE", "UPSERT", SQL_TYPE, USE_ATTR_TYPE, USE_RECORD_PATH),),
    aliases=("put-db-record-update-keys",),
)
DELETE_KEYS = PropertyDescriptor(
    "Delete Keys",
    description="A comma-separated list of column names that uniquely identifies a row in the "
    "database for DELETE statements. If the Statement Type is DELETE and this property is not "
    "set, the table's columns are used. This property is ignored if the Statement Type is not "
    "DELETE",
    validators=(NON_EMPTY_VALIDATOR,),
    el_scope=_FF,
    dependencies=((STATEMENT_TYPE, "DELETE", SQL_TYPE, USE_ATTR_TYPE, USE_RECORD_PATH),),
)
FIELD_CONTAINING_SQL = PropertyDescriptor(
    "Field Containing SQL",
    description="If the Statement Type is 'SQL' (as set in the statement.type attribute), this "
    "field indicates which field in the record(s) contains the SQL statement to execute. The "
    "value of the field must be a single SQL statement. If the Statement Type is not 'SQL', "
    "this field is ignored.",
    validators=(NON_EMPTY_VALIDATOR,),
    el_scope=_FF,
    dependencies=((STATEMENT_TYPE, USE_ATTR_TYPE, USE_RECORD_PATH),),
    aliases=("put-db-record-field-containing-sql",),
)
ALLOW_MULTIPLE_STATEMENTS = PropertyDescriptor(
    "Allow Multiple SQL Statements",
    description="If the Statement Type is 'SQL' (as set in the statement.type attribute), this "
    "field indicates whether to split the field value by a semicolon and execute each "
    "statement separately. If any statement causes an error, the entire set of statements "
    "will be rolled back. If the Statement Type is not 'SQL', this field is ignored.",
    required=True,
    default="false",
    allowable_values=("true", "false"),
    dependencies=((STATEMENT_TYPE, USE_ATTR_TYPE, USE_RECORD_PATH),),
    aliases=("put-db-record-allow-multiple-statements",),
)
QUOTE_IDENTIFIERS = PropertyDescriptor(
    "Quote Column Identifiers",
    default="false",
    allowable_values=("true", "false"),
    aliases=("put-db-record-quoted-identifiers",),
    description="Enabling this option will cause all column names to be quoted.",
)
QUOTE_TABLE_IDENTIFIER = PropertyDescriptor(
    "Quote Table Identifiers",
    default="false",
    allowable_values=("true", "false"),
    aliases=("put-db-record-quoted-table-identifiers",),
    description="Enabling this option will cause the table name to be quoted.",
)
QUERY_TIMEOUT = PropertyDescriptor(
    "Max Wait Time",
    description="The maximum amount of time allowed for a running SQL statement, zero means "
    "there is no limit.",
    default="0 seconds",
    required=True,
    validators=(TIME_PERIOD_VALIDATOR,),
    el_scope=_FF,
    aliases=("put-db-record-query-timeout",),
)
ROLLBACK_ON_FAILURE = PropertyDescriptor(
    "Rollback On Failure",
    description="Specify how to handle error. By default (false), if an error occurs while "
    "processing a FlowFile, the FlowFile will be routed to 'failure' or 'retry' relationship "
    "based on error type. If set to true, the FlowFile will be kept in the incoming queue "
    "(penalized) and the session rolled back.",
    default="false",
    required=True,
    allowable_values=("true", "false"),
    aliases=("rollback-on-failure",),
)
TABLE_SCHEMA_CACHE_SIZE = PropertyDescriptor(
    "Table Schema Cache Size",
    default="100",
    required=True,
    validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
    aliases=("table-schema-cache-size",),
    description="Specifies how many Table Schemas should be cached",
)
MAX_BATCH_SIZE = PropertyDescriptor(
    "Maximum Batch Size",
    description="Specifies maximum number of sql statements to be included in each batch sent "
    "to the database. Zero means the batch size is not limited.",
    default="1000",
    required=True,
    validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
    el_scope=_FF,
    aliases=("put-db-record-max-batch-size",),
)


AUTO_COMMIT = PropertyDescriptor(
    "Database Session AutoCommit",
    description="The autocommit mode to set on the database connection being used (flowcore: "
    "accepted, not used: one transaction per FlowFile always, which exactly-once needs).",
    default="false",
    allowable_values=("true", "false"),
    aliases=("database-session-autocommit",),
)

PROPERTIES = (
    RECORD_READER,
    DB_TYPE,
    STATEMENT_TYPE,
    STATEMENT_TYPE_RECORD_PATH,
    DATA_RECORD_PATH,
    PRE_PROCESSING_SQL,
    POST_PROCESSING_SQL,
    DBCP_SERVICE,
    CATALOG_NAME,
    SCHEMA_NAME,
    TABLE_NAME,
    BINARY_STRING_FORMAT,
    TRANSLATE_FIELD_NAMES,
    TRANSLATION_STRATEGY,
    TRANSLATION_PATTERN,
    UNMATCHED_FIELD_BEHAVIOR,
    UNMATCHED_COLUMN_BEHAVIOR,
    UPDATE_KEYS,
    DELETE_KEYS,
    FIELD_CONTAINING_SQL,
    ALLOW_MULTIPLE_STATEMENTS,
    QUOTE_IDENTIFIERS,
    QUOTE_TABLE_IDENTIFIER,
    QUERY_TIMEOUT,
    ROLLBACK_ON_FAILURE,
    TABLE_SCHEMA_CACHE_SIZE,
    MAX_BATCH_SIZE,
    AUTO_COMMIT,
)
