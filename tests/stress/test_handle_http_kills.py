"""kill -9 of real continuous `flowcore run`s of HandleHttpRequest -> HandleHttpResponse -> PutFile.

HandleHttpResponse answers only after the write-ahead log transaction that moves the FlowFile to
success is durable. So what a client was answered 200 is in the flow's output whatever happens
after, a run killed while it holds a request breaks that client's connection (it retries), and
no request is answered twice or with another request's response.
"""

from __future__ import annotations

import random
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests.processors.http_server._serving import answers, free_port
from tests.stress._flowcore_runs import kill_run, start_continuous_run, stop_run

pytestmark = pytest.mark.stress

FLOW = """
import os
from flowcore import Flow
from processors import HandleHttpRequest, HandleHttpResponse, PutFile
from processors.http_server import StandardHttpContextMap

flow = Flow("handle-kills")
flow.add_service(StandardHttpContextMap("map"))
request = flow.add(
    HandleHttpRequest(listening_port=os.environ["PORT"], http_context_map="map"), name="request"
)
response = flow.add(
    HandleHttpResponse(http_status_code="200", http_context_map="map", **{"X-Id": "${uuid}"}),
    name="response",
)
put = flow.add(PutFile(directory="out"), name="put")
flow.connect(request, response)
flow.connect(response, put, "success")
flow.auto_terminate(response, "failure")
flow.auto_terminate(put, ["success", "failure"])
"""


def _start(workdir: Path, port: int) -> subprocess.Popen:
    """A continuous ``flowcore run`` of the flow, once its server takes connections."""
    url = f"http://127.0.0.1:{port}/"  # OPTIONS is not allowed: 405 at once, nothing queued
    return start_continuous_run(workdir, {"PORT": str(port)}, lambda: answers("OPTIONS", url))


def _written(workdir: Path) -> Counter[bytes]:
    out = workdir / "out"
    return Counter(p.read_bytes() for p in out.iterdir()) if out.exists() else Counter()


@pytest.mark.slow
def test_kill_9_at_random_moments_loses_no_answered_request(tmp_path: Path) -> None:
    """Two clients send 24 bodies, each retried until answered 200, while the run is killed 3
    times at random moments: every answer is its own request's (body and a FlowFile uuid seen
    once), every body answered is in the output, and only a body whose connection broke at a
    kill may be there twice."""
    (tmp_path / "flow.py").write_text(FLOW)
    port = free_port()
    url = f"http://127.0.0.1:{port}/echo"
    bodies = [b"request %03d" % i for i in range(24)]
    broken: set[bytes] = set()
    answered: Counter[bytes] = Counter()
    uuids: list[str] = []
    wrong: list[tuple[bytes, bytes]] = []
    lock = threading.Lock()

    def send(mine: list[bytes]) -> None:
        with httpx.Client(timeout=10) as client:
            for body in mine:
                while True:
                    try:
                        response = client.post(url, content=body)
                    except httpx.TransportError:
                        with lock:
                            broken.add(body)
                        time.sleep(0.05)
                        continue
                    if response.status_code == 200:
                        with lock:
                            answered[body] += 1
                            uuids.append(response.headers["X-Id"])
                            if response.content != body:
                                wrong.append((body, response.content))
                        break
                    time.sleep(0.05)  # 503: expired or stopping; send again

    run = _start(tmp_path, port)
    clients = [threading.Thread(target=send, args=(bodies[i::2],)) for i in range(2)]
    for client in clients:
        client.start()
    rng = random.Random(37)
    for _ in range(3):
        time.sleep(rng.uniform(0.2, 0.8))
        kill_run(run)
        run = _start(tmp_path, port)
    for client in clients:
        client.join(timeout=60)
    assert not any(c.is_alive() for c in clients)
    deadline = time.monotonic() + 20
    while set(_written(tmp_path)) < set(bodies) and time.monotonic() < deadline:
        time.sleep(0.05)
    stop_run(run)
    written = _written(tmp_path)
    assert wrong == []  # every answer carried its own request's body
    assert answered == Counter(dict.fromkeys(bodies, 1))
    assert len(set(uuids)) == len(uuids)  # no FlowFile answered two requests
    assert set(written) == set(bodies)  # every answered body is durable in the output
    twice = {body for body, n in written.items() if n > 1}
    assert twice <= broken  # a second copy only where a connection broke at a kill
