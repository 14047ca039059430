"""Tests for flowcore.nifi.xml_template: NiFi 1.x templates imported and run as their JSON twins."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowcore.builder import Flow
from flowcore.errors import NiFiFormatError, NiFiImportError
from flowcore.nifi.formats import FlowShape, read_definition
from flowcore.nifi.importing import import_nifi
from flowcore.nifi.structure import flow_structure

PARAMETERS = {"writer": "nifi-1"}


def _processor(
    identifier: str, name: str, kind: str, properties: str = "", *, extra: str = "", state: str = ""
) -> str:
    """A processor as a template holds it (ProcessorDTO, its settings in <config>)."""
    return f"""
    <processors><id>{identifier}</id><parentGroupId>G</parentGroupId>
      <config>
        <concurrentlySchedulableTaskCount>1</concurrentlySchedulableTaskCount>
        <properties>{properties}</properties>
        <schedulingPeriod>0 sec</schedulingPeriod>
        <schedulingStrategy>TIMER_DRIVEN</schedulingStrategy>{extra}
      </config>
      <name>{name}</name><state>{state or "STOPPED"}</state>
      <type>org.apache.nifi.processors.{kind}</type>
    </processors>"""


def _connection(source: str, destination: str, relationship: str, group: str = "G") -> str:
    def end(tag: str, identifier: str) -> str:
        kind = "FUNNEL" if identifier.startswith("funnel") else "PROCESSOR"
        if identifier.startswith(("in", "out")):
            kind = "INPUT_PORT" if identifier.startswith("in") else "OUTPUT_PORT"
        owner = "inner" if identifier.startswith(("in", "out", "inner")) else group
        return f"<{tag}><groupId>{owner}</groupId><id>{identifier}</id><type>{kind}</type></{tag}>"

    selected = f"<selectedRelationships>{relationship}</selectedRelationships>"
    return (
        f"<connections><id>{source}-{destination}</id><parentGroupId>{group}</parentGroupId>"
        f"{end('destination', destination)}<name></name>{selected}{end('source', source)}"
        "</connections>"
    )


def _entry(key: str, value: str) -> str:
    return f"<entry><key>{key}</key><value>{value}</value></entry>"


def _nested_template(variables: str = "") -> bytes:
    """Generate -> [Inner: in -> Stamp -> out] -> funnel -> PutFile, as NiFi 1.x writes it."""
    generate = _processor(
        "gen",
        "Make",
        "standard.GenerateFlowFile",
        _entry("generate-ff-custom-text", "x") + _entry("Batch Size", "2"),
    )
    stamp = _processor(
        "inner-stamp", "Stamp", "attributes.UpdateAttribute", _entry("stage", "inner")
    ).replace("<parentGroupId>G", "<parentGroupId>inner")
    write = _processor(
        "put",
        "Write",
        "standard.PutFile",
        _entry("Directory", "#{output.dir}"),
        extra="<autoTerminatedRelationships>success</autoTerminatedRelationships>"
        "<autoTerminatedRelationships>failure</autoTerminatedRelationships>",
    )
    inner = f"""
    <processGroups><id>inner</id><parentGroupId>G</parentGroupId>
      <contents>
        {_connection("in", "inner-stamp", "", "inner")}
        {_connection("inner-stamp", "out", "success", "inner")}
        <inputPorts><id>in</id><parentGroupId>inner</parentGroupId><name>in</name>
          <state>STOPPED</state><type>INPUT_PORT</type></inputPorts>
        <outputPorts><id>out</id><parentGroupId>inner</parentGroupId><name>out</name>
          <state>STOPPED</state><type>OUTPUT_PORT</type></outputPorts>
        {stamp}
      </contents>
      <name>Inner</name>{variables}
    </processGroups>"""
    return f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<template encoding-version="1.3"><description></description><groupId>G</groupId>
  <name>Nested</name>
  <snippet>
    {_connection("gen", "in", "success")}
    {_connection("out", "funnel1", "")}
    {_connection("funnel1", "put", "")}
    <funnels><id>funnel1</id><parentGroupId>G</parentGroupId></funnels>
    {inner}
    {generate}
    {write}
  </snippet>
</template>""".encode()


def test_a_template_is_the_flow_its_json_twin_is(samples: Path, tmp_path: Path) -> None:
    """template-1x.xml (download-1x.json as a template) makes the same components, settings,
    connections and notes; only the parameter context differs (a template holds none)."""
    parameters = {**PARAMETERS, "output.dir": str(tmp_path)}
    template = Flow.from_nifi(samples / "template-1x.xml", parameters=parameters)
    twin = Flow.from_nifi(samples / "download-1x.json", parameters=parameters)
    ours, theirs = flow_structure(template), flow_structure(twin)
    assert ours["components"] == theirs["components"]
    assert ours["connections"] == theirs["connections"]
    assert [str(n) for n in template.notes] == [str(n) for n in twin.notes]
    assert read_definition(samples / "template-1x.xml").shape is FlowShape.TEMPLATE


def test_a_template_runs_end_to_end_as_its_json_twin(samples: Path, tmp_path: Path) -> None:
    """On the direct runner both write the same two files, with the same transfers."""
    results = {}
    for name in ("template-1x.xml", "download-1x.json"):
        out = tmp_path / name
        flow = Flow.from_nifi(samples / name, parameters={**PARAMETERS, "output.dir": str(out)})
        flow.validate()
        result = flow.run("direct", repository=tmp_path / f"repo-{name}")
        written = sorted(p.read_text() for p in out.glob("*-*"))
        results[name] = (written, result.transfers["Write"], result.transfers["Tag"])
    assert results["template-1x.xml"] == results["download-1x.json"]
    assert results["template-1x.xml"][0] == ["a line\n", "a line\n"]


def test_a_scrubbed_templates_relationships_say_what_is_auto_terminated(samples: Path) -> None:
    """NiFi's templates keep auto-termination and retry on <relationships> only: both are read."""
    flow = Flow.from_nifi(samples / "template-1x.xml", parameters=PARAMETERS)
    write = flow.component("Write")
    assert flow.auto_terminated(write) == frozenset({"success"})
    assert write.retry is not None
    assert write.retry.relationships == ("failure",)


def test_nested_groups_ports_and_funnels_run(tmp_path: Path) -> None:
    """A nested group's ports become funnels, names take the group path, and the flow runs."""
    path = tmp_path / "nested.xml"
    path.write_bytes(_nested_template())
    flow = Flow.from_nifi(path, parameters={"output.dir": str(tmp_path / "out")})
    names = {c.name for c in flow.components}
    assert names == {"Make", "Inner/in", "Inner/Stamp", "Inner/out", "funnel", "Write"}
    flow.validate()
    result = flow.run("direct", repository=tmp_path / "repo")
    assert result.transfers["Inner/Stamp"]["success"][0] == 2
    assert len(list((tmp_path / "out").iterdir())) == 2


def test_template_variables_are_reported_as_json_variables_are(tmp_path: Path) -> None:
    """A group's <variables> meet the same rule as a flow definition's ``variables``."""
    path = tmp_path / "vars.xml"
    path.write_bytes(_nested_template("<variables>" + _entry("region", "eu") + "</variables>"))
    with pytest.raises(NiFiImportError, match=r"NiFi 1.x variables \(region\)"):
        import_nifi(path)


def test_disabled_state_descriptors_and_services_are_read(tmp_path: Path) -> None:
    """<state>DISABLED</state> disables; a property naming a template's service of a type
    flowcore lacks is reported with it, as in JSON."""
    service = """<controllerServices><id>svc</id><parentGroupId>G</parentGroupId>
      <name>Pool</name><properties/><state>ENABLED</state>
      <type>org.apache.nifi.dbcp.HikariCPConnectionPool</type></controllerServices>"""
    log = _processor(
        "log",
        "Log",
        "standard.LogAttribute",
        _entry("Log prefix", "svc"),
        extra="<descriptors><entry><key>Log prefix</key><value><name>Log prefix</name>"
        "<identifiesControllerService>org.apache.nifi.dbcp.DBCPService"
        "</identifiesControllerService></value></entry></descriptors>",
        state="DISABLED",
    )
    path = tmp_path / "svc.xml"
    path.write_text(f"<template><name>S</name><snippet>{service}{log}</snippet></template>")
    with pytest.raises(NiFiImportError, match="HikariCPConnectionPool") as raised:
        import_nifi(path)
    assert "'Pool' (used by 'Log')" in str(raised.value)
    definition = read_definition(path)
    [processor] = definition.root["processors"]
    assert processor["scheduledState"] == "DISABLED"
    assert processor["propertyDescriptors"]["Log prefix"]["identifiesControllerService"]


def test_a_number_field_holding_text_is_one_line(tmp_path: Path) -> None:
    """A task count that is no number names the element and the file."""
    path = tmp_path / "bad.xml"
    path.write_bytes(_nested_template().replace(b">1</concurrently", b">two</concurrently", 1))
    with pytest.raises(NiFiFormatError, match="<concurrentlySchedulableTaskCount> must be a whole"):
        read_definition(path)


def test_groups_nested_deeper_than_flowcore_reads_are_one_line() -> None:
    """200 nested <processGroups> (NiFi never writes 64) are refused, not recursed into."""
    from flowcore.nifi.xml_flows import read_xml

    depth = 200
    opening = b"".join(b"<processGroups><id>g%d</id><contents>" % i for i in range(depth))
    data = b"<template><snippet>" + opening + b"</contents></processGroups>" * depth
    with pytest.raises(NiFiFormatError, match="nests process groups more than 64 deep"):
        read_xml(data + b"</snippet></template>", "deep.xml")


def test_update_attributes_advanced_rules_come_through_escaped_annotation_data(
    tmp_path: Path,
) -> None:
    """<annotationData> holds the criteria XML escaped, as NiFi writes it: the rules are read."""
    criteria = (
        "&lt;criteria&gt;&lt;flowFilePolicy&gt;USE_ORIGINAL&lt;/flowFilePolicy&gt;&lt;rules&gt;"
        "&lt;actions&gt;&lt;attribute&gt;kind&lt;/attribute&gt;&lt;id&gt;a&lt;/id&gt;&lt;value&gt;"
        "big&lt;/value&gt;&lt;/actions&gt;&lt;conditions&gt;&lt;expression&gt;${fileSize:gt(1)}"
        "&lt;/expression&gt;&lt;id&gt;c&lt;/id&gt;&lt;/conditions&gt;&lt;id&gt;r&lt;/id&gt;"
        "&lt;name&gt;Big&lt;/name&gt;&lt;/rules&gt;&lt;/criteria&gt;"
    )
    path = tmp_path / "advanced.xml"
    path.write_text(
        "<template><name>A</name><snippet>"
        + _processor(
            "u",
            "Tag",
            "attributes.UpdateAttribute",
            extra=f"<annotationData>{criteria}</annotationData>",
        )
        + "</snippet></template>"
    )
    processor = Flow.from_nifi(path).component("Tag").processor
    assert processor is not None
    [rule] = dict(processor.advanced_configuration())["rules"]
    assert (rule.name, rule.conditions, dict(rule.actions)) == (
        "Big",
        ("${fileSize:gt(1)}",),
        {"kind": "big"},
    )
    assert dict(processor.advanced_configuration())["flowfile_policy"] == "USE_ORIGINAL"
