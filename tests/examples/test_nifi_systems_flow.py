"""Tests that examples/nifi_systems_flow.json runs against real servers: PostgreSQL -> HTTP ->
Kafka and S3."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.servers.postgres import PostgresServer, postgres_server

pytest.importorskip("confluent_kafka")
pytest.importorskip("moto.server")
pytest.importorskip("boto3")

from tests.processors.aws.s3_server import ACCESS_KEY, SECRET_KEY, client, free_port
from tests.processors.kafka.mock_cluster import MockCluster

ROOT = Path(__file__).resolve().parents[2]
FLOW = ROOT / "examples" / "nifi_systems_flow.json"
TIERS = ("bronze", "silver", "gold")


class _Enrich(BaseHTTPRequestHandler):
    """The enrichment service: a JSON array of customers in, each with its tier out; while
    ``down`` is set, 503 Service Unavailable."""

    down = threading.Event()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.down.is_set():
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        customers = json.loads(body)
        for customer in customers:
            customer["tier"] = TIERS[customer["id"] % 3]
        answer = json.dumps(customers).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        """Quiet: the test reads what it needs."""


@pytest.fixture(scope="module")
def systems() -> Iterator[dict[str, object]]:
    """PostgreSQL with a customers table, the enrichment service, Kafka, and S3 with a bucket."""
    enrich = ThreadingHTTPServer(("127.0.0.1", 0), _Enrich)
    threading.Thread(target=enrich.serve_forever, daemon=True).start()
    from moto.server import ThreadedMotoServer

    s3_port = free_port()
    s3_server = ThreadedMotoServer(ip_address="127.0.0.1", port=s3_port, verbose=False)
    s3_server.start()
    endpoint = f"http://127.0.0.1:{s3_port}"
    client(endpoint).create_bucket(Bucket="customer-archive")
    kafka = MockCluster()
    try:
        with postgres_server() as database:
            database.execute(
                "CREATE TABLE customers (id integer PRIMARY KEY, name text NOT NULL, "
                "country text, signed_up timestamp NOT NULL)"
            )
            yield {"db": database, "enrich": enrich, "s3": endpoint, "kafka": kafka}
    finally:
        kafka.close()
        s3_server.stop()
        enrich.shutdown()


def _add_customers(database: PostgresServer, ids: range) -> None:
    """Rows of distinct customers (a tenth without a country)."""
    for number in ids:
        database.execute(
            "INSERT INTO customers VALUES (%s, %s, %s, %s)",
            (
                number,
                f"customer {number}",
                None if number % 10 == 0 else ("FR", "DE", "US")[number % 3],
                f"2026-0{1 + number % 9}-1{number % 10} 08:30:00",
            ),
        )


def _run(systems: dict[str, object], repository: Path) -> subprocess.CompletedProcess[str]:
    """``flowcore run examples/nifi_systems_flow.json`` with the parameters naming the servers
    (the direct runner: the connectors are what this tests; Spark's runs are tested elsewhere)."""
    database = systems["db"]
    assert isinstance(database, PostgresServer)
    enrich = systems["enrich"]
    assert isinstance(enrich, ThreadingHTTPServer)
    kafka = systems["kafka"]
    assert isinstance(kafka, MockCluster)
    parameters = {
        "db.url": database.jdbc_url,
        "db.user": database.user,
        "enrich.url": f"http://127.0.0.1:{enrich.server_address[1]}/enrich",
        "kafka.bootstrap": kafka.bootstrap,
        "kafka.topic": "customers",
        "s3.endpoint": str(systems["s3"]),
    }
    options = [
        item for name, value in parameters.items() for item in ("--parameter", f"{name}={value}")
    ]
    # Sensitive parameters never go on a command line: from the environment, as a user's would.
    options += ["--parameter-env", "db.password=SHOP_DB_PASSWORD"]
    options += ["--parameter-env", "aws.access.key=ARCHIVE_ACCESS_KEY"]
    options += ["--parameter-env", "aws.secret.key=ARCHIVE_SECRET_KEY"]
    options += ["--runner", "direct", "--repository", str(repository)]
    return subprocess.run(
        [sys.executable, "-m", "flowcore", "run", str(FLOW), *options],
        capture_output=True,
        text=True,
        check=False,
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "SHOP_DB_PASSWORD": "not-needed-with-trust",
            "ARCHIVE_ACCESS_KEY": ACCESS_KEY,
            "ARCHIVE_SECRET_KEY": SECRET_KEY,
        },
        timeout=300,
    )


def _published(systems: dict[str, object]) -> list[tuple[bytes | None, dict[str, object]]]:
    """Every message on the topic: its key and its customer."""
    kafka = systems["kafka"]
    assert isinstance(kafka, MockCluster)
    return [(m.key(), json.loads(m.value())) for m in kafka.read_all("customers")]


def _archived(systems: dict[str, object]) -> dict[str, list[dict[str, object]]]:
    """The archive's objects: key -> the customers in it."""
    s3 = client(str(systems["s3"]))
    listed = s3.list_objects_v2(Bucket="customer-archive").get("Contents", [])
    return {
        o["Key"]: json.loads(s3.get_object(Bucket="customer-archive", Key=o["Key"])["Body"].read())
        for o in listed
    }


def test_new_rows_are_enriched_published_once_and_archived(
    systems: dict[str, object], tmp_path: Path
) -> None:
    """Two runs over a growing table: each customer is published to Kafka once, keyed by its id
    and enriched with its tier, and archived in exactly one S3 object; the second run reads only
    the rows added since the first (the maximum id is source state); rows read while the service
    answers 503 wait at InvokeHTTP's Retry for the next run; no secret is written."""
    database = systems["db"]
    assert isinstance(database, PostgresServer)
    repository = tmp_path / "repository"
    _add_customers(database, range(1, 121))
    first = _run(systems, repository)
    assert first.returncode == 0, first.stderr
    assert len(_published(systems)) == 120
    _add_customers(database, range(121, 151))
    second = _run(systems, repository)
    assert second.returncode == 0, second.stderr

    # The service answers 503: InvokeHTTP's Retry loops back to it, so the rows read are kept,
    # penalized past the end of the run (status 3), and sent again by a run after the penalty.
    _add_customers(database, range(151, 161))
    _Enrich.down.set()
    try:
        refused = _run(systems, repository)
    finally:
        _Enrich.down.clear()
    assert refused.returncode == 3, refused.stderr
    assert "Enrich over HTTP" in refused.stderr
    assert len(_published(systems)) == 150
    time.sleep(5)  # InvokeHTTP's Penalty Duration in the example
    third = _run(systems, repository)
    assert third.returncode == 0, third.stderr

    published = _published(systems)
    assert Counter(c["id"] for _, c in published) == Counter(range(1, 161))
    for key, customer in published:
        assert key == str(customer["id"]).encode()
        assert customer["tier"] == TIERS[int(str(customer["id"])) % 3]
        assert customer["name"] == f"customer {customer['id']}"
    archived = _archived(systems)
    assert Counter(c["id"] for batch in archived.values() for c in batch) == Counter(range(1, 161))
    assert all(key.startswith("customers/") and key.endswith(".json") for key in archived)
    assert len(archived) == 5  # 120 rows in three objects of 50, 50, 20; then 30; then 10

    # The database password and the AWS keys, given as sensitive parameters from the
    # environment, are in nothing the runs printed and in no file of the repository.
    for secret in (ACCESS_KEY, SECRET_KEY, "not-needed-with-trust"):
        for done in (first, second, refused, third):
            assert secret not in done.stdout + done.stderr
        for path in repository.rglob("*"):
            if path.is_file():
                assert secret.encode() not in path.read_bytes(), path
