"""flowcore's built-in processors, with NiFi's names, properties and behaviour.

``BUILTIN_PROCESSORS`` is the registry the flow loader and ``flowcore processors`` use: one entry
per processor type, keyed by NiFi's type name, naming the module that defines it. A module is
imported when its processor is first asked for (``from processors import SplitText``, a flow
definition naming it, a listing), so a command or a Spark worker loads only the processors its
flow uses, not every processor's libraries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from processors._lazy_types import LazyTypes, lazy_module_attributes

if TYPE_CHECKING:
    from flowcore.processor.base import Processor

BUILTIN_PROCESSORS: LazyTypes[type[Processor]] = LazyTypes(
    {
        "AttributesToJSON": "processors.attributes_to_json",
        "CompressContent": "processors.compress_content",
        "ConsumeKafka": "processors.kafka.consume_kafka",
        "ControlRate": "processors.control_rate",
        "ConvertAvroToJSON": "processors.convert_avro_to_json",
        "ConvertRecord": "processors.convert_record",
        "CryptographicHashContent": "processors.cryptographic_hash_content",
        "DeleteS3Object": "processors.aws.delete_s3_object",
        "DetectDuplicate": "processors.detect_duplicate",
        "DuplicateFlowFile": "processors.duplicate_flowfile",
        "EvaluateJsonPath": "processors.evaluate_json_path",
        "EvaluateXPath": "processors.evaluate_xpath",
        "ExecuteSQL": "processors.sql.execute_sql",
        "ExecuteSQLRecord": "processors.sql.execute_sql_record",
        "ExtractAvroMetadata": "processors.extract_avro_metadata",
        "ExtractText": "processors.extract_text",
        "FetchDistributedMapCache": "processors.fetch_distributed_map_cache",
        "FetchFile": "processors.fetch_file",
        "FetchS3Object": "processors.aws.fetch_s3_object",
        "FetchSFTP": "processors.sftp.fetch_sftp",
        "FileSplitter": "processors.file_splitter",
        "ForkEnrichment": "processors.fork_enrichment",
        "GenerateFlowFile": "processors.generate_flowfile",
        "GenerateTableFetch": "processors.sql.generate_table_fetch",
        "GetDataFrame": "processors.get_dataframe",
        "GetFile": "processors.get_file",
        "GetSFTP": "processors.sftp.get_sftp",
        "HandleHttpRequest": "processors.http_server.handle_http_request",
        "HandleHttpResponse": "processors.http_server.handle_http_response",
        "InvokeHTTP": "processors.invoke_http",
        "JoinEnrichment": "processors.join_enrichment",
        "JoltTransformJSON": "processors.jolt_transform_json",
        "JoltTransformRecord": "processors.jolt_transform_record",
        "ListFile": "processors.list_file",
        "ListS3": "processors.aws.list_s3",
        "ListSFTP": "processors.sftp.list_sftp",
        "ListenHTTP": "processors.http_server.listen_http",
        "LogAttribute": "processors.log_attribute",
        "LogMessage": "processors.log_message",
        "LookupRecord": "processors.lookup_record",
        "MergeContent": "processors.merge_content",
        "MergeRecord": "processors.merge_record",
        "ModifyBytes": "processors.modify_bytes",
        "Notify": "processors.notify",
        "PartitionRecord": "processors.partition_record",
        "PublishKafka": "processors.kafka.publish_kafka",
        "PutDatabaseRecord": "processors.sql.put_database_record",
        "PutDataset": "processors.put_dataset",
        "PutDistributedMapCache": "processors.put_distributed_map_cache",
        "PutEmail": "processors.put_email",
        "PutFile": "processors.put_file",
        "PutS3Object": "processors.aws.put_s3_object",
        "PutSFTP": "processors.sftp.put_sftp",
        "PutSQL": "processors.sql.put_sql",
        "QueryDatabaseTable": "processors.sql.query_database_table",
        "QueryDatabaseTableRecord": "processors.sql.query_database_table_record",
        "QueryRecord": "processors.query_record",
        "ReplaceText": "processors.replace_text",
        "RetryFlowFile": "processors.retry_flowfile",
        "RouteOnAttribute": "processors.route_on_attribute",
        "RouteOnContent": "processors.route_on_content",
        "RouteText": "processors.route_text",
        "SplitJson": "processors.split_json",
        "SplitRecord": "processors.split_record",
        "SplitText": "processors.split_text",
        "TagS3Object": "processors.aws.tag_s3_object",
        "UnpackContent": "processors.unpack_content",
        "UpdateAttribute": "processors.update_attribute",
        "UpdateRecord": "processors.update_record",
        "ValidateRecord": "processors.validate_record",
        "Wait": "processors.wait",
    }
)

__all__ = ["BUILTIN_PROCESSORS", *BUILTIN_PROCESSORS]  # noqa: PLE0604 (names resolved below)


__getattr__, __dir__ = lazy_module_attributes(__name__, __all__, BUILTIN_PROCESSORS)
