"""flowcore's built-in processors, with NiFi's names, properties and behaviour.

``BUILTIN_PROCESSORS`` is the registry the flow loader and ``flowcore processors`` use: one entry
per processor type, keyed by NiFi's type name.
"""

from collections.abc import Mapping

from flowcore.processor import Processor
from processors.attributes_to_json import AttributesToJSON
from processors.compress_content import CompressContent
from processors.control_rate import ControlRate
from processors.convert_record import ConvertRecord
from processors.cryptographic_hash_content import CryptographicHashContent
from processors.detect_duplicate import DetectDuplicate
from processors.duplicate_flowfile import DuplicateFlowFile
from processors.evaluate_json_path import EvaluateJsonPath
from processors.evaluate_xpath import EvaluateXPath
from processors.extract_text import ExtractText
from processors.fetch_distributed_map_cache import FetchDistributedMapCache
from processors.fetch_file import FetchFile
from processors.file_splitter import FileSplitter
from processors.fork_enrichment import ForkEnrichment
from processors.generate_flowfile import GenerateFlowFile
from processors.get_file import GetFile
from processors.invoke_http import InvokeHTTP
from processors.join_enrichment import JoinEnrichment
from processors.jolt_transform_json import JoltTransformJSON
from processors.list_file import ListFile
from processors.log_attribute import LogAttribute
from processors.log_message import LogMessage
from processors.lookup_record import LookupRecord
from processors.merge_content import MergeContent
from processors.modify_bytes import ModifyBytes
from processors.notify import Notify
from processors.put_dataset import PutDataset
from processors.put_distributed_map_cache import PutDistributedMapCache
from processors.put_email import PutEmail
from processors.put_file import PutFile
from processors.query_record import QueryRecord
from processors.replace_text import ReplaceText
from processors.retry_flowfile import RetryFlowFile
from processors.route_on_attribute import RouteOnAttribute
from processors.route_on_content import RouteOnContent
from processors.route_text import RouteText
from processors.split_json import SplitJson
from processors.split_record import SplitRecord
from processors.split_text import SplitText
from processors.unpack_content import UnpackContent
from processors.update_attribute import UpdateAttribute
from processors.validate_record import ValidateRecord
from processors.wait import Wait

BUILTIN_PROCESSORS: Mapping[str, type[Processor]] = {
    "ControlRate": ControlRate,
    "ConvertRecord": ConvertRecord,
    "DetectDuplicate": DetectDuplicate,
    "ExtractText": ExtractText,
    "FetchDistributedMapCache": FetchDistributedMapCache,
    "FetchFile": FetchFile,
    "CompressContent": CompressContent,
    "AttributesToJSON": AttributesToJSON,
    "CryptographicHashContent": CryptographicHashContent,
    "DuplicateFlowFile": DuplicateFlowFile,
    "EvaluateJsonPath": EvaluateJsonPath,
    "EvaluateXPath": EvaluateXPath,
    "FileSplitter": FileSplitter,
    "ForkEnrichment": ForkEnrichment,
    "GenerateFlowFile": GenerateFlowFile,
    "GetFile": GetFile,
    "InvokeHTTP": InvokeHTTP,
    "JoinEnrichment": JoinEnrichment,
    "JoltTransformJSON": JoltTransformJSON,
    "ListFile": ListFile,
    "LogAttribute": LogAttribute,
    "LogMessage": LogMessage,
    "LookupRecord": LookupRecord,
    "MergeContent": MergeContent,
    "ModifyBytes": ModifyBytes,
    "Notify": Notify,
    "PutDataset": PutDataset,
    "PutDistributedMapCache": PutDistributedMapCache,
    "PutEmail": PutEmail,
    "PutFile": PutFile,
    "QueryRecord": QueryRecord,
    "ReplaceText": ReplaceText,
    "RetryFlowFile": RetryFlowFile,
    "RouteOnAttribute": RouteOnAttribute,
    "RouteOnContent": RouteOnContent,
    "RouteText": RouteText,
    "SplitJson": SplitJson,
    "SplitRecord": SplitRecord,
    "SplitText": SplitText,
    "UnpackContent": UnpackContent,
    "UpdateAttribute": UpdateAttribute,
    "ValidateRecord": ValidateRecord,
    "Wait": Wait,
}

__all__ = [
    "BUILTIN_PROCESSORS",
    "AttributesToJSON",
    "CompressContent",
    "ControlRate",
    "ConvertRecord",
    "CryptographicHashContent",
    "DetectDuplicate",
    "DuplicateFlowFile",
    "EvaluateJsonPath",
    "EvaluateXPath",
    "ExtractText",
    "FetchDistributedMapCache",
    "FetchFile",
    "FileSplitter",
    "ForkEnrichment",
    "GenerateFlowFile",
    "GetFile",
    "InvokeHTTP",
    "JoinEnrichment",
    "JoltTransformJSON",
    "ListFile",
    "LogAttribute",
    "LogMessage",
    "LookupRecord",
    "MergeContent",
    "ModifyBytes",
    "Notify",
    "PutDataset",
    "PutDistributedMapCache",
    "PutEmail",
    "PutFile",
    "QueryRecord",
    "ReplaceText",
    "RetryFlowFile",
    "RouteOnAttribute",
    "RouteOnContent",
    "RouteText",
    "SplitJson",
    "SplitRecord",
    "SplitText",
    "UnpackContent",
    "UpdateAttribute",
    "ValidateRecord",
    "Wait",
]
