"""InvokeHTTP requests/s against a loopback server, beside a plain httpx loop in the same run.

A small asyncio HTTP/1.1 server (keep-alive, a 2-byte body) runs in its own process, so it
shares no interpreter lock with the client. Against it, in one run and interleaved:

- ``httpx loop``: one ``httpx.Client``, ``--requests`` GETs one after the other;
- ``httpx threads``: the same client, the GETs on ``--concurrency`` threads;
- ``InvokeHTTP 1``: GenerateFlowFile (``--requests`` FlowFiles) -> InvokeHTTP with Concurrent
  Requests 1 -> everything auto-terminated, on the direct runner (the whole flow run timed:
  FlowFiles made, requests, response FlowFiles written, provenance, the commit);
- ``InvokeHTTP N``: the same with Concurrent Requests ``--concurrency``;
- ``baseline flow``: the same flow with UpdateAttribute in InvokeHTTP's place, so ``own
  req/s`` is InvokeHTTP's rate beyond what making, committing and recording the FlowFiles
  costs any processor (as bench/json_processors.py reports beyond its split).

``--latency-ms`` makes the server answer each request that much later (an endpoint's own
time): concurrency pays where requests wait, as they do on real services.

``--repeat N`` runs each N times, interleaved; the best rate and the range are reported, with
the client process's CPU time per request (the server's excluded: on a busy machine the rates
follow it). The
issue's targets: InvokeHTTP one by one >= 0.7x the loop; with concurrency, more than the loop.

    .venv/bin/python bench/invoke_http.py [--requests N] [--concurrency N] [--repeat N]
        [--latency-ms MS]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import shutil
import socket
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # before bench/'s repositories.py

import httpx

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from processors import GenerateFlowFile, InvokeHTTP, UpdateAttribute

_RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"


class _Http(asyncio.Protocol):
    """Answers each request on a connection with 200 ``ok`` (bodies skipped by length), after
    ``latency`` seconds (an endpoint's own time, as a real service has)."""

    latency = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            head_end = self.buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            length = 0
            for line in self.buffer[:head_end].split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            end = head_end + 4 + length
            if len(self.buffer) < end:
                return
            self.buffer = self.buffer[end:]
            if self.latency:
                asyncio.get_running_loop().call_later(
                    self.latency,
                    self.transport.write,  # type: ignore[attr-defined]
                    _RESPONSE,
                )
            else:
                self.transport.write(_RESPONSE)  # type: ignore[attr-defined]


def _serve(listener: socket.socket, latency: float) -> None:
    _Http.latency = latency

    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(_Http, sock=listener)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def _httpx_loop(url: str, requests: int) -> tuple[float, float]:
    with httpx.Client() as client:
        client.get(url).read()  # connects
        started, cpu = time.perf_counter(), time.process_time()
        for _ in range(requests):
            client.get(url).read()
        return time.perf_counter() - started, time.process_time() - cpu


def _httpx_threads(url: str, requests: int, concurrency: int) -> tuple[float, float]:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    with httpx.Client(limits=limits) as client, ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(lambda _: client.get(url).read(), range(concurrency)))  # connects
        started, cpu = time.perf_counter(), time.process_time()
        list(pool.map(lambda _: client.get(url).read(), range(requests)))
        return time.perf_counter() - started, time.process_time() - cpu


def _invoke_http(
    url: str | None, requests: int, concurrency: int, root: Path
) -> tuple[float, float]:
    """One flow run; *url* None runs the baseline (UpdateAttribute in InvokeHTTP's place)."""
    shutil.rmtree(root / "repo", ignore_errors=True)
    flow = Flow("bench-http")
    gen = flow.add(GenerateFlowFile(batch_size=requests, file_size="0 B"), name="gen")
    processor = (
        UpdateAttribute(**{"n": "${uuid}"})  # one by one: the batch form declines EL per FlowFile
        if url is None
        else InvokeHTTP(
            http_url=url, concurrent_requests=concurrency, request_date_header_enabled="False"
        )
    )
    call = flow.add(processor, name="call")
    flow.connect(gen, call)
    flow.auto_terminate(call, list(processor.relationship_names()))
    settings = Settings(sync=False, parallelism=1, unbounded_source_batches=1)
    started, cpu = time.perf_counter(), time.process_time()
    result = run_flow(flow, "direct", repository=root / "repo", settings=settings)
    elapsed, used = time.perf_counter() - started, time.process_time() - cpu
    expected = "success" if url is None else "Response"
    assert result.count("call", expected) == requests, result.transfers
    return elapsed, used


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, interleaved")
    parser.add_argument(
        "--latency-ms", type=float, default=0.0, help="the server's time per request"
    )
    args = parser.parse_args()
    listener = socket.create_server(("127.0.0.1", 0), backlog=256)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/ping"
    server = multiprocessing.get_context("fork").Process(
        target=_serve, args=(listener, args.latency_ms / 1000)
    )
    server.start()
    listener.close()
    root = Path(tempfile.mkdtemp(prefix="bench-http-"))
    n, c = args.requests, args.concurrency
    cases = {
        "httpx loop": lambda: _httpx_loop(url, n),
        f"httpx threads {c}": lambda: _httpx_threads(url, n, c),
        "InvokeHTTP 1": lambda: _invoke_http(url, n, 1, root),
        f"InvokeHTTP {c}": lambda: _invoke_http(url, n, c, root),
        "baseline flow": lambda: _invoke_http(None, n, 1, root),
    }
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    try:
        _invoke_http(url, 100, 1, root)  # warms up imports and the repository code
        for _ in range(args.repeat):
            for name, case in cases.items():
                times[name].append(case())
    finally:
        server.kill()
        server.join()
        shutil.rmtree(root, ignore_errors=True)
    loop_best = n / min(wall for wall, _ in times["httpx loop"])
    base = min(wall for wall, _ in times["baseline flow"])
    results = {}
    for name, runs in times.items():
        best = min(wall for wall, _ in runs)
        results[name] = {
            "best_per_second": n / best,
            "slowest_per_second": n / max(wall for wall, _ in runs),
            "vs_httpx_loop": n / best / loop_best,
            "client_cpu_us_per_request": min(cpu for _, cpu in runs) / n * 1e6,
        }
        if name.startswith("InvokeHTTP"):  # the time beyond the same flow without HTTP
            own = n / max(best - base, 1e-3)
            results[name].update(own_per_second=own, own_vs_httpx_loop=own / loop_best)
    print(
        json.dumps(
            {
                "requests": n,
                "concurrency": c,
                "repeat": args.repeat,
                "latency_ms": args.latency_ms,
                **results,
            }
        )
    )
    header = ("best req/s", "slowest", "x loop", "CPU us/req", "own req/s", "own x loop")
    print(f"{'case':<18}" + "".join(f"{h:>12}" for h in header))
    for name, f in results.items():
        own = (
            f"{f['own_per_second']:>12,.0f}{f['own_vs_httpx_loop']:>12.2f}"
            if "own_per_second" in f
            else ""
        )
        print(
            f"{name:<18}{f['best_per_second']:>12,.0f}{f['slowest_per_second']:>12,.0f}"
            f"{f['vs_httpx_loop']:>12.2f}{f['client_cpu_us_per_request']:>12,.0f}{own}"
        )


if __name__ == "__main__":
    main()
