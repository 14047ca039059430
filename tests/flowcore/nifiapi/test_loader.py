"""Tests for nifiapi._loader: extension directories scanned, dependencies reported, NiFi flows
with bundle python-extensions imported and run, from Python and from the command line."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from flowcore.builder import Flow
from flowcore.errors import ConfigurationError, NiFiImportError
from nifiapi import _loader
from nifiapi._loader import (
    ENVIRONMENT_VARIABLE,
    PythonExtensions,
    load_python_extensions,
    loaded_processors,
    register,
)
from tests.flowcore.cli.conftest import run_flowcore

SAMPLES = Path(__file__).parent / "samples"

UPPER = textwrap.dedent(
    """
    from nifiapi.flowfiletransform import FlowFileTransform, FlowFileTransformResult

    class {name}(FlowFileTransform):
        class Java:
            implements = ['org.apache.nifi.python.processor.FlowFileTransform']
        class ProcessorDetails:
            version = '0.0.1-SNAPSHOT',
            dependencies = {dependencies!r}
        def __init__(self, **kwargs):
            pass
        def transform(self, context, flowFile):
            text = flowFile.getContentsAsBytes()
            return FlowFileTransformResult('success', contents=text.upper())
    """
)


def test_a_directory_yields_its_processors_by_class_name(extensions: PythonExtensions) -> None:
    """Files and packages are scanned; a helper module (word_util) is no processor; the one
    with a dependency not installed is reported once, with its pip command."""
    assert sorted(extensions.processors) == [
        "CountWords",
        "CountingSource",
        "CreateGreeting",
        "NeedsMissingPackage",
        "RouteBySize",
        "UpperCase",
    ]
    [missing] = extensions.missing
    assert missing.processor == "NeedsMissingPackage"
    assert missing.packages == ("flowcore-sample-missing-package>=1.0",)
    assert missing.message().startswith("Python processor NeedsMissingPackage (")
    assert f"{sys.executable} -m pip install 'flowcore-sample-missing-package>=1.0'" in (
        missing.message()
    )


def test_a_missing_directory_is_named() -> None:
    """The directory given is in the error."""
    with pytest.raises(ConfigurationError, match="nowhere/extensions does not exist"):
        load_python_extensions(["nowhere/extensions"])


def test_a_file_that_is_not_python_is_named_with_its_line(tmp_path: Path) -> None:
    """NiFi reads a file before running it; so does flowcore, and says where it breaks."""
    (tmp_path / "Broken.py").write_text("class Broken(:\n")
    with pytest.raises(ConfigurationError, match=r"Broken.py is not valid Python: .* \(line 1\)"):
        load_python_extensions([tmp_path])


def test_two_processors_of_one_name_are_refused(tmp_path: Path) -> None:
    """Flows name processors by class name: two Shout classes cannot both be loaded."""
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "Shout.py").write_text(UPPER.format(name="Shout", dependencies=[]))
    with pytest.raises(ConfigurationError, match="two Python processors are named Shout"):
        load_python_extensions([tmp_path / "a", tmp_path / "b"])


def test_dependencies_are_installed_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With install_dependencies, the unmet requirements go to the installer, are checked
    again, and the processor loads; without it they are only reported."""
    extensions = tmp_path / "extensions"
    extensions.mkdir()
    (extensions / "Shouty.py").write_text(
        UPER_WITH_IMPORT.format(name="Shouty", dependencies=["shouty-helper>=2"])
    )
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    asked: list[Sequence[str]] = []

    def install(requirements: Sequence[str]) -> None:  # what pip leaves behind
        asked.append(tuple(requirements))
        (site / "shouty_helper.py").write_text("LOUD = True\n")
        info = site / "shouty_helper-2.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shouty-helper\nVersion: 2.1\n")

    reported = load_python_extensions([extensions], install=install)
    assert [m.packages for m in reported.missing] == [("shouty-helper>=2",)]
    assert asked == []
    found = load_python_extensions([extensions], install_dependencies=True, install=install)
    assert asked == [("shouty-helper>=2",)]
    assert found.missing == ()
    assert found.installed == ("shouty-helper>=2",)
    assert found.processors["Shouty"]().validate() == ()


UPER_WITH_IMPORT = "import shouty_helper\n" + UPPER


def _python_flow(processor_type: str = "UpperCase") -> dict[str, Any]:
    """A NiFi 2 flow definition: GenerateFlowFile -> a Python processor (python-extensions)."""

    def processor(identifier: str, name: str, kind: str, bundle: dict, **fields: Any) -> dict:
        return {
            "identifier": identifier,
            "name": name,
            "type": kind,
            "bundle": bundle,
            "propertyDescriptors": {},
            "schedulingPeriod": "0 sec",
            "schedulingStrategy": "TIMER_DRIVEN",
            "concurrentlySchedulableTaskCount": 1,
            "scheduledState": "ENABLED",
            "componentType": "PROCESSOR",
            "groupIdentifier": "top",
            **fields,
        }

    standard = {"group": "org.apache.nifi", "artifact": "nifi-standard-nar", "version": "2.0.0"}
    python = {"group": "org.apache.nifi", "artifact": "python-extensions", "version": "0.0.1"}
    gen = processor(
        "gen",
        "Generate",
        "org.apache.nifi.processors.standard.GenerateFlowFile",
        standard,
        properties={"Custom Text": "hello nifi", "Batch Size": "3"},
        autoTerminatedRelationships=[],
    )
    upper = processor(
        "upper",
        "Upper",
        processor_type,
        python,
        properties={"Attribute Name": "shout", "Attribute Value": "${filename}"},
        autoTerminatedRelationships=["success", "failure", "original"],
    )
    link = {
        "identifier": "c1",
        "name": "",
        "source": {"id": "gen", "type": "PROCESSOR", "groupId": "top"},
        "destination": {"id": "upper", "type": "PROCESSOR", "groupId": "top"},
        "selectedRelationships": ["success"],
        "backPressureObjectThreshold": 10000,
        "backPressureDataSizeThreshold": "1 GB",
        "flowFileExpiration": "0 sec",
        "prioritizers": [],
        "loadBalanceStrategy": "DO_NOT_LOAD_BALANCE",
        "componentType": "CONNECTION",
        "groupIdentifier": "top",
    }
    root = {
        "identifier": "top",
        "name": "python-flow",
        "componentType": "PROCESS_GROUP",
        "processors": [gen, upper],
        "connections": [link],
    }
    return {
        "flowContents": root,
        "externalControllerServices": {},
        "parameterContexts": {},
        "flowEncodingVersion": "1.0",
    }


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A fresh registry of loaded processors, the environment variable not read."""
    fresh: dict[str, Any] = {}
    monkeypatch.setattr(_loader, "_REGISTERED", fresh)
    monkeypatch.setattr(_loader, "_FROM_ENVIRONMENT", [True])
    return fresh


def test_a_nifi_flow_names_a_loaded_processor_by_class_name(
    extensions: PythonExtensions, registered: dict[str, Any], tmp_path: Path
) -> None:
    """A processor of bundle python-extensions, type UpperCase, is the loaded class, its
    NiFi properties set by name, and the flow runs."""
    register(extensions)
    flow = Flow.from_nifi(_python_flow())
    upper = flow.component("Upper").processor
    assert type(upper).__name__ == "UpperCase"
    assert upper.configured == {"Attribute Name": "shout", "Attribute Value": "${filename}"}
    result = flow.run("direct", repository=tmp_path)
    assert result.transfers["Upper"]["success"] == (3, 30)


def test_a_python_type_not_loaded_says_where_to_load_it(registered: dict[str, Any]) -> None:
    """Without its directory, the error says it is a NiFi Python processor and how to load it."""
    with pytest.raises(NiFiImportError, match="--python-extensions DIR"):
        Flow.from_nifi(_python_flow())


def test_the_environment_variable_names_directories(
    monkeypatch: pytest.MonkeyPatch, registered: dict[str, Any]
) -> None:
    """FLOWCORE_PYTHON_EXTENSIONS is read once, when loaded processors are first asked for."""
    monkeypatch.setattr(_loader, "_FROM_ENVIRONMENT", [])
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, os.pathsep.join([str(SAMPLES), ""]))
    assert "RouteBySize" in loaded_processors()


def test_the_command_line_loads_and_runs_them(tmp_path: Path) -> None:
    """``flowcore run flow.json --python-extensions DIR``: the missing dependency is one note
    naming the pip command, and the flow runs."""
    flow = tmp_path / "flow.json"
    flow.write_text(json.dumps(_python_flow()))
    done = run_flowcore(
        "run", str(flow), "--runner", "direct", "--python-extensions", str(SAMPLES), "--json"
    )
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if "NeedsMissingPackage" in line]
    assert len(notes) == 1
    assert notes[0].startswith("note: Python processor NeedsMissingPackage")
    assert "pip install 'flowcore-sample-missing-package>=1.0'" in notes[0]
    assert json.loads(done.stdout)["transfers"]["Upper"]["success"][0] == 3


def test_a_flow_using_a_processor_without_its_dependencies_names_the_pip_command(
    extensions: PythonExtensions, registered: dict[str, Any]
) -> None:
    """Using NeedsMissingPackage is an import problem naming it and the pip command."""
    register(extensions)
    with pytest.raises(NiFiImportError) as raised:
        Flow.from_nifi(_python_flow("NeedsMissingPackage"))
    assert "Python processor NeedsMissingPackage" in str(raised.value)
    assert "pip install 'flowcore-sample-missing-package>=1.0'" in str(raised.value)


def test_an_export_names_it_as_nifi_does(
    extensions: PythonExtensions, registered: dict[str, Any]
) -> None:
    """Written back for NiFi, the processor is its class name in bundle python-extensions at
    its ProcessorDetails version, and reads back as the same class."""
    from flowcore.nifi.exporting import export_flow

    register(extensions)
    exported = export_flow(Flow.from_nifi(_python_flow())).document
    [upper] = [p for p in exported["flowContents"]["processors"] if p["name"] == "Upper"]
    assert (upper["type"], upper["bundle"]["artifact"]) == ("UpperCase", "python-extensions")
    assert upper["bundle"]["version"] == "0.0.1-SNAPSHOT"
    again = Flow.from_nifi(exported)
    assert type(again.component("Upper").processor) is extensions.processors["UpperCase"]


def test_the_setting_names_directories_for_the_command_line(registered: dict[str, Any]) -> None:
    """``--setting python_extensions_source_directory=DIR`` loads as --python-extensions does."""
    from argparse import Namespace

    from flowcore.cli._nifi import load_python_extensions_of

    setting = f"python_extensions_source_directory={SAMPLES}"
    load_python_extensions_of(Namespace(setting=[setting], python_extensions=[]))
    assert "UpperCase" in registered


def test_a_flow_written_as_python_imports_them_from_nifiapi_extensions(
    extensions: PythonExtensions, registered: dict[str, Any], tmp_path: Path
) -> None:
    """``convert --to python`` writes ``from nifiapi.extensions import UpperCase``, which
    gives the loaded class, so the written flow runs with the same directory loaded."""
    from flowcore.nifi.python_source import flow_to_python

    register(extensions)
    source = flow_to_python(Flow.from_nifi(_python_flow()), origin="flow.json")
    assert "from nifiapi.extensions import UpperCase" in source
    namespace: dict[str, Any] = {}
    exec(compile(source, "flow_py.py", "exec"), namespace)
    result = namespace["flow"].run("direct", repository=tmp_path)
    assert result.transfers["Upper"]["success"] == (3, 30)
    registered.clear()
    with pytest.raises(ImportError, match="no NiFi Python processor UpperCase is loaded"):
        exec(compile(source, "flow_py.py", "exec"), {})


def test_a_python_processor_never_takes_a_java_processors_place(
    registered: dict[str, Any], tmp_path: Path
) -> None:
    """A Python class named GenerateFlowFile does not replace NiFi's GenerateFlowFile."""
    (tmp_path / "GenerateFlowFile.py").write_text(
        UPPER.format(name="GenerateFlowFile", dependencies=[])
    )
    register(load_python_extensions([tmp_path, SAMPLES]))
    flow = Flow.from_nifi(_python_flow())
    assert type(flow.component("Generate").processor).__module__ == "processors.generate_flowfile"
