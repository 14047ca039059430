"""What a test sees of a FlowFile the harness handled: its value, content and assertions."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flowcore.flowfile import FlowFile
    from repositories.memory import MemoryContentRepository

__all__ = ["MockFlowFile", "as_bytes"]


def as_bytes(expected: bytes | str | os.PathLike[str]) -> bytes:
    """*expected* as bytes: bytes as given, a string as UTF-8, a path as its file's bytes."""
    if isinstance(expected, bytes | bytearray):
        return bytes(expected)
    if isinstance(expected, str):
        return expected.encode("utf-8")
    return Path(expected).read_bytes()


class MockFlowFile:
    """A FlowFile as the harness saw it leave (or enter), with access to its content.

    Content is read from the harness's content repository when first asked for, so a test that
    emits millions of FlowFiles does not hold all their bytes.

    Attributes:
        flowfile: the FlowFile value.
    """

    __slots__ = ("_content", "_repository", "flowfile")

    def __init__(
        self,
        flowfile: FlowFile,
        content: bytes | None = None,
        repository: MemoryContentRepository | None = None,
    ) -> None:
        self.flowfile = flowfile
        self._content = content
        self._repository = repository

    @property
    def content(self) -> bytes:
        """The content bytes."""
        if self._content is None:
            claim = self.flowfile.content
            if claim is None or self._repository is None:
                return b""
            return self._repository.read(claim)
        return self._content

    def __repr__(self) -> str:
        return f"MockFlowFile({self.flowfile})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MockFlowFile):
            return self.flowfile == other.flowfile and self.content == other.content
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.flowfile)

    @property
    def attributes(self) -> Mapping[str, str]:
        """The attributes."""
        return self.flowfile.attributes

    @property
    def uuid(self) -> str:
        """The FlowFile's uuid."""
        return self.flowfile.uuid

    @property
    def id(self) -> int:
        """The FlowFile's id."""
        return self.flowfile.id

    @property
    def size(self) -> int:
        """The content size."""
        return self.flowfile.size

    def get_attribute(self, name: str) -> str | None:
        """One attribute, or ``None``."""
        return self.flowfile.attributes.get(name)

    def is_penalized(self, now: int) -> bool:
        """Whether the FlowFile is penalized at *now*."""
        return self.flowfile.is_penalized(now)

    def assert_content_equals(self, expected: bytes | str | os.PathLike[str]) -> None:
        """Assert the content equals bytes, a UTF-8 string, or a file's bytes."""
        wanted = as_bytes(expected)
        if self.content != wanted:
            msg = f"content of {self.flowfile} is {self.content!r}, expected {wanted!r}"
            raise AssertionError(msg)

    def assert_attribute_equals(self, name: str, value: str | None) -> None:
        """Assert an attribute's value (``None`` means absent)."""
        actual = self.flowfile.attributes.get(name)
        if actual != value:
            msg = f"attribute {name!r} of {self.flowfile} is {actual!r}, expected {value!r}"
            raise AssertionError(msg)

    def assert_attribute_exists(self, name: str) -> None:
        """Assert the attribute is present."""
        if name not in self.flowfile.attributes:
            msg = f"{self.flowfile} has no attribute {name!r}; it has {sorted(self.attributes)!r}"
            raise AssertionError(msg)

    def assert_attribute_not_exists(self, name: str) -> None:
        """Assert the attribute is absent."""
        if name in self.flowfile.attributes:
            value = self.flowfile.attributes[name]
            msg = f"{self.flowfile} has attribute {name!r} = {value!r}, expected it absent"
            raise AssertionError(msg)
