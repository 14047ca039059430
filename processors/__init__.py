"""flowcore's built-in processors, with NiFi's names, properties and behaviour.

``BUILTIN_PROCESSORS`` is the registry the flow loader and ``flowcore processors`` use: one entry
per processor type, keyed by NiFi's type name.
"""

from collections.abc import Mapping

from flowcore.processor import Processor
from processors.attributes_to_json import AttributesToJSON
from processors.compress_content import CompressContent
from processors.control_rate import ControlRate
from processors.cryptographic_hash_content import CryptographicHashContent
from processors.detect_duplicate import DetectDuplicate
from processors.duplicate_flowfile import DuplicateFlowFile
from processors.evaluate_json_path import EvaluateJsonPath
from processors.extract_text import ExtractText
from processors.fetch_file import FetchFile
from processors.file_splitter import FileSplitter
from processors.generate_flowfile import GenerateFlowFile
from processors.get_file import GetFile
from processors.invoke_http import InvokeHTTP
from processors.list_file import ListFile
from processors.log_attribute import LogAttribute
from processors.merge_content import MergeContent
from processors.put_dataset import PutDataset
from processors.put_file import PutFile
from processors.replace_text import ReplaceText
from processors.route_on_attribute import RouteOnAttribute
from processors.route_on_content import RouteOnContent
from processors.route_text import RouteText
from processors.split_json import SplitJson
from processors.split_text import SplitText
from processors.unpack_content import UnpackContent
from processors.update_attribute import UpdateAttribute

BUILTIN_PROCESSORS: Mapping[str, type[Processor]] = {
    "ControlRate": ControlRate,
    "DetectDuplicate": DetectDuplicate,
    "ExtractText": ExtractText,
    "FetchFile": FetchFile,
    "CompressContent": CompressContent,
    "AttributesToJSON": AttributesToJSON,
    "CryptographicHashContent": CryptographicHashContent,
    "DuplicateFlowFile": DuplicateFlowFile,
    "EvaluateJsonPath": EvaluateJsonPath,
    "FileSplitter": FileSplitter,
    "GenerateFlowFile": GenerateFlowFile,
    "GetFile": GetFile,
    "InvokeHTTP": InvokeHTTP,
    "ListFile": ListFile,
    "LogAttribute": LogAttribute,
    "MergeContent": MergeContent,
    "PutDataset": PutDataset,
    "PutFile": PutFile,
    "ReplaceText": ReplaceText,
    "RouteOnAttribute": RouteOnAttribute,
    "RouteOnContent": RouteOnContent,
    "RouteText": RouteText,
    "SplitJson": SplitJson,
    "SplitText": SplitText,
    "UnpackContent": UnpackContent,
    "UpdateAttribute": UpdateAttribute,
}

__all__ = [
    "BUILTIN_PROCESSORS",
    "AttributesToJSON",
    "CompressContent",
    "ControlRate",
    "CryptographicHashContent",
    "DetectDuplicate",
    "DuplicateFlowFile",
    "EvaluateJsonPath",
    "ExtractText",
    "FetchFile",
    "FileSplitter",
    "GenerateFlowFile",
    "GetFile",
    "InvokeHTTP",
    "ListFile",
    "LogAttribute",
    "MergeContent",
    "PutDataset",
    "PutFile",
    "ReplaceText",
    "RouteOnAttribute",
    "RouteOnContent",
    "RouteText",
    "SplitJson",
    "SplitText",
    "UnpackContent",
    "UpdateAttribute",
]
