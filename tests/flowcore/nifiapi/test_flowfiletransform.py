"""Tests for nifiapi.flowfiletransform and nifiapi.flowfilesource: NiFi's result classes."""

from __future__ import annotations

import pytest

from nifiapi.flowfilesource import FlowFileSource, FlowFileSourceResult
from nifiapi.flowfiletransform import FlowFileTransform, FlowFileTransformResult


def test_results_hold_text_as_utf8_and_copy_attributes() -> None:
    """contents given as str are UTF-8 bytes; getAttributes is a copy or None."""
    for result_class in (FlowFileTransformResult, FlowFileSourceResult):
        result = result_class("success", {"a": "1"}, "é")
        assert result.getContents() == "é".encode()
        assert result.getAttributes() == {"a": "1"}
        assert result.getAttributes() is not result.attributes
        assert result_class("failure").getAttributes() is None


def test_the_base_classes_are_abstract_as_in_nifi() -> None:
    """transform and create must be implemented."""
    with pytest.raises(TypeError):
        FlowFileTransform()  # type: ignore[abstract]
    with pytest.raises(TypeError):
        FlowFileSource()  # type: ignore[abstract]
