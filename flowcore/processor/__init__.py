"""The processor API: what a processor is, the kinds the engine runs, what it is given.

:mod:`flowcore.processor.base` (the :class:`Processor` base class, its kinds and input
requirements), :mod:`flowcore.processor.kinds` (the transform, binning, source and two-phase
sink kinds), :mod:`flowcore.processor.context` (the context a processor runs in),
:mod:`flowcore.processor.relationship` (where FlowFiles go) and
:mod:`flowcore.processor.binning` (the bins of binning processors). This package re-exports what
``flowcore.processor`` exported when it was a module.
"""

from flowcore.processor.base import Capabilities, InputRequirement, Processor, ProcessorKind
from flowcore.processor.context import ProcessContext
from flowcore.session.batch_context import BatchRoute, WrittenBatch

__all__ = [
    "BatchRoute",
    "Capabilities",
    "InputRequirement",
    "ProcessContext",
    "Processor",
    "ProcessorKind",
    "WrittenBatch",
]
