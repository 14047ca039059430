"""Execution: one task of a stage, FlowFile batches through its members (:mod:`.task`)."""
