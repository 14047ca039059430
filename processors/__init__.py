"""flowcore's built-in processors, with NiFi's names, properties and behaviour.

``BUILTIN_PROCESSORS`` is the registry the flow loader and ``flowcore processors`` use: one entry
per processor type, keyed by NiFi's type name.
"""

from collections.abc import Mapping

from flowcore.processor import Processor
from processors.compress_content import CompressContent
from processors.file_splitter import FileSplitter
from processors.generate_flowfile import GenerateFlowFile
from processors.get_file import GetFile
from processors.log_attribute import LogAttribute
from processors.merge_content import MergeContent
from processors.put_dataset import PutDataset
from processors.put_file import PutFile
from processors.route_on_attribute import RouteOnAttribute
from processors.split_text import SplitText
from processors.unpack_content import UnpackContent
from processors.update_attribute import UpdateAttribute

BUILTIN_PROCESSORS: Mapping[str, type[Processor]] = {
    "CompressContent": CompressContent,
    "FileSplitter": FileSplitter,
    "GenerateFlowFile": GenerateFlowFile,
    "GetFile": GetFile,
    "LogAttribute": LogAttribute,
    "MergeContent": MergeContent,
    "PutDataset": PutDataset,
    "PutFile": PutFile,
    "RouteOnAttribute": RouteOnAttribute,
    "SplitText": SplitText,
    "UnpackContent": UnpackContent,
    "UpdateAttribute": UpdateAttribute,
}

__all__ = [
    "BUILTIN_PROCESSORS",
    "CompressContent",
    "FileSplitter",
    "GenerateFlowFile",
    "GetFile",
    "LogAttribute",
    "MergeContent",
    "PutDataset",
    "PutFile",
    "RouteOnAttribute",
    "SplitText",
    "UnpackContent",
    "UpdateAttribute",
]
