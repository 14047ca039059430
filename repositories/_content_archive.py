"""The content archive's age-off: what NiFi's FileSystemRepository does with unclaimed content.

An unclaimed claim file is moved to its section's ``archive/`` directory (kept for replay) and
aged off as NiFi does: older than the max retention period (3 hours), or oldest first while
the disk is fuller than the max usage percentage (90%), down to 2 points below it. A file's age
is its claim id's millisecond prefix (the file's mtime for a name without one).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from flowcore.errors import RepositoryError

__all__ = [
    "ARCHIVE",
    "ARCHIVE_CLEANUP_FREQUENCY_MS",
    "DEFAULT_ARCHIVE_MAX_RETENTION",
    "DEFAULT_ARCHIVE_MAX_USAGE",
    "archived",
    "created_ms",
    "expire",
    "percentage",
]

DEFAULT_ARCHIVE_MAX_RETENTION = "3 hours"  # nifi.content.repository.archive.max.retention.period
DEFAULT_ARCHIVE_MAX_USAGE = "90%"  # nifi.content.repository.archive.max.usage.percentage
ARCHIVE = "archive"  # per-section directory of archived claim files, as NiFi
#: How often a driver ages off the archive (NiFi's ``archive.cleanup.frequency``: 1 min).
ARCHIVE_CLEANUP_FREQUENCY_MS = 60_000
#: What the age-off frees below the max usage percentage once it starts deleting (NiFi's 2%).
_HEADROOM = 0.02
_PERCENT = re.compile(r"(\d{1,2})%")


def percentage(value: str, name: str) -> float:
    """*value* (``"90%"``) as a fraction; *name* is the setting, for the error.

    Raises:
        RepositoryError: not a whole percentage below 100.
    """
    match = _PERCENT.fullmatch(value.strip())
    if match is None:
        msg = f"{name} must be a whole percentage below 100 such as '90%', not {value!r}"
        raise RepositoryError(msg)
    return int(match.group(1)) / 100


def created_ms(claim_id: str, path: Path) -> int:
    """A claim's creation time: its id's millisecond prefix, else the file's mtime."""
    head = claim_id.split("-", 1)[0]
    if head.isdigit():
        return int(head)
    return path.stat().st_mtime_ns // 1_000_000


def archived(root: Path) -> Iterator[tuple[int, Path]]:
    """The archived files of the container at *root*, each with its creation time."""
    for section in root.iterdir():
        archive = section / ARCHIVE
        if section.name.isdigit() and archive.is_dir():
            for path in archive.iterdir():
                yield created_ms(path.name, path), path


def expire(
    entries: Iterable[tuple[int, Path]],
    now: int,
    *,
    retention_ms: int,
    max_usage: float,
    usage: Callable[[], float],
    delete: Callable[[Path], None],
) -> int:
    """Delete archived *entries* past retention, then the oldest while the disk is too full.

    Args:
        entries: the container's archived files with their creation times (:func:`archived`).
        now: the time, epoch milliseconds.
        retention_ms: the max retention period.
        max_usage: the max usage fraction of the container's disk.
        usage: the disk's used fraction now (measured again after each deletion).
        delete: deletes one archived file.

    Returns:
        How many files were deleted.
    """
    removed = 0
    remaining = []
    for created, path in entries:
        if now - created > retention_ms:
            delete(path)
            removed += 1
        else:
            remaining.append((created, path))
    target = max_usage - _HEADROOM
    if remaining and usage() > target:
        for _created, path in sorted(remaining):
            delete(path)
            removed += 1
            if usage() <= target:
                break
    return removed
