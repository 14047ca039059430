"""What the request deadlines cost the HTTP servers' reads, beside the socket's own reader.

ListenHTTP and HandleHttpRequest read a request through a buffered reader over the socket. Since
the request deadlines (``processors/http_server/_deadline.py``) that reader sits on
:class:`DeadlineReader`, which sets the socket's timeout around each receive while a deadline
runs. Over a loopback socket pair (a thread writing), in one run and interleaved:

- ``heads``: ``--heads`` request heads (a request line and 8 headers) read line by line, as
  ``parse_request`` does, through ``socket.makefile("rb")`` (before) and through the
  deadline reader in its head phase (now);
- ``body``: one body of ``--mib`` MiB read in 64 KiB parts, as ``read_body`` does, the same two
  ways (now: the body phase, its least rate checked on every receive).

``--repeat N`` runs each N times; the best and the range are reported.

    .venv/bin/python bench/http_request_reads.py [--heads N] [--mib N] [--repeat N]
"""

from __future__ import annotations

import argparse
import io
import json
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # before bench/'s repositories.py

from processors.http_server._deadline import DeadlineReader

_HEAD = (
    b"POST /contentListener HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: bench\r\n"
    b"Accept: */*\r\nContent-Type: text/plain\r\nX-Trace: 0123456789abcdef\r\n"
    b"Connection: keep-alive\r\nX-Filename: part-0001.log\r\nContent-Length: 0\r\n\r\n"
)


def _reader(sock: socket.socket, way: str, phase: str) -> tuple[Any, DeadlineReader | None]:
    if way == "before":
        return sock.makefile("rb"), None
    raw = DeadlineReader(sock, 30.0)
    if phase == "head":
        raw.head(3600.0)
    else:
        raw.body(30.0, 1024)
    return io.BufferedReader(raw), raw


def _timed(
    payload: bytes, consume: Callable[[Any, DeadlineReader | None], None], way: str, phase: str
) -> float:
    left, right = socket.socketpair()
    right.settimeout(30.0)
    writer = threading.Thread(target=left.sendall, args=(payload,))
    with left, right:
        rfile, raw = _reader(right, way, phase)
        writer.start()
        started = time.perf_counter()
        consume(rfile, raw)
        elapsed = time.perf_counter() - started
        writer.join()
        rfile.close()
    return elapsed


def _heads(count: int) -> Callable[[Any, DeadlineReader | None], None]:
    def consume(rfile: Any, raw: DeadlineReader | None) -> None:
        for _ in range(count):
            if raw is not None:
                raw.head(3600.0)  # as each request on a keep-alive connection starts
            while rfile.readline(65537) not in (b"\r\n", b""):
                pass

    return consume


def _body(size: int) -> Callable[[Any, DeadlineReader | None], None]:
    def consume(rfile: Any, raw: DeadlineReader | None) -> None:
        left = size
        while left:
            part = rfile.read(min(left, 64 * 1024))
            if not part:
                msg = "the body was cut short"
                raise RuntimeError(msg)
            left -= len(part)

    return consume


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heads", type=int, default=20_000)
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    size = args.mib << 20
    body = bytes(range(256)) * (size // 256)
    cases = {
        "heads": (_HEAD * args.heads, _heads(args.heads), "head"),
        "body": (body, _body(size), "body"),
    }
    times: dict[str, list[float]] = {}
    for _ in range(args.repeat):
        for name, (payload, consume, phase) in cases.items():
            for way in ("before", "now"):
                times.setdefault(f"{name} {way}", []).append(_timed(payload, consume, way, phase))
    result = {
        key: {"best_s": min(values), "worst_s": max(values), "runs": len(values)}
        for key, values in times.items()
    }
    print(
        json.dumps(
            {"bench": "http_request_reads", "heads": args.heads, "mib": args.mib, "results": result}
        )
    )
    print(f"{'case':<14}{'best':>10}{'range':>22}{'rate (best)':>18}")
    for key, values in times.items():
        best = min(values)
        rate = (
            (args.heads / best, "heads/s")
            if key.startswith("heads")
            else (args.mib / best, "MiB/s")
        )
        print(
            f"{key:<14}{best:>9.3f}s{min(values):>10.3f}-{max(values):.3f}s"
            f"{rate[0]:>12,.0f} {rate[1]}"
        )


if __name__ == "__main__":
    main()
