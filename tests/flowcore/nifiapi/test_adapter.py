"""Tests for nifiapi._adapter: NiFi Python processors, unchanged, in TestRunner and in flows."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from flowcore.builder import Flow
from flowcore.errors import InvalidProcessorError
from flowcore.testing import TestRunner
from nifiapi._adapter import flowcore_descriptor, processor_class
from nifiapi._loader import PythonExtensions, load_python_extensions
from nifiapi.componentstate import Scope
from nifiapi.flowfiletransform import FlowFileTransform, FlowFileTransformResult
from nifiapi.properties import (
    ExpressionLanguageScope,
    PropertyDependency,
    PropertyDescriptor,
    StandardValidators,
    ValidationResult,
)
from processors import GenerateFlowFile

SAMPLES = Path(__file__).parent / "samples"
ROOT = Path(__file__).resolve().parents[3]


def test_a_transform_upper_cases_and_sets_an_el_attribute(extensions: PythonExtensions) -> None:
    """UpperCase, as written for NiFi: content upper-cased, the attribute named by one property
    set to the other evaluated against the FlowFile, every value a string; no clone is made
    for original, auto-terminated by default."""
    runner = TestRunner(extensions.processors["UpperCase"](**{"Attribute Name": "shout"}))
    runner.enqueue(b"hello nifi", {"filename": "a.txt"})
    runner.run()
    [out] = runner.flowfiles_for("success")
    assert out.content == b"HELLO NIFI"
    assert out.attributes["shout"] == "a.txt"
    assert out.attributes["size.before"] == "10"
    assert runner.auto_terminated_count("original") == 0  # NiFi clones only when connected


def test_a_transform_has_nifis_relationships_and_properties(extensions: PythonExtensions) -> None:
    """success (the default), failure and original (auto-terminated by default), as NiFi's
    proxy adds them; the descriptors keep NiFi's names, defaults and EL scope."""
    cls = extensions.processors["UpperCase"]
    assert cls.__name__ == "UpperCase"
    assert [(r.name, r.auto_terminated) for r in cls.relationships] == [
        ("success", False),
        ("failure", False),
        ("original", True),
    ]
    value = cls.property_descriptors[1]
    assert (value.name, value.default, value.el_scope.name) == (
        "Attribute Value",
        "${filename}",
        "FLOWFILE_ATTRIBUTES",
    )
    assert cls.tags == ("text", "case", "python")
    assert "Upper-cases the text" in (cls.__doc__ or "")


def test_an_exception_sends_the_flowfile_unchanged_to_failure(
    extensions: PythonExtensions,
) -> None:
    """Content that is not UTF-8 makes UpperCase's transform raise: the FlowFile goes to
    failure as it came."""
    runner = TestRunner(extensions.processors["UpperCase"]())
    runner.enqueue(b"\xff\xfe", {"filename": "bad"})
    runner.run()
    [failed] = runner.flowfiles_for("failure")
    assert failed.content == b"\xff\xfe"
    assert "upper.by" not in failed.attributes


def test_a_transform_routes_to_its_own_relationships(extensions: PythonExtensions) -> None:
    """RouteBySize declares small and large (so no success), its threshold a data size."""
    cls = extensions.processors["RouteBySize"]
    assert {r.name for r in cls.relationships} == {"small", "large", "failure", "original"}
    runner = TestRunner(cls(**{"Size Threshold": "4 B"}))
    runner.enqueue(b"abc")
    runner.enqueue(b"abcdefgh")
    runner.run(2)
    assert [f.content for f in runner.flowfiles_for("large")] == [b"abcdefgh"]
    [small] = runner.flowfiles_for("small")
    assert small.attributes["size.class"] == "small"


def test_a_processor_in_a_package_imports_its_sibling(extensions: PythonExtensions) -> None:
    """CountWords lives in a package beside word_util and imports it by name, as in NiFi."""
    runner = TestRunner(extensions.processors["CountWords"]())
    runner.enqueue(b"one two three")
    runner.run()
    assert runner.flowfiles_for("success")[0].attributes["word.count"] == "3"


def test_the_batch_form_agrees_with_one_by_one(extensions: PythonExtensions) -> None:
    """With original auto-terminated, FlowFiles go through transform as batches, and the
    result is the one-by-one path's, failures included."""
    runner = TestRunner(extensions.processors["UpperCase"](), batches=True)
    for index in range(5):
        runner.enqueue(f"line {index}".encode(), {"filename": f"{index}.txt"})
    runner.enqueue(b"\xff")
    runner.assert_batch_form_agrees()


def test_a_source_creates_flowfiles_on_its_relationships(extensions: PythonExtensions) -> None:
    """CreateGreeting makes one FlowFile per trigger: success always exists beside the
    relationships it adds, and a multi-line greeting goes to multiline."""
    cls = extensions.processors["CreateGreeting"]
    assert [r.name for r in cls.relationships] == ["success", "multiline"]
    runner = TestRunner(cls())
    runner.run(2)
    assert [f.content for f in runner.flowfiles_for("success")] == [b"Hello World!"] * 2
    assert runner.flowfiles_for("success")[0].attributes["greeting"] == "yes"
    lines = TestRunner(cls(Greeting="one\ntwo"))
    lines.run()
    assert [f.content for f in lines.flowfiles_for("multiline")] == [b"one\ntwo"]


def test_a_sources_state_is_committed_with_its_flowfiles(extensions: PythonExtensions) -> None:
    """CountingSource (NiFi's guide's StateManager example) counts across triggers, its state
    committed with each FlowFile, and starts from the state it finds."""
    runner = TestRunner(extensions.processors["CountingSource"]())
    runner.run(3)
    numbers = [f.attributes["FlowFileNumber"] for f in runner.flowfiles_for("success")]
    assert numbers == ["1", "2", "3"]
    assert runner.state == {"FlowFileNumber": "3"}
    again = TestRunner(extensions.processors["CountingSource"]())
    again.set_state({"FlowFileNumber": "41"})
    again.run()
    assert again.flowfiles_for("success")[0].attributes["FlowFileNumber"] == "42"


def test_a_processor_with_missing_dependencies_says_how_to_install(
    extensions: PythonExtensions,
) -> None:
    """NeedsMissingPackage is not imported; making one names the package and pip command."""
    with pytest.raises(Exception, match=r"pip install 'flowcore-sample-missing-package>=1.0'"):
        extensions.processors["NeedsMissingPackage"]()


def test_validation_follows_nifis_descriptors(extensions: PythonExtensions) -> None:
    """A required property emptied and a data size that is none are invalid, by NiFi's names."""
    problems = extensions.processors["RouteBySize"](**{"Size Threshold": "big"}).validate()
    assert [p.subject for p in problems] == ["Size Threshold"]
    assert extensions.processors["UpperCase"]().validate() == ()


def test_a_loaded_processor_pickles_and_runs_after(extensions: PythonExtensions) -> None:
    """A processor from an extensions directory pickles by its module (as the direct runner
    ships it) and keeps its configuration."""
    processor = extensions.processors["UpperCase"](**{"Attribute Name": "x"})
    copy = pickle.loads(pickle.dumps(processor))
    assert copy.same_configuration(processor)
    runner = TestRunner(copy)
    runner.enqueue(b"abc", {"filename": "f"})
    runner.run()
    assert runner.flowfiles_for("success")[0].content == b"ABC"


_UNPICKLE_AND_RUN = """
import pickle, sys
import flowcore
from flowcore.testing import TestRunner
processor = pickle.loads(sys.stdin.buffer.read())
runner = TestRunner(processor)
runner.enqueue(b"one two three")
runner.run()
print(dict(runner.flowfiles_for("success")[0].attributes)["word.count"])
"""


def _in_a_fresh_process(processor: object) -> str:
    """What a fresh interpreter (an executor) makes of *processor* pickled: the word count."""
    done = subprocess.run(
        [sys.executable, "-c", _UNPICKLE_AND_RUN],
        input=pickle.dumps(processor),
        capture_output=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode().strip()


def test_an_executor_imports_the_extension_by_path(extensions: PythonExtensions) -> None:
    """Unpickled where nothing was loaded, CountWords is imported again from its file, its
    package directory on the path so its sibling module imports, and runs."""
    assert _in_a_fresh_process(extensions.processors["CountWords"]()) == "3"


def test_an_executor_without_the_file_runs_its_source(tmp_path: Path) -> None:
    """A single-file processor unpickled where its file is gone runs from the source pickled."""
    folder = tmp_path / "extensions"
    folder.mkdir()
    (folder / "Counter.py").write_text(
        (SAMPLES / "word-tools" / "CountWords.py")
        .read_text()
        .replace("import word_util\n", "")
        .replace("class CountWords", "class Counter")
        .replace("word_util.count_words(", "len(")
        .replace(".decode())", ".decode().split())")
    )
    processor = load_python_extensions([folder]).processors["Counter"]()
    (folder / "Counter.py").unlink()
    assert _in_a_fresh_process(processor) == "3"


def _flow(extensions: PythonExtensions, *, original_connected: bool) -> Flow:
    flow = Flow("nifi-python")
    gen = flow.add(GenerateFlowFile(batch_size=2, custom_text="hello nifi"), name="gen")
    upper = flow.add(extensions.processors["UpperCase"](), name="upper")
    route = flow.add(
        extensions.processors["RouteBySize"](**{"Size Threshold": "5 B"}), name="route"
    )
    flow.connect(gen, upper)
    flow.connect(upper, route, ["success"])
    flow.auto_terminate(upper, "failure")
    flow.auto_terminate(route, ["small", "large", "failure", "original"])
    if original_connected:
        keep = flow.add(extensions.processors["CountWords"](), name="count")
        flow.connect(upper, keep, ["original"])
        flow.auto_terminate(keep, ["success", "failure", "original"])
    return flow


def test_a_python_flow_runs_them_unchanged(extensions: PythonExtensions, tmp_path: Path) -> None:
    """GenerateFlowFile -> UpperCase -> RouteBySize, on the direct runner."""
    result = _flow(extensions, original_connected=False).run("direct", repository=tmp_path)
    assert result.transfers["upper"]["success"] == (2, 20)
    assert "small" not in result.transfers["route"]
    assert result.transfers["route"]["large"] == (2, 20)


def test_original_gets_a_clone_when_connected(extensions: PythonExtensions, tmp_path: Path) -> None:
    """With original connected, each input also goes there, unchanged, as NiFi clones it."""
    result = _flow(extensions, original_connected=True).run("direct", repository=tmp_path)
    assert result.transfers["upper"]["original"] == (2, 20)
    assert result.transfers["count"]["success"] == (2, 20)


class _NotATransform:
    class Java:
        implements = ("org.apache.nifi.python.processor.RecordTransform",)


class _Conditional(FlowFileTransform):
    """NiFi's ConditionalProcessor shape: dependent properties declared in __init__."""

    class Java:
        implements = ("org.apache.nifi.python.processor.FlowFileTransform",)

    def __init__(self, **kwargs: object) -> None:
        super().__init__()
        mode = PropertyDescriptor(
            name="Output Mode",
            description="text or json",
            allowable_values=["text", "json"],
            default_value="text",
            required=True,
        )
        field = PropertyDescriptor(
            name="JSON Field Name",
            description="json mode only",
            required=True,
            dependencies=[PropertyDependency(mode, "json")],
            validators=[StandardValidators.NON_EMPTY_VALIDATOR],
        )
        self.descriptors = [mode, field]

    def getPropertyDescriptors(self) -> list[PropertyDescriptor]:
        return self.descriptors

    def transform(self, context: object, flowFile: object) -> FlowFileTransformResult:
        fields = context.getProperties()  # type: ignore[attr-defined]
        return FlowFileTransformResult("success", {"seen": ",".join(d.name for d in fields)})


def test_dependent_properties_apply_only_when_met() -> None:
    """JSON Field Name is required only in json mode, and in text mode getProperties leaves it
    out, as NiFi's context does."""
    cls = processor_class(_Conditional)
    assert cls().validate() == ()
    assert [p.subject for p in cls(**{"Output Mode": "json"}).validate()] == ["JSON Field Name"]
    runner = TestRunner(cls())
    runner.enqueue(b"x")
    runner.run()
    assert runner.flowfiles_for("success")[0].attributes["seen"] == "Output Mode"


def test_a_class_that_is_no_transform_or_source_is_refused() -> None:
    """A RecordTransform (or anything else) is named with what flowcore runs."""
    with pytest.raises(InvalidProcessorError, match="must extend"):
        processor_class(_NotATransform)


def test_descriptor_conversion_keeps_display_name_and_scope() -> None:
    """display_name is what users see, name what flows store; a scope given as text works."""
    made = flowcore_descriptor(
        PropertyDescriptor(
            "rate",
            "how fast",
            display_name="Rate",
            default_value=5,
            expression_language_scope="ENVIRONMENT",
        )
    )
    assert (made.display_name, made.name, made.default) == ("Rate", "rate", "5")
    assert made.el_scope.name == ExpressionLanguageScope.ENVIRONMENT.name


@pytest.mark.spark
def test_a_loaded_processor_runs_on_spark(extensions: PythonExtensions, tmp_path: Path) -> None:
    """The flow with original connected to CountWords on the Spark runner: the processors
    from the extensions directory, a package's among them, are rebuilt in the executors from
    their files and transform there."""
    flow = _flow(extensions, original_connected=True)
    result = flow.run("spark", repository=tmp_path, conf={"spark.ui.enabled": "false"})
    assert result.transfers["upper"]["success"] == (2, 20)
    assert result.transfers["route"]["large"] == (2, 20)
    assert result.transfers["count"]["success"] == (2, 20)


class _Numbering(FlowFileTransform):
    """Numbers FlowFiles with a count kept in state, reading lines with NiFi's reader."""

    class Java:
        implements = ("org.apache.nifi.python.processor.FlowFileTransform",)

    def transform(self, context: Any, flowFile: Any) -> FlowFileTransformResult:
        manager = context.getStateManager()
        count = int(manager.getState(Scope.LOCAL).get("count") or "0") + 1
        manager.setState({"count": count}, Scope.LOCAL)
        first = flowFile.getContentsAsReader().readLine().strip()
        return FlowFileTransformResult("success", {"number": str(count), "first": first})


class _Refusing(_Numbering):
    """The same, with a customValidate that always finds a problem."""

    def customValidate(self, context: Any) -> list[ValidationResult]:
        seen = ",".join(d.name for d in context.getProperties())
        return [ValidationResult("Numbering", f"checked [{seen}]", valid=False)]


def test_a_transform_keeps_state_one_flowfile_at_a_time() -> None:
    """A transform asking for its state manager runs serially: each FlowFile sees the count
    the one before set, and the last count is the processor's state."""
    cls = processor_class(_Numbering)
    assert cls.capabilities.triggers_serially
    runner = TestRunner(cls())
    for text in (b"a\nb", b"c\n", b"d"):
        runner.enqueue(text)
    runner.run(3)
    seen = [
        (f.attributes["number"], f.attributes["first"]) for f in runner.flowfiles_for("success")
    ]
    assert seen == [("1", "a"), ("2", "c"), ("3", "d")]
    assert runner.state == {"count": "3"}


def test_custom_validate_results_are_flowcores() -> None:
    """customValidate's NiFi ValidationResults become validation problems."""
    [problem] = processor_class(_Refusing)().validate()
    assert (problem.subject, problem.explanation) == ("Numbering", "checked []")
