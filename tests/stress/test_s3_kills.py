"""kill -9 of real `flowcore run`s of ListS3 -> FetchS3Object -> PutFile and GetFile -> PutS3Object.

The S3 server (moto) lives in the test process, so it outlives the killed runs. ListS3's state
commits with its FlowFiles, so each object enters the flow once however the run dies, and
PutFile writes it once. PutS3Object's key is the file's name: a put replayed after a crash
overwrites the same object with the same bytes, so the bucket ends holding each file once.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from repositories.repository_set import RepositorySet
from tests.processors.aws.s3_server import ACCESS_KEY, REGION, SECRET_KEY, client, free_port

pytestmark = pytest.mark.stress

ROOT = Path(__file__).resolve().parents[2]
OBJECTS = 20
KILLS = 3

_SERVICE = """
from flowcore import Flow
from processors.aws.credentials import AWSCredentialsProviderControllerService

flow = Flow("s3-kills")
flow.add_service(AWSCredentialsProviderControllerService(
    "aws", access_key_id="{access}", secret_access_key="{secret}"))
S3 = {{"AWS Credentials Provider service": "aws", "Endpoint Override URL": "{endpoint}",
      "Region": "{region}", "Communications Timeout": "5 secs"}}
"""
LIST_FETCH = """
from processors import PutFile
from processors.aws.fetch_s3_object import FetchS3Object
from processors.aws.list_s3 import ListS3

listing = flow.add(ListS3(**S3, Bucket="{bucket}"), name="list")
fetch = flow.add(FetchS3Object(**S3), name="fetch")
put = flow.add(PutFile(directory="out"), name="put")
flow.connect(listing, fetch)
flow.connect(fetch, put, "success", durable=True)
flow.auto_terminate(fetch, ["failure"])
flow.auto_terminate(put, ["success", "failure"])
"""
GET_PUT = """
from processors import GetFile
from processors.aws.put_s3_object import PutS3Object

get = flow.add(GetFile(input_directory="in"), name="get")
put = flow.add(PutS3Object(**S3, Bucket="{bucket}"), name="put")
flow.connect(get, put, durable=True)
flow.auto_terminate(put, ["success", "failure"])
"""


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    """A moto S3 server on loopback for this module, in the test process."""
    moto_server = pytest.importorskip("moto.server")
    port = free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


def _flow(workdir: Path, endpoint: str, body: str, bucket: str) -> None:
    workdir.mkdir(parents=True)
    values = {"access": ACCESS_KEY, "secret": SECRET_KEY, "endpoint": endpoint}
    text = _SERVICE.format(region=REGION, **values) + body.format(bucket=bucket)
    (workdir / "flow.py").write_text(text)


def _run(workdir: Path) -> subprocess.Popen:
    script = Path(sys.executable).parent / "flowcore"
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.Popen(
        [str(script), "run", "flow.py", "--runner", "direct", "--json",
         "--setting", "batch_max_flowfiles=8"],
        cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip


def _finish(workdir: Path) -> None:
    process = _run(workdir)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err.decode()


def _kill_runs(workdir: Path, duration: float, seed: int, before: Callable[[int], None]) -> int:
    """Start runs and kill -9 them at random moments; how many were killed."""
    rng = random.Random(seed)
    killed = 0
    for attempt in range(3 * KILLS):
        before(attempt)
        process = _run(workdir)
        time.sleep(rng.uniform(0.2, max(0.3, duration * 0.9)))
        if process.poll() is not None:
            continue
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
        killed += 1
        if killed == KILLS:
            break
    return killed


def _events(workdir: Path) -> Counter:
    """Committed event types, checking no FlowFile was fetched or sent twice."""
    repos = RepositorySet.open(workdir / ".flowcore")
    try:
        events = repos.provenance.search(limit=1_000_000)
        for kind in ("FETCH", "SEND"):
            seen = Counter(e.flowfile_uuid for e in events if e.event_type.value == kind)
            assert [u for u, n in seen.items() if n > 1] == [], kind
        return Counter(e.event_type.value for e in events)
    finally:
        repos.close()


def _bucket(s3: Any) -> str:
    name = f"k-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=name)
    return name


def _objects(s3: Any, bucket: str) -> dict[str, bytes]:
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", ())]
    return {k: s3.get_object(Bucket=bucket, Key=k)["Body"].read() for k in keys}


def _payload(number: int, rng: random.Random) -> bytes:
    return f"{number} {rng.random()}\n".encode() * rng.randint(1, 30)


@pytest.mark.slow
def test_kill_9_lists_and_fetches_each_object_once(endpoint: str, tmp_path: Path) -> None:
    """ListS3 -> FetchS3Object -> PutFile killed at random moments while objects arrive:
    a rerun leaves each object written once, fetched once in the committed history."""
    s3 = client(endpoint)
    rng = random.Random(11)
    data = {f"o{n:03d}": _payload(n, rng) for n in range(OBJECTS)}
    reference_bucket, crashed_bucket = _bucket(s3), _bucket(s3)
    for key, body in data.items():
        s3.put_object(Bucket=reference_bucket, Key=key, Body=body)
    _flow(tmp_path / "reference", endpoint, LIST_FETCH, reference_bucket)
    started = time.monotonic()
    _finish(tmp_path / "reference")
    duration = time.monotonic() - started
    _flow(tmp_path / "crashed", endpoint, LIST_FETCH, crashed_bucket)
    keys = list(data)
    per_run = -(-OBJECTS // KILLS)

    def arrive(attempt: int) -> None:  # objects keep arriving between (and during) runs
        for key in keys[attempt * per_run : (attempt + 1) * per_run]:
            s3.put_object(Bucket=crashed_bucket, Key=key, Body=data[key])

    killed = _kill_runs(tmp_path / "crashed", duration, 5, arrive)
    arrive_rest = [k for k in keys if k not in _objects(s3, crashed_bucket)]
    for key in arrive_rest:
        s3.put_object(Bucket=crashed_bucket, Key=key, Body=data[key])
    print(f"killed {killed} runs; an uninterrupted run took {duration:.1f} s")
    assert killed >= 2, f"only {killed} runs were still going when killed"
    _finish(tmp_path / "crashed")
    for workdir in (tmp_path / "reference", tmp_path / "crashed"):
        assert {p.name: p.read_bytes() for p in (workdir / "out").iterdir()} == data
    assert (
        _events(tmp_path / "crashed")["FETCH"]
        == _events(tmp_path / "reference")["FETCH"]
        == OBJECTS
    )


@pytest.mark.slow
def test_kill_9_puts_each_file_once(endpoint: str, tmp_path: Path) -> None:
    """GetFile -> PutS3Object killed at random moments: the bucket ends holding each file
    once with its bytes, and the committed SENDs count each file once."""
    s3 = client(endpoint)
    rng = random.Random(13)
    data = {f"f{n:03d}.txt": _payload(n, rng) for n in range(OBJECTS)}
    buckets = {}
    for name in ("reference", "crashed"):
        buckets[name] = _bucket(s3)
        _flow(tmp_path / name, endpoint, GET_PUT, buckets[name])
        (tmp_path / name / "in").mkdir()
        for key, body in data.items():
            (tmp_path / name / "in" / key).write_bytes(body)
    started = time.monotonic()
    _finish(tmp_path / "reference")
    duration = time.monotonic() - started
    killed = _kill_runs(tmp_path / "crashed", duration, 7, lambda _: None)
    print(f"killed {killed} runs; an uninterrupted run took {duration:.1f} s")
    assert killed >= 2, f"only {killed} runs were still going when killed"
    _finish(tmp_path / "crashed")
    for name in ("reference", "crashed"):
        assert _objects(s3, buckets[name]) == data
        assert list((tmp_path / name / "in").iterdir()) == []
    assert (
        _events(tmp_path / "crashed")["SEND"] == _events(tmp_path / "reference")["SEND"] == OBJECTS
    )
