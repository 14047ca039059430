"""A worker for the kill test: commits as fast as it can until it is SIGKILLed.

It prints ``BEGIN <op>`` before each commit and ``DONE`` after it returns (fsynced), so the
parent knows which transactions were durable and which one may have been in flight.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from flowcore.flowfile import FlowFile
from repositories.content import FileContentRepository
from repositories.flowfile_wal import WriteAheadFlowFileRepository
from repositories.records import Transaction


def main(directory: Path, seed: int) -> None:
    repo = WriteAheadFlowFileRepository(directory / "flowfiles", checkpoint_every=7)
    content = FileContentRepository(directory / "content", max_appendable_size=4096)
    rng = random.Random(seed)
    print("READY", flush=True)
    while True:
        queued = [(q, s.segment_id) for q in repo.queue_ids() for s in repo.segments(q)]
        if rng.random() < 0.6 or not queued:
            queue = rng.choice("abc")
            ids = repo.next_flowfile_ids(rng.randint(1, 50))
            writer = content.writer(f"worker-{seed}")
            flowfiles = []
            for flowfile_id in ids:
                stream = writer.open_stream()
                stream.write(f"ff-{flowfile_id}".encode())
                flowfiles.append(
                    FlowFile.create(
                        flowfile_id, 0, {"id": str(flowfile_id)}, content=stream.close()
                    )
                )
            writer.close()
            segment = repo.write_segment(queue, flowfiles, owner=f"worker-{seed}")
            print(f"BEGIN E {','.join(map(str, ids))}", flush=True)
            repo.commit(Transaction(enqueued=[segment]))
        else:
            queue, segment_id = rng.choice(queued)
            moved = repo.write_segment(rng.choice("abc"), repo.read_segment(segment_id))
            print("BEGIN M", flush=True)
            repo.commit(Transaction(dequeued=[segment_id], enqueued=[moved]))
        print("DONE", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]))
