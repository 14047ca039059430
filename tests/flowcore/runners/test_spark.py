"""Tests for the Spark runner: the same flow gives the same output as on the direct runner."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcore import Flow, FlowFileTransform, Relationship, TransformResult
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from processors import (
    FileSplitter,
    GetFile,
    MergeContent,
    PutFile,
    RouteOnAttribute,
    SplitText,
    UpdateAttribute,
)
from repositories._claim_checksums import read_footer

sys.path.insert(0, str(Path(__file__).parent))
from _capture import Capture, captured, captured_records

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs a Java runtime"),
]

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
# every stage run goes to Spark, however small (see driver_run_max_flowfiles)
SETTINGS = Settings(sync=False, parallelism=2, shuffle_partitions=3, driver_run_max_flowfiles=0)


@pytest.fixture(scope="module")
def spark():  # type: ignore[no-untyped-def]
    from flowcore.runners.spark import SparkRunner

    return SparkRunner()


def _example(name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _tree(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_web_logs_example_gives_the_same_files_on_both_runners(tmp_path: Path, spark) -> None:  # type: ignore[no-untyped-def]
    """The web-logs flow writes identical files on Spark and on the direct runner."""
    web_logs = _example("web_logs")
    outputs = {}
    for name, runner in (("direct", "direct"), ("spark", spark)):
        data = tmp_path / name
        expected = web_logs.generate_logs(data / "in", files=3, lines=300)
        result = run_flow(
            web_logs.build_flow(data), runner, repository=data / "repo", settings=SETTINGS
        )
        outputs[name] = _tree(data / "out")
        assert result.count("parse", "success") == expected
    assert outputs["spark"] == outputs["direct"]
    shuffle = tmp_path / "spark" / "repo" / "flowfile" / "shuffle"
    assert shuffle.is_dir()  # its merge stage's records went through spill files ...
    assert list(shuffle.iterdir()) == []  # ... removed when each job ended
    assert set(outputs["spark"]) == {
        "client_error.log",
        "redirect.log",
        "server_error.log",
        "success.log",
    }


def test_defragment_example_round_trips_on_spark(tmp_path: Path, spark) -> None:  # type: ignore[no-untyped-def]
    """Split and defragmented on Spark, every file comes back byte for byte."""
    defragment = _example("defragment_roundtrip")
    defragment.generate(tmp_path / "in", files=4)
    run_flow(
        defragment.build_flow(tmp_path), spark, repository=tmp_path / "repo", settings=SETTINGS
    )
    assert _tree(tmp_path / "out") == _tree(tmp_path / "in")


def test_custom_processor_example_runs_on_spark(tmp_path: Path, spark) -> None:  # type: ignore[no-untyped-def]
    """A processor defined in a script travels to the executors by value."""
    example = _example("custom_processor")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.log").write_text("10.1.2.3 GET /\n")
    run_flow(example.build_flow(tmp_path), spark, repository=tmp_path / "repo", settings=SETTINGS)
    assert (tmp_path / "out" / "a.log").read_text() == "10.1.2.x GET /\n"


def test_file_splitter_blocks_are_read_in_place_by_the_executors(tmp_path: Path, spark) -> None:  # type: ignore[no-untyped-def]
    """FileSplitter's zero-copy blocks, defragmented on Spark, give every file back; only the
    merged outputs were written to the content repository, never a copy of the input; each
    processor's task time comes back from the executors."""
    defragment = _example("defragment_roundtrip")
    defragment.generate(tmp_path / "in", files=3)
    flow = Flow("split-on-spark")
    split = flow.add(
        FileSplitter(input_directory=str(tmp_path / "in"), block_size="2 KB"), name="split"
    )
    merge = flow.add(MergeContent(merge_strategy="Defragment"), name="merge")
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(split, merge, "blocks")
    flow.connect(merge, put, "merged")
    flow.auto_terminate(split, ["files", "failure"])
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    result = run_flow(flow, spark, repository=tmp_path / "repo", settings=SETTINGS)
    assert _tree(tmp_path / "out") == _tree(tmp_path / "in")
    assert result.count("split", "blocks") > 3
    # each processor's task time came back with its tasks' results, from the executors too
    assert all(result.tasks_duration_nanos[name] > 0 for name in ("split", "merge", "put"))
    written = sum(
        _content_bytes(p) for p in (tmp_path / "repo" / "content").rglob("*") if p.is_file()
    )
    assert written == sum(len(data) for data in _tree(tmp_path / "in").values())


def _content_bytes(path: Path) -> int:
    """The content a claim file holds, without its checksum footer."""
    fd = os.open(path, os.O_RDONLY)
    try:
        footer = read_footer(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)
    return footer.data_length if footer is not None else path.stat().st_size


def test_plan_shows_spark_stages_after_a_run(tmp_path: Path, spark) -> None:  # type: ignore[no-untyped-def]
    """After a run, explain says which Spark stages and tasks each stage became."""
    defragment = _example("defragment_roundtrip")
    defragment.generate(tmp_path / "in", files=2)
    result = run_flow(
        defragment.build_flow(tmp_path), spark, repository=tmp_path / "repo", settings=SETTINGS
    )
    assert "1 Spark stage(s)" in result.plan  # the narrow chain: one mapPartitions pass
    assert "2 Spark stage(s)" in result.plan  # the binning stage: a shuffle


def test_session_conf_keeps_flowcores_java_options_before_the_users() -> None:
    """A local master's JVM compiles with C1 only and logs quietly; a user's Java options are
    appended (the JVM takes the last of repeated options), other conf simply wins."""
    from flowcore.runners.spark import session_conf

    local = session_conf("local[2]")["spark.driver.extraJavaOptions"].split()
    assert "-XX:TieredStopAtLevel=1" in local
    assert any(o.startswith("-Dlog4j2.configurationFile=") for o in local)
    cluster = session_conf("spark://127.0.0.1:7077")["spark.driver.extraJavaOptions"]
    assert "TieredStopAtLevel" not in cluster
    mine = {"spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=4", "spark.ui.enabled": "true"}
    merged = session_conf("local[2]", mine)
    assert merged["spark.driver.extraJavaOptions"].split()[-1] == "-XX:TieredStopAtLevel=4"
    assert merged["spark.driver.extraJavaOptions"].split()[:-1] == local
    assert merged["spark.ui.enabled"] == "true"


def test_python_workers_talk_to_the_jvm_over_a_unix_socket(spark) -> None:  # type: ignore[no-untyped-def]
    """Over TCP a reused worker's task input waited for a delayed ACK (about 40 ms a stage
    run); the sessions flowcore starts use a Unix domain socket, and a user's conf wins."""
    from flowcore.runners.spark import session_conf

    assert session_conf("local[2]")["spark.python.unix.domain.socket.enabled"] == "true"
    assert session_conf("spark://127.0.0.1:7077")["spark.python.unix.domain.socket.enabled"]
    mine = session_conf("local[2]", {"spark.python.unix.domain.socket.enabled": "false"})
    assert mine["spark.python.unix.domain.socket.enabled"] == "false"
    conf = spark.context.getConf()
    assert conf.get("spark.python.unix.domain.socket.enabled") == "true"


_EXIT_SCRIPT = """
import os, sys
from flowcore.runners.sessions import _stop_workers
from flowcore.runners.spark import SparkRunner
context = SparkRunner(master="local[2]").context
context.parallelize(range(4), 2).map(lambda x: x).collect()
jvm = context._gateway.proc.pid
def daemons():
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                parent = int(stat.read().rsplit(b")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                if parent == jvm and b"pyspark.daemon" in cmdline.read():
                    found.append(entry)
        except OSError:
            pass
    return found
before = daemons()
child = os.fork()
if child == 0:  # a forked child inherits the exit hook, not the workers: it leaves them
    _stop_workers(context, os.getppid())
    os._exit(0)
os.waitpid(child, 0)
kept = daemons()
_stop_workers(context, os.getpid())
import time; time.sleep(0.5)
print(len(before), len(kept), len(daemons()))
"""


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the workers under /proc")
def test_a_session_flowcore_started_loses_its_workers_before_the_jvm_at_exit() -> None:
    """The exit hook kills the Python workers' daemon (and with it the workers) while the JVM
    still runs, so none writes to a closed Unix socket and prints a traceback; in a forked
    child, which inherits the hook, it leaves the parent's workers alone."""
    done = subprocess.run(
        [sys.executable, "-c", _EXIT_SCRIPT],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    before, kept, after = (int(n) for n in done.stdout.split())
    assert before >= 1
    assert kept == before
    assert after == 0
    assert "Traceback" not in done.stderr


def test_warmed_workers_keep_the_task_path_out_of_the_collectors_walk(spark) -> None:  # type: ignore[no-untyped-def]
    """The warm-up's imports are frozen on the worker, so the full collection PySpark's daemon
    runs after every task of a reused worker does not walk them each time."""
    from flowcore.runners.spark import _import_task_path

    frozen = spark.map_jobs(
        lambda index: (_import_task_path(index), __import__("gc").get_freeze_count())[1], [0, 1]
    )
    assert all(count > 10_000 for count in frozen)


# --- random linear flows ------------------------------------------------------------------------

STEPS = st.one_of(
    st.tuples(st.just("tag"), st.sampled_from(["a", "b"]), st.sampled_from(["1", "${path}"])),
    st.tuples(st.just("route"), st.sampled_from(["0", "1", "2"])),
    st.tuples(st.just("split"), st.integers(1, 4)),
    st.tuples(st.just("merge"), st.integers(1, 5), st.booleans()),
)
FILES = st.lists(
    st.lists(st.text("xyz", max_size=6), min_size=1, max_size=12).map("\n".join),
    min_size=1,
    max_size=4,
)


def _random_flow(data: Path, steps: list[tuple], files: list[str]) -> Flow:
    flow = Flow("random")
    previous = flow.add(
        GetFile(input_directory=str(data / "in"), keep_source_file=True), name="get"
    )
    exit_name = "success"
    for number, step in enumerate(steps):
        name = f"step{number}"
        if step[0] == "tag":
            component = flow.add(UpdateAttribute(**{step[1]: step[2]}), name=name)
            out = "success"
        elif step[0] == "route":
            rule = f"${{filename:endsWith('{step[1]}.txt'):not()}}"
            component = flow.add(RouteOnAttribute(keep=rule), name=name)
            flow.auto_terminate(component, "unmatched")
            out = "keep"
        elif step[0] == "split":
            component = flow.add(SplitText(line_split_count=step[1]), name=name)
            flow.auto_terminate(component, ["original", "failure"])
            out = "splits"
        else:
            options = {"maximum_number_of_entries": step[1]}
            if step[2]:
                options["correlation_attribute_name"] = "filename"
            merge = flow.add(MergeContent(**options), name=name)
            flow.auto_terminate(merge, ["original", "failure"])
            flow.connect(previous, merge, exit_name)
            # MergeContent names a bundle by the clock; name it as a user would.
            namer = UpdateAttribute(filename=f"merged{number}-${{merge.count}}.txt")
            previous, exit_name = flow.add(namer, name=f"{name}-name"), "success"
            flow.connect(merge, previous, "merged")
            continue
        flow.connect(previous, component, exit_name)
        previous, exit_name = component, out
    sink = flow.add(Capture(directory=str(data / "captured")), name="capture")
    flow.connect(previous, sink, exit_name)
    flow.auto_terminate(sink, "success")
    (data / "in").mkdir(parents=True)
    for number, text in enumerate(files):
        (data / "in" / f"file{number}.txt").write_text(text)
    return flow


@settings(
    max_examples=5,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(STEPS, min_size=1, max_size=4), FILES)
def test_random_linear_flows_give_the_same_output(tmp_path: Path, spark, steps, files) -> None:  # type: ignore[no-untyped-def]
    """Random chains of UpdateAttribute, RouteOnAttribute, SplitText and MergeContent give the
    same FlowFiles (content and attributes) on Spark as on the direct runner."""
    root = tmp_path / uuid.uuid4().hex
    results = {}
    for name, runner in (("direct", "direct"), ("spark", spark)):
        data = root / name
        flow = _random_flow(data, steps, files)
        run_flow(flow, runner, repository=data / "repo", settings=SETTINGS)
        results[name] = captured(data / "captured")
    if results["spark"] != results["direct"]:
        direct = captured_records(root / "direct" / "captured")
        on_spark = captured_records(root / "spark" / "captured")
        assert on_spark == direct
    assert results["spark"] == results["direct"]


# --- a standalone cluster -------------------------------------------------------------------


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for(predicate, what: str, timeout: float = 90) -> None:  # type: ignore[no-untyped-def]
    import time

    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.25)


@pytest.fixture
def standalone_cluster(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A Spark standalone master and two one-core workers on 127.0.0.1, stopped afterwards."""
    import os
    import subprocess

    import pyspark

    home = Path(pyspark.__file__).parent
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    logs = tmp_path / "cluster-logs"
    logs.mkdir()
    properties = tmp_path / "spark.properties"
    properties.write_text("spark.master.rest.enabled false\nspark.ui.enabled false\n")
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
    }
    spark_class = str(home / "bin" / "spark-class")
    processes = []

    def start(name: str, *args: str) -> Path:
        log = logs / f"{name}.log"
        processes.append(
            subprocess.Popen(
                [spark_class, *args, "--properties-file", str(properties)],
                env=env,
                stdout=log.open("wb"),
                stderr=subprocess.STDOUT,
            )
        )
        return log

    try:
        master_log = start(
            "master",
            "org.apache.spark.deploy.master.Master",
            "--host", "127.0.0.1", "--port", str(port), "--webui-port", "0",
        )  # fmt: skip
        _wait_for(lambda: "ALIVE" in master_log.read_text(errors="replace"), "the master")
        for number in (1, 2):
            start(
                f"worker{number}",
                "org.apache.spark.deploy.worker.Worker", url,
                "--host", "127.0.0.1", "--cores", "1", "--memory", "1g", "--webui-port", "0",
                "--work-dir", str(tmp_path / f"work{number}"),
            )  # fmt: skip
        _wait_for(
            lambda: master_log.read_text(errors="replace").count("Registering worker") >= 2,
            "two workers",
        )
        yield url
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


@pytest.mark.slow
def test_cluster_run_equals_local_run(tmp_path: Path, standalone_cluster: str) -> None:
    """`flowcore run --master spark://...` on two workers, repositories in a shared directory,
    writes the same files as a local run."""
    import os
    import subprocess

    web_logs = _example("web_logs")
    local, cluster = tmp_path / "local", tmp_path / "cluster"
    for data in (local, cluster):
        web_logs.generate_logs(data / "in", files=4, lines=400)
    run_flow(web_logs.build_flow(local), "direct", repository=local / "repo", settings=SETTINGS)
    script = Path(sys.executable).parent / "flowcore"
    done = subprocess.run(
        [
            str(script), "run", str(EXAMPLES / "web_logs.py"),
            "--master", standalone_cluster, "--repository", str(cluster / "repo"),
            "--parallelism", "2", "--conf", "spark.executor.memory=512m",
        ],
        env={**os.environ, "WEB_LOGS_DATA": str(cluster)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "web-logs on spark" in done.stdout
    assert _tree(cluster / "out") == _tree(local / "out")


DECOY_FLOW = """
from flowcore import Flow, FlowFileTransform, Relationship, TransformResult
from processors import GetFile, PutFile, SplitText, UpdateAttribute

flow = Flow("decoy")
get = flow.add(GetFile(input_directory="in", keep_source_file=True), name="get")
split = flow.add(SplitText(line_split_count=1), name="split")
name = flow.add(UpdateAttribute(filename="${uuid}"), name="name")
put = flow.add(PutFile(directory="out"), name="put")
flow.connect(get, split)
flow.connect(split, name, "splits")
flow.connect(name, put)
flow.auto_terminate(split, ["original", "failure"])
flow.auto_terminate(put, ["success", "failure"])
"""


def test_workers_ignore_packages_named_like_ours_in_the_current_directory(tmp_path: Path) -> None:
    """`flowcore run --runner spark` from a directory holding folders named `flowcore` and
    `processors`: the Python workers import the installed packages, as the driver does."""
    for package in ("flowcore", "processors"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text(f"raise ImportError('decoy {package}')\n")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "lines.txt").write_text("a\nb\nc\n")
    (tmp_path / "flow.py").write_text(DECOY_FLOW)
    script = Path(sys.executable).parent / "flowcore"
    done = subprocess.run(
        [str(script), "run", "flow.py", "--runner", "spark", "--master", "local[2]"],
        cwd=tmp_path,
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert b"decoy" not in done.stderr
    assert sorted(p.read_text() for p in (tmp_path / "out").iterdir()) == ["a", "b", "c"]


def test_workers_get_the_drivers_checkout_and_the_users_paths_after_it() -> None:
    """Without the current directory on their path, workers are told where a checkout that is
    not in site-packages lives (an editable install here); a user's PYTHONPATH comes after."""
    from flowcore.runners.sessions import _package_roots, session_conf

    conf = session_conf("local[2]")
    roots = _package_roots()
    root = str(Path(__file__).resolve().parents[3])
    if root in roots:  # this checkout is not site-packages: its root travels
        assert conf["spark.executorEnv.PYTHONPATH"].split(os.pathsep) == roots
        mine = session_conf("local[2]", {"spark.executorEnv.PYTHONPATH": "/opt/mine"})
        assert mine["spark.executorEnv.PYTHONPATH"].split(os.pathsep) == [*roots, "/opt/mine"]


def test_a_worker_with_other_copies_of_the_packages_stops_the_run_naming_both() -> None:
    """The warm-up check compares the files each package was imported from."""
    from flowcore.errors import ConfigurationError
    from flowcore.runners.sessions import package_files
    from flowcore.runners.spark import _import_task_path

    files = package_files()
    assert _import_task_path(3, files) == 3
    elsewhere = {**files, "processors": "/opt/old/processors/__init__.py"}
    with pytest.raises(ConfigurationError, match=r"/opt/old/processors/__init__\.py"):
        _import_task_path(0, elsewhere)


def test_small_stage_runs_run_in_the_driver_with_the_same_outcome(tmp_path: Path, spark) -> None:  # type: ignore[no-untyped-def]
    """A stage run of a few queued FlowFiles runs in the driver's process (a Spark job costs
    more to schedule), a source's run still on Spark, and the files written are the same."""
    defragment = _example("defragment_roundtrip")
    defragment.generate(tmp_path / "in", files=2)
    small = attrs.evolve(SETTINGS, driver_run_max_flowfiles=20_000)
    result = run_flow(
        defragment.build_flow(tmp_path), spark, repository=tmp_path / "repo", settings=small
    )
    assert "1 Spark stage(s)" in result.plan  # the source's stage: it has work to read
    # the binning stage's few FlowFiles, and why
    assert re.search(
        r"ran as: in the driver \(\d+ FlowFiles <= driver_run_max_flowfiles\)", result.plan
    )
    written = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()}
    assert written == {p.name: p.read_bytes() for p in (tmp_path / "in").iterdir()}


USERS_SESSION = """
import json, os, sys
os.environ["PYSPARK_PYTHON"] = sys.executable  # the user's workers run this Python
from pyspark.sql import SparkSession
import flowcore
from flowcore import Flow, FlowFileTransform, Relationship, TransformResult
from flowcore.datasets.store import Dataset
from flowcore.settings import Settings
from processors import GenerateFlowFile, PutDataset

spark = SparkSession.builder.master("local[1]").appName("mine").getOrCreate()
(before := Dataset("before")).add_file(__file__)
try:
    before.to_spark(spark)
    unregistered = "read"
except Exception as error:
    unregistered = f"{type(error).__name__}: {error}"
flowcore.register_spark_sources(spark)  # a session of one's own reads datasets once registered
read_before = spark.read.format("flowcore-dataset").load("before").count()
flow = Flow("users-session")
gen = flow.add(GenerateFlowFile(custom_text="x", batch_size=5), name="gen")
put = flow.add(PutDataset(directory="ds", demarcator="\\n"), name="put")
flow.connect(gen, put)
flow.auto_terminate(put, ["success", "failure"])
given = flow.run(spark=spark, repository="given", settings=Settings(parallelism=1))
print("--- then without spark=", file=sys.stderr, flush=True)
active = flow.run(repository="active")  # the active session, with a note
again = flow.run(repository="again")  # the note is not repeated
print(json.dumps({
    "given": given.master, "plan": given.plan, "summary": given.summary(),
    "active": active.master, "again": again.master, "again_summary": again.summary(),
    "alive": spark.range(3).count(), "app": spark.sparkContext.appName,
    "read_before": read_before, "unregistered": unregistered,
    "rows": spark.read.format("flowcore-dataset").load("ds").count(),
}))
"""


def test_a_users_session_is_used_reported_and_left_running(tmp_path: Path) -> None:
    """`flow.run(spark=session)` on the user's local[1] session: the plan and the result say
    local[1], the session still runs afterwards and reads the dataset through the registered
    format (and is told to register it before); a run without `spark=` reuses the active
    session, with one note on stderr."""
    (tmp_path / "script.py").write_text(USERS_SESSION)
    done = subprocess.run(
        [sys.executable, "script.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["given"] == report["active"] == report["again"] == "local[1]"
    assert "task(s) on local[1]" in report["plan"]
    assert "on spark (local[1]): session started in " in report["summary"]  # workers warmed
    assert "on spark (local[1]): session reused; flow ran in " in report["again_summary"]
    assert (report["alive"], report["app"]) == (3, "mine")
    assert report["read_before"] == 1
    assert report["unregistered"] == (  # before flowcore.register_spark_sources(spark)
        "DatasetError: this SparkSession cannot read format 'flowcore-dataset': register it "
        "with flowcore.register_spark_sources(spark)"
    )
    assert report["rows"] == 15  # three runs of 5 records
    after = done.stderr.split("--- then without spark=", 1)[1]
    assert after.count("flowcore uses the Spark session already running on local[1]") == 1
    assert "local[*]" not in done.stderr


def test_a_session_given_with_conf_or_another_master_is_refused(spark) -> None:  # type: ignore[no-untyped-def]
    """A session is used as it is: conf (for a session flowcore starts) and another master
    are refused with what to do instead."""
    from flowcore.errors import ConfigurationError
    from flowcore.runners.spark import SparkRunner

    with pytest.raises(ConfigurationError, match="set it on the SparkSession given"):
        SparkRunner(conf={"spark.executor.memory": "2g"}, session=spark.session)
    with pytest.raises(ConfigurationError, match="already running in this process"):
        SparkRunner(master="local[3]", session=spark.session)
    assert SparkRunner(master=spark.master, session=spark.session).master == spark.master


class _Interrupted(FlowFileTransform):
    """Sends its own worker SIGINT, as a terminal's Ctrl-C reaches a local master's workers."""

    relationships = (Relationship("success"),)

    def transform(self, context, flowfile):  # type: ignore[no-untyped-def]
        import signal

        os.kill(os.getpid(), signal.SIGINT)
        return TransformResult(attributes={"interrupted": "ignored"})


def test_a_ctrl_c_reaching_a_busy_worker_does_not_fail_its_task(tmp_path: Path, spark) -> None:  # type: ignore[no-untyped-def]
    """Python workers ignore SIGINT: the driver decides when a run stops (after its
    micro-batch), so a task interrupted mid-work still finishes and nothing is lost."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("x\ny\n")
    flow = Flow("interrupted")
    get = flow.add(GetFile(input_directory=str(tmp_path / "in")), name="get")
    hit = flow.add(_Interrupted(), name="hit")
    flow.connect(get, hit)
    flow.auto_terminate(hit, "success")
    result = run_flow(flow, spark, repository=tmp_path / "repo", settings=SETTINGS)
    assert result.count("hit", "success") == 1
    assert not result.bulletins


_JVM_GONE_BEFORE_A_STAGE = """
import os, signal
from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.errors import FlowcoreError
from flowcore.runners.spark import SparkRunner
from flowcore.settings import Settings
from processors import GenerateFlowFile, UpdateAttribute

flow = Flow("jvm-gone")
gen = flow.add(GenerateFlowFile(custom_text="x", batch_size=3), name="gen")
tag = flow.add(UpdateAttribute(tagged="yes"), name="tag")
flow.connect(gen, tag)
flow.auto_terminate(tag, "success")
runner = SparkRunner(master="local[1]")
jvm = runner.context._gateway.proc
os.kill(jvm.pid, signal.SIGKILL)
jvm.wait()
try:
    run_flow(flow, runner, repository="repo", settings=Settings(driver_run_max_flowfiles=0))
except FlowcoreError as error:
    print(f"{type(error).__name__}: {error}")
"""


def test_a_jvm_gone_between_stage_runs_is_the_same_one_line(tmp_path: Path) -> None:
    """A JVM killed while the driver is between two stage runs fails the next one's first call
    to it (setting the job group), told as a JVM lost during a job is, never a Py4J trace."""
    (tmp_path / "script.py").write_text(_JVM_GONE_BEFORE_A_STAGE)
    done = subprocess.run(
        [sys.executable, "script.py"], cwd=tmp_path, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == (
        "RunnerError: the Spark JVM died (killed by signal 9, SIGKILL) while running stage "
        "stage-1; nothing committed is lost: run again to redo the interrupted micro-batch (if "
        "it died of memory, give Spark more, e.g. --conf spark.driver.memory=4g)"
    )
    assert "Traceback" not in done.stderr
