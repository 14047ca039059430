"""A process that starts a multipart upload and is killed (SIGKILL) before its third part.

Run by test_multipart.py: ``python -m tests.processors.aws.multipart_child ENDPOINT BUCKET KEY
STATE_DIR CONTENT_FILE``. The first two parts reach S3 and the local state; the process then
dies as a crash would, with no cleanup.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from processors.aws._multipart import StateStore, upload_multipart
from tests.processors.aws.s3_server import client

OWNER = "repo/put"
CACHE_KEY = "put/bucket/key/uuid-1"
PART = 5 << 20


class FileSession:
    """Reads a FlowFile's content from a file (what a session's read gives the upload)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def read(self, flowfile: Any) -> Any:
        del flowfile
        return open(self.path, "rb")


class Content:
    """The FlowFile the upload sees: only its size matters."""

    def __init__(self, size: int) -> None:
        self.size = size


def main() -> None:
    endpoint, bucket, key, state_dir, path = sys.argv[1:6]
    s3 = client(endpoint)
    real = s3.upload_part

    def upload_part(**params: Any) -> Any:
        if params["PartNumber"] == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(**params)

    s3.upload_part = upload_part
    store = StateStore(state_dir, OWNER)
    size = os.path.getsize(path)
    upload_multipart(
        s3, FileSession(path), Content(size), bucket, key, {}, PART, store=store,
        cache_key=CACHE_KEY,
    )  # fmt: skip


if __name__ == "__main__":
    main()
