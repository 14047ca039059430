"""PutS3Object and FetchS3Object MB/s against moto on loopback, beside a plain boto3 loop.

Issue 36's target: at least 0.5x a plain boto3 loop doing the same puts and gets in the same
run. The server (moto's, in this process's threads) is the same for both; runs interleave and
the best of ``--repeat`` counts.

PutS3Object with Resource Transfer Source ``File Resource Service`` (the same payloads as local
files, sent from the files) is measured beside it, and one big file (``--big-mb``) three ways:
a plain boto3 ``put_object`` from the open file, PutS3Object from the FlowFile's content, and
PutS3Object from the file.

    .venv/bin/python bench/s3.py [--objects 64] [--size-kb 1024] [--big-mb 64] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flowcore.testing import TestRunner
from processors.aws.fetch_s3_object import FetchS3Object
from processors.aws.put_s3_object import PutS3Object
from processors.file_resource import StandardFileResourceService
from tests.processors.aws.s3_server import client, configure, free_port


def _plain(s3: object, bucket: str, payloads: list[bytes]) -> tuple[float, float]:
    started = time.perf_counter()
    for i, body in enumerate(payloads):
        s3.put_object(Bucket=bucket, Key=f"plain/{i}", Body=body)  # type: ignore[attr-defined]
    put = time.perf_counter() - started
    started = time.perf_counter()
    for i in range(len(payloads)):
        s3.get_object(Bucket=bucket, Key=f"plain/{i}")["Body"].read()  # type: ignore[attr-defined]
    return put, time.perf_counter() - started


def _flowcore(endpoint: str, bucket: str, payloads: list[bytes]) -> tuple[float, float]:
    put = TestRunner(PutS3Object())
    configure(put, endpoint, Bucket=bucket)
    for i, body in enumerate(payloads):
        put.enqueue(body, {"filename": f"flow/{i}"})
    started = time.perf_counter()
    put.run(len(payloads))
    put_s = time.perf_counter() - started
    assert len(put.flowfiles_for("success")) == len(payloads)
    fetch = TestRunner(FetchS3Object())
    configure(fetch, endpoint, Bucket=bucket)
    for i in range(len(payloads)):
        fetch.enqueue(b"", {"filename": f"flow/{i}"})
    started = time.perf_counter()
    fetch.run(len(payloads))
    fetch_s = time.perf_counter() - started
    assert len(fetch.flowfiles_for("success")) == len(payloads)
    return put_s, fetch_s


def _flowcore_files(endpoint: str, bucket: str, paths: list[Path], prefix: str) -> float:
    """Seconds PutS3Object takes to send *paths* from a File Resource Service."""
    put = TestRunner(PutS3Object())
    configure(put, endpoint, Bucket=bucket)
    put.add_service(StandardFileResourceService("files", file_path="${file.path}"))
    put.set_property("Resource Transfer Source", "FILE_RESOURCE_SERVICE")
    put.set_property("File Resource Service", "files")
    for i, path in enumerate(paths):
        put.enqueue(b"", {"filename": f"{prefix}/{i}", "file.path": str(path)})
    started = time.perf_counter()
    put.run(len(paths))
    elapsed = time.perf_counter() - started
    assert len(put.flowfiles_for("success")) == len(paths)
    return elapsed


def _big(endpoint: str, bucket: str, path: Path) -> dict[str, float]:
    """Seconds to send one big file: plain boto3, PutS3Object from content, from the file."""
    s3 = client(endpoint)
    started = time.perf_counter()
    with open(path, "rb") as handle:
        s3.put_object(Bucket=bucket, Key="big/plain", Body=handle)
    plain = time.perf_counter() - started
    put = TestRunner(PutS3Object())
    configure(put, endpoint, Bucket=bucket)
    put.enqueue(path.read_bytes(), {"filename": "big/content"})
    started = time.perf_counter()
    put.run()
    content = time.perf_counter() - started
    assert len(put.flowfiles_for("success")) == 1
    return {"big_plain": plain, "big_content": content,
            "big_file": _flowcore_files(endpoint, bucket, [path], "big/file")}  # fmt: skip


def main() -> None:
    """Run the comparison and print a JSON line and a table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--objects", type=int, default=64)
    parser.add_argument("--size-kb", type=int, default=1024)
    parser.add_argument("--big-mb", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    s3 = client(endpoint)
    payloads = [os.urandom(args.size_kb * 1024) for _ in range(args.objects)]
    megabytes = args.objects * args.size_kb / 1024
    best = dict.fromkeys(
        ("plain_put", "plain_get", "flow_put", "flow_fetch", "flow_put_file", "big_plain",
         "big_content", "big_file"), 1e9,
    )  # fmt: skip
    scratch = tempfile.TemporaryDirectory(prefix="bench-s3-")
    paths = []
    for i, body in enumerate(payloads):
        paths.append(Path(scratch.name) / f"object-{i}")
        paths[-1].write_bytes(body)
    big = Path(scratch.name) / "big"
    big.write_bytes(os.urandom(args.big_mb << 20))
    try:
        for _ in range(args.repeat):
            bucket = f"bench-{uuid.uuid4().hex[:8]}"
            s3.create_bucket(Bucket=bucket)
            put, get = _plain(s3, bucket, payloads)
            best["plain_put"], best["plain_get"] = (
                min(best["plain_put"], put),
                min(best["plain_get"], get),
            )
            put, fetch = _flowcore(endpoint, bucket, payloads)
            best["flow_put"], best["flow_fetch"] = (
                min(best["flow_put"], put),
                min(best["flow_fetch"], fetch),
            )
            best["flow_put_file"] = min(
                best["flow_put_file"], _flowcore_files(endpoint, bucket, paths, "file")
            )
            for key, seconds in _big(endpoint, bucket, big).items():
                best[key] = min(best[key], seconds)
    finally:
        server.stop()
        scratch.cleanup()
    rates = {k: (args.big_mb if k.startswith("big") else megabytes) / v for k, v in best.items()}
    result: dict[str, object] = {"objects": args.objects, "size_kb": args.size_kb}
    result.update({f"{k}_mb_s": round(v, 1) for k, v in rates.items()})
    result["put_ratio"] = round(rates["flow_put"] / rates["plain_put"], 2)
    result["fetch_ratio"] = round(rates["flow_fetch"] / rates["plain_get"], 2)
    result["put_file_ratio"] = round(rates["flow_put_file"] / rates["plain_put"], 2)
    result["big_mb"] = args.big_mb
    result["big_content_ratio"] = round(rates["big_content"] / rates["big_plain"], 2)
    result["big_file_ratio"] = round(rates["big_file"] / rates["big_plain"], 2)
    print(json.dumps(result))
    print(f"{'':12}{'plain boto3':>14}{'flowcore':>12}{'ratio':>8}")
    for label, plain, flow, ratio in (
        ("put MB/s", "plain_put", "flow_put", "put_ratio"),
        ("fetch MB/s", "plain_get", "flow_fetch", "fetch_ratio"),
        ("put file", "plain_put", "flow_put_file", "put_file_ratio"),
        ("big content", "big_plain", "big_content", "big_content_ratio"),
        ("big file", "big_plain", "big_file", "big_file_ratio"),
    ):
        print(f"{label:12}{rates[plain]:14.1f}{rates[flow]:12.1f}{result[ratio]:8.2f}")


if __name__ == "__main__":
    main()
