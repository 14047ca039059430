"""CryptographicHashContent: a hash of the content as an attribute, as NiFi's processor."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

import numpy as np

from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import column_of
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, PropertyDescriptor
from flowcore.session.batch_context import BatchContext, BatchRoute
from flowcore.session.process_session import ProcessSession
from flowcore.validators import BOOLEAN_VALIDATOR, NON_EMPTY_VALIDATOR, ValidationResult

__all__ = ["CryptographicHashContent"]

_CHUNK = 1 << 20  # bytes read at a time from a large content


def _hashlib(name: str, **kwargs: Any) -> Callable[[], Any]:
    return lambda: hashlib.new(name, **kwargs)


def _blake2b(size: int) -> Callable[[], Any]:
    return lambda: hashlib.blake2b(digest_size=size)


#: NiFi's HashAlgorithm, in its order: name, digest bytes, description, hashlib constructor
#: (None: not available to Python's hashlib).
_ALGORITHMS: tuple[tuple[str, int, str, Callable[[], Any] | None], ...] = (
    ("MD2", 16, "Cryptographically broken due to collisions", None),
    ("MD5", 16, "Cryptographically broken due to collisions", _hashlib("md5")),
    ("SHA-1", 20, "Cryptographically broken due to collisions", _hashlib("sha1")),
    ("SHA-224", 28, "SHA-2 family", _hashlib("sha224")),
    ("SHA-256", 32, "SHA-2 family", _hashlib("sha256")),
    ("SHA-384", 48, "SHA-2 family", _hashlib("sha384")),
    ("SHA-512", 64, "SHA-2 family", _hashlib("sha512")),
    ("SHA-512/224", 28, "SHA-2 using SHA-512 with truncated output", _hashlib("sha512_224")),
    ("SHA-512/256", 32, "SHA-2 using SHA-512 with truncated output", _hashlib("sha512_256")),
    ("SHA3-224", 28, "Keccak-based SHA3 family", _hashlib("sha3_224")),
    ("SHA3-256", 32, "Keccak-based SHA3 family", _hashlib("sha3_256")),
    ("SHA3-384", 48, "Keccak-based SHA3 family", _hashlib("sha3_384")),
    ("SHA3-512", 64, "Keccak-based SHA3 family", _hashlib("sha3_512")),
    ("BLAKE2-160", 20, "Deprecated for removal. Also known as Blake2b", _blake2b(20)),
    ("BLAKE2-256", 32, "Deprecated for removal. Also known as Blake2b", _blake2b(32)),
    ("BLAKE2-384", 48, "Deprecated for removal. Also known as Blake2b", _blake2b(48)),
    ("BLAKE2-512", 64, "Deprecated for removal. Also known as Blake2b", _blake2b(64)),
)
_BROKEN = frozenset({"MD2", "MD5", "SHA-1"})
HASHERS: Mapping[str, Callable[[], Any] | None] = {name: make for name, _, _, make in _ALGORITHMS}


def _allowable(name: str, size: int, description: str) -> AllowableValue:
    """NiFi's ``buildAllowableValueDescription``."""
    warning = " [WARNING -- Cryptographically broken]" if name in _BROKEN else ""
    return AllowableValue(name, name, f"{name} ({size} byte output){warning} {description}")


def hash_content(algorithm: str, pieces: Iterable[bytes | memoryview]) -> str:
    """The lower-case hex digest of *pieces* under NiFi's *algorithm* name."""
    make = HASHERS[algorithm]
    assert make is not None  # validation refuses the others
    digest = make()
    for piece in pieces:
        digest.update(piece)
    return digest.hexdigest()


REL_SUCCESS = Relationship("success", "Used for flowfiles that have a hash value added")
REL_FAILURE = Relationship(
    "failure", "Used for flowfiles that have no content if the 'fail on empty' setting is enabled"
)


class CryptographicHashContent(Processor):
    """Hashes the content and writes ``content_<algorithm>`` (NiFi's CryptographicHashContent).

    The attribute is named after the algorithm as configured (``content_SHA-256``) and holds the
    lower-case hex digest. Empty content is hashed too, unless Fail if the content is empty is
    true: then it goes to ``failure``. MD2, which Python's hashlib lacks, is refused by
    validation.
    """

    FAIL_WHEN_EMPTY = PropertyDescriptor(
        "Fail if the content is empty",
        name="fail_when_empty",
        description="Route to failure if the content is empty. While hashing an empty value is "
        "valid, some flows may want to detect empty input.",
        required=True,
        default="false",
        allowable_values=("true", "false"),
        validators=(BOOLEAN_VALIDATOR,),
    )
    HASH_ALGORITHM = PropertyDescriptor(
        "Hash Algorithm",
        name="hash_algorithm",
        description="The hash algorithm to use. Note that not all of the algorithms available are "
        "recommended for use (some are provided for legacy compatibility). There are many things "
        "to consider when picking an algorithm; it is recommended to use the most secure "
        "algorithm possible.",
        required=True,
        default="SHA-256",
        allowable_values=tuple(_allowable(n, s, d) for n, s, d, _ in _ALGORITHMS),
        validators=(NON_EMPTY_VALIDATOR,),
    )
    property_descriptors: ClassVar = (FAIL_WHEN_EMPTY, HASH_ALGORITHM)
    relationships: ClassVar = (REL_SUCCESS, REL_FAILURE)
    supports_batching: ClassVar = True
    tags: ClassVar = ("content", "hash", "sha", "blake2", "md5", "cryptography")
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "content_<algorithm>": "This processor adds an attribute whose value is the result of "
        "hashing the flowfile content. The name of this attribute is specified by the value of "
        "the algorithm, e.g. 'content_SHA-256'."
    }

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """An algorithm Python's hashlib cannot compute is refused, naming the others."""
        algorithm = values.get(self.HASH_ALGORITHM.name)
        if algorithm in HASHERS and not _available(algorithm):
            usable = ", ".join(n for n in HASHERS if _available(n))
            why = f"{algorithm} is not available in flowcore (Python's hashlib); use {usable}"
            return [ValidationResult(self.HASH_ALGORITHM.display_name, algorithm, False, why)]
        return []

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Hash one FlowFile's content."""
        flowfile = session.get()
        if flowfile is None:
            return
        algorithm = context.get_property(self.HASH_ALGORITHM).value or "SHA-256"
        if flowfile.size == 0 and context.get_property(self.FAIL_WHEN_EMPTY).as_boolean():
            context.logger.info(
                "Routing %s to 'failure' because content is empty (and FAIL_WHEN_EMPTY is true)",
                flowfile,
            )
            session.transfer(flowfile, REL_FAILURE)
            return
        with session.read(flowfile) as stream:
            value = hash_content(algorithm, iter(lambda: stream.read(_CHUNK), b""))
        flowfile = session.put_attribute(flowfile, f"content_{algorithm}", value)
        session.transfer(flowfile, REL_SUCCESS)

    def transform_batch(
        self, context: BatchContext, batch: FlowFileBatch
    ) -> list[BatchRoute] | None:
        """Hash a whole batch: contents read in windows of its claim, digests as a column.

        Empty contents go to ``failure`` unchanged when Fail if the content is empty is true.
        """
        algorithm = context.get_property(self.HASH_ALGORITHM).value or "SHA-256"
        empty = batch.sizes == 0
        if not context.get_property(self.FAIL_WHEN_EMPTY).as_boolean():
            empty = np.zeros(batch.count, dtype=bool)
        hashed = np.flatnonzero(~empty)
        routes = []
        if len(hashed):
            part = batch.take(hashed)
            digests = [hash_content(algorithm, pieces) for pieces in context.contents(part)]
            column = column_of(digests)
            routes.append(
                BatchRoute(
                    REL_SUCCESS.name, hashed, part.with_columns({f"content_{algorithm}": column})
                )
            )
        failed = np.flatnonzero(empty)
        if len(failed):
            routes.append(BatchRoute(REL_FAILURE.name, failed, batch.take(failed)))
        return routes


def _available(algorithm: str) -> bool:
    make = HASHERS.get(algorithm)
    if make is None:
        return False
    try:
        make()
    except ValueError:  # an OpenSSL build without it (SHA-512/224 on some)
        return False
    return True
