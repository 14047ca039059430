"""Tests for the Spark runner: the same flow gives the same output as on the direct runner."""

from __future__ import annotations

import importlib.util
import shutil
import sys
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcore import Flow
from flowcore.controller import run_flow
from flowcore.settings import Settings
from processors import GetFile, MergeContent, RouteOnAttribute, SplitText, UpdateAttribute

sys.path.insert(0, str(Path(__file__).parent))
from _capture import Capture, captured, captured_records  # noqa: E402

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs a Java runtime"),
]

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
SETTINGS = Settings(sync=False, parallelism=2, shuffle_partitions=3)


@pytest.fixture(scope="module")
def spark():  # type: ignore[no-untyped-def]
    from flowcore.runners.spark import SparkRunner

    return SparkRunner()


def _example(name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
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
    run_flow(defragment.build_flow(tmp_path), spark, repository=tmp_path / "repo", settings=SETTINGS)
    assert _tree(tmp_path / "out") == _tree(tmp_path / "in")


def test_custom_processor_example_runs_on_spark(tmp_path: Path, spark) -> None:  # type: ignore[no-untyped-def]
    """A processor defined in a script travels to the executors by value."""
    example = _example("custom_processor")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.log").write_text("10.1.2.3 GET /\n")
    run_flow(example.build_flow(tmp_path), spark, repository=tmp_path / "repo", settings=SETTINGS)
    assert (tmp_path / "out" / "a.log").read_text() == "10.1.2.x GET /\n"


def test_plan_shows_spark_stages_after_a_run(tmp_path: Path, spark) -> None:  # type: ignore[no-untyped-def]
    """After a run, explain says which Spark stages and tasks each stage became."""
    defragment = _example("defragment_roundtrip")
    defragment.generate(tmp_path / "in", files=2)
    result = run_flow(
        defragment.build_flow(tmp_path), spark, repository=tmp_path / "repo", settings=SETTINGS
    )
    assert "1 Spark stage(s)" in result.plan  # the narrow chain: one mapPartitions pass
    assert "2 Spark stage(s)" in result.plan  # the binning stage: a shuffle


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
    previous = flow.add(GetFile(input_directory=str(data / "in"), keep_source_file=True), name="get")
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
            component = flow.add(MergeContent(**options), name=name)
            flow.auto_terminate(component, ["original", "failure"])
            out = "merged"
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
