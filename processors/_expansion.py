"""How far decompression may expand: the bound UnpackContent and CompressContent share.

A few hundred bytes of bzip2 or a crafted ZIP unpack to gigabytes (a compression bomb). Written
out piece by piece such a FlowFile never fills memory, but it fills the content repository,
and a run that stops on a full disk meets the same FlowFile again at its next start: the
repository never recovers. So one FlowFile may unpack or decompress to at most
:func:`expansion_limit` bytes of its own size (:data:`MAX_EXPANSION` times it, plus
:data:`EXPANSION_ALLOWANCE`); past it the FlowFile goes to ``failure`` with the reason and the
rest of the run goes on. Real data stays well inside: deflate cannot pass about 1,032 times,
and text and logs compress ten to fifty times.
"""

from __future__ import annotations

__all__ = ["EXPANSION_ALLOWANCE", "MAX_EXPANSION", "expansion_limit"]

MAX_EXPANSION = 1_000  # unpacked bytes per archive byte (deflate's own ceiling is about 1,032)
EXPANSION_ALLOWANCE = 100 << 20  # bytes any archive may unpack to, whatever its size


def expansion_limit(compressed_size: int) -> int:
    """The most bytes content of *compressed_size* bytes may unpack or decompress to."""
    return MAX_EXPANSION * compressed_size + EXPANSION_ALLOWANCE
