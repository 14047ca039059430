"""Tests for flowcore.nifi.xml_instance: a NiFi 1.x flow.xml.gz imported and run as its
flow.json.gz twin."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest

from flowcore.builder import Flow
from flowcore.errors import NiFiFormatError, NiFiImportError
from flowcore.nifi.formats import FlowShape, read_definition
from flowcore.nifi.importing import import_nifi

ENCRYPTED = "enc{6E0A1C2B9F}"


def _flow_xml(samples: Path, path: Path, change: tuple[str, str] | None = None) -> Path:
    """samples/flow.xml.gz, with one piece of its text replaced, written gzipped to *path*."""
    text = gzip.decompress((samples / "flow.xml.gz").read_bytes()).decode()
    if change is not None:
        assert change[0] in text
        text = text.replace(change[0], change[1], 1)
    path.write_bytes(gzip.compress(text.encode()))
    return path


def _flow_json(samples: Path) -> dict[str, Any]:
    return json.loads(gzip.decompress((samples / "flow.json.gz").read_bytes()))


def test_a_flow_xml_is_the_flow_its_json_twin_is(samples: Path) -> None:
    """flow.xml.gz (flow.json.gz as NiFi 1.x writes it) is the same flow, with the same notes:
    the flattened group, the root's site-to-site port, the stopped processor, the unused
    service."""
    ours = Flow.from_nifi(samples / "flow.xml.gz")
    twin = Flow.from_nifi(samples / "flow.json.gz")
    assert ours.same_as(twin)
    assert [str(n) for n in ours.notes] == [str(n) for n in twin.notes]
    assert read_definition(samples / "flow.xml.gz").shape is FlowShape.INSTANCE_FLOW


def test_parameter_contexts_keep_names_inheritance_and_drop_encrypted_values(
    samples: Path,
) -> None:
    """Groups bind contexts by id, contexts inherit by id: both become names; a sensitive
    parameter's encrypted value is left out, as flow.json.gz's is."""
    definition = read_definition(samples / "flow.xml.gz")
    assert set(definition.parameter_contexts) == {"pipeline", "base"}
    assert definition.parameter_contexts["pipeline"]["inheritedParameterContexts"] == ["base"]
    [group] = definition.root["processGroups"]
    assert group["parameterContextName"] == "pipeline"
    flow = Flow.from_nifi(samples / "flow.xml.gz")
    password = flow.parameters.find("store.password")
    assert password is not None
    assert password.sensitive
    assert password.value is None
    assert flow.parameters.find("stage").value == "raw"  # the bound context wins over "base"


def test_a_flow_xml_runs_end_to_end(samples: Path, tmp_path: Path) -> None:
    """On the direct runner: three generated records, stamped, merged into one file."""
    flow = Flow.from_nifi(samples / "flow.xml.gz", parameters={"output.dir": str(tmp_path / "o")})
    flow.validate()
    stamp = flow.resolved_processor(flow.component("Pipeline/Stamp"))
    assert stamp.dynamic_properties == {"stage": "raw"}
    result = flow.run("direct", repository=tmp_path / "repo")
    [written] = (tmp_path / "o").iterdir()
    assert re.fullmatch(r"(id=\d+\n){3}", written.read_text())
    assert result.transfers["Pipeline/Bundle"]["merged"][0] == 1


def test_an_encrypted_property_is_reported_as_in_flow_json(samples: Path, tmp_path: Path) -> None:
    """A property value NiFi encrypted (enc{...}) meets flow.json.gz's rule: the same problem,
    naming the processor and the property, and the same fix."""
    path = _flow_xml(
        samples,
        tmp_path / "flow.xml.gz",
        (
            "<name>Create Missing Directories</name>",
            f"<name>Permissions</name><value>{ENCRYPTED}</value></property><property>"
            "<name>Create Missing Directories</name>",
        ),
    )
    with pytest.raises(NiFiImportError) as ours:
        import_nifi(path)
    twin = _flow_json(samples)
    [store] = [
        p for p in twin["rootGroup"]["processGroups"][0]["processors"] if p["name"] == "Store"
    ]
    store["properties"]["Permissions"] = ENCRYPTED
    with pytest.raises(NiFiImportError) as theirs:
        import_nifi(twin)
    assert [str(p) for p in ours.value.problems] == [str(p) for p in theirs.value.problems]
    [problem] = ours.value.problems
    assert "'Permissions' holds a value encrypted" in str(problem)
    assert "Pipeline/Store" in str(problem)


def test_variables_are_reported_as_in_json(samples: Path, tmp_path: Path) -> None:
    """<variable name value/> in a group meets the rule for NiFi 1.x variables."""
    path = _flow_xml(
        samples,
        tmp_path / "flow.xml.gz",
        ("<parameterContextId>", '<variable name="region" value="eu"/><parameterContextId>'),
    )
    with pytest.raises(NiFiImportError, match=r"process group Pipeline: defines NiFi 1.x var"):
        import_nifi(path)


@pytest.mark.parametrize(
    ("state", "expected"),
    [("RUNNING", "RUNNING"), ("STOPPED", "ENABLED"), ("DISABLED", "DISABLED")],
)
def test_scheduled_states_read_as_flow_json_has_them(
    tmp_path: Path, state: str, expected: str
) -> None:
    """RUNNING stays, STOPPED is ENABLED (flowcore notes it runs it), DISABLED stays."""
    path = tmp_path / "flow.xml"
    path.write_text(
        "<flowController><rootGroup><id>r</id><name>N</name><processor><id>p</id>"
        f"<name>P</name><class>x.Y</class><scheduledState>{state}</scheduledState>"
        "</processor></rootGroup></flowController>"
    )
    [processor] = read_definition(path).root["processors"]
    assert processor["scheduledState"] == expected


def test_a_context_the_file_lacks_is_named_by_its_id(tmp_path: Path) -> None:
    """A group bound to a context id the file does not hold is the usual problem."""
    path = tmp_path / "flow.xml"
    path.write_text(
        "<flowController><rootGroup><id>r</id><name>N</name>"
        "<parameterContextId>ctx-1</parameterContextId></rootGroup></flowController>"
    )
    with pytest.raises(NiFiImportError, match="binds parameter context 'ctx-1'"):
        import_nifi(path)


def test_a_flow_controller_without_a_root_group_is_one_line(tmp_path: Path) -> None:
    """No <rootGroup>: one line saying to copy the file again."""
    path = tmp_path / "flow.xml.gz"
    path.write_bytes(gzip.compress(b"<flowController><registries/></flowController>"))
    with pytest.raises(NiFiFormatError, match="without a <rootGroup>"):
        read_definition(path)


def test_groups_nested_deeper_than_flowcore_reads_are_one_line(tmp_path: Path) -> None:
    """200 nested <processGroup> (NiFi never writes 64) are refused, not recursed into."""
    depth = 200
    opening = b"".join(b"<processGroup><id>g%d</id>" % i for i in range(depth))
    path = tmp_path / "flow.xml.gz"
    path.write_bytes(
        gzip.compress(
            b"<flowController><rootGroup><id>r</id>"
            + opening
            + b"</processGroup>" * depth
            + b"</rootGroup></flowController>"
        )
    )
    with pytest.raises(NiFiFormatError, match="nests process groups more than 64 deep"):
        read_definition(path)


def test_a_remote_process_group_with_a_connection_is_reported_as_in_json(tmp_path: Path) -> None:
    """A connection into a <remoteProcessGroup>'s port is site-to-site: the JSON rule's problem;
    the remote group itself is a note."""
    path = tmp_path / "flow.xml"
    path.write_text(
        "<flowController><rootGroup><id>r</id><name>N</name>"
        "<processor><id>p</id><name>Make</name>"
        "<class>org.apache.nifi.processors.standard.GenerateFlowFile</class></processor>"
        "<remoteProcessGroup><id>rpg</id><name>Edge</name><url>https://edge:8443/nifi</url>"
        "<inputPort><id>rin</id><name>intake</name></inputPort></remoteProcessGroup>"
        "<connection><id>c</id><sourceId>p</sourceId><sourceGroupId>r</sourceGroupId>"
        "<sourceType>PROCESSOR</sourceType><destinationId>rin</destinationId>"
        "<destinationGroupId>rpg</destinationGroupId><destinationType>REMOTE_INPUT_PORT"
        "</destinationType><relationship>success</relationship></connection>"
        "</rootGroup></flowController>"
    )
    with pytest.raises(NiFiImportError, match="site-to-site") as raised:
        import_nifi(path)
    [problem] = raised.value.problems
    assert "'intake'" in str(problem)
