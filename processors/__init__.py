"""flowcore's built-in processors, with NiFi's names, properties and behaviour.

``BUILTIN_PROCESSORS`` is the registry the flow loader and ``flowcore processors`` use: one entry
per processor type, keyed by NiFi's type name.
"""

from collections.abc import Mapping

from flowcore.processor import Processor
from processors.attributes_to_json import AttributesToJSON
from processors.cryptographic_hash_content import CryptographicHashContent
from processors.duplicate_flowfile import DuplicateFlowFile
from processors.evaluate_json_path import EvaluateJsonPath
from processors.file_splitter import FileSplitter
from processors.generate_flowfile import GenerateFlowFile
from processors.get_file import GetFile
from processors.log_attribute import LogAttribute
from processors.merge_content import MergeContent
from processors.put_dataset import PutDataset
from processors.put_file import PutFile
from processors.route_on_attribute import RouteOnAttribute
from processors.split_json import SplitJson
from processors.split_text import SplitText
from processors.update_attribute import UpdateAttribute

BUILTIN_PROCESSORS: Mapping[str, type[Processor]] = {
    "AttributesToJSON": AttributesToJSON,
    "CryptographicHashContent": CryptographicHashContent,
    "DuplicateFlowFile": DuplicateFlowFile,
    "EvaluateJsonPath": EvaluateJsonPath,
    "FileSplitter": FileSplitter,
    "GenerateFlowFile": GenerateFlowFile,
    "GetFile": GetFile,
    "LogAttribute": LogAttribute,
    "MergeContent": MergeContent,
    "PutDataset": PutDataset,
    "PutFile": PutFile,
    "RouteOnAttribute": RouteOnAttribute,
    "SplitJson": SplitJson,
    "SplitText": SplitText,
    "UpdateAttribute": UpdateAttribute,
}

__all__ = [
    "BUILTIN_PROCESSORS",
    "AttributesToJSON",
    "CryptographicHashContent",
    "DuplicateFlowFile",
    "EvaluateJsonPath",
    "FileSplitter",
    "GenerateFlowFile",
    "GetFile",
    "LogAttribute",
    "MergeContent",
    "PutDataset",
    "PutFile",
    "RouteOnAttribute",
    "SplitJson",
    "SplitText",
    "UpdateAttribute",
]
