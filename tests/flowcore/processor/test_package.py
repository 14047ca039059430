"""Tests for the flowcore.processor package: what the module it replaced exported."""

from __future__ import annotations

import flowcore.processor
from flowcore.processor.base import Capabilities, InputRequirement, Processor, ProcessorKind
from flowcore.processor.context import ProcessContext
from flowcore.session.batch_context import BatchRoute, WrittenBatch


def test_the_package_exports_what_the_module_did() -> None:
    """``from flowcore.processor import ...`` gets exactly the names (and objects) the
    ``flowcore.processor`` module exported before it became a package, in a sorted ``__all__``."""
    exported = {
        "BatchRoute": BatchRoute,
        "Capabilities": Capabilities,
        "InputRequirement": InputRequirement,
        "ProcessContext": ProcessContext,
        "Processor": Processor,
        "ProcessorKind": ProcessorKind,
        "WrittenBatch": WrittenBatch,
    }
    assert flowcore.processor.__all__ == sorted(exported)
    for name, value in exported.items():
        assert getattr(flowcore.processor, name) is value, name
