"""flowcore's storage: content, FlowFile (write-ahead log) and provenance repositories.

Each is a protocol (:mod:`repositories.protocols`) with a durable implementation and, for unit
tests, an in-memory one (:mod:`repositories.memory`). Import from the module that defines a
name: this package imports nothing, so loading one repository does not load the others.
"""
