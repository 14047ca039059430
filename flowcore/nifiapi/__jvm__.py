"""NiFi's ``JvmHolder``: there is no JVM in flowcore, so it holds nothing.

NiFi's base classes read ``JvmHolder.jvm`` in their constructors; processors written for NiFi
sometimes do too (``ArrayList``). Here ``jvm`` and ``gateway`` stay None and ``ArrayList`` is a
Python list, so code that only builds lists keeps working.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ArrayList", "JvmHolder"]


class JvmHolder:
    """Where NiFi keeps its Py4J gateway; empty in flowcore (there is no JVM to call)."""

    jvm: Any = None
    gateway: Any = None
    java_gateway: Any = None


def ArrayList(values: list[Any]) -> list[Any]:
    """NiFi's Java ``ArrayList`` of *values*: here a Python list."""
    return list(values)
