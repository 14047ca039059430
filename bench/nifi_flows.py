"""Public NiFi flows through flowcore: which load, which run, and what each still lacks.

For every flow definition kept in ``tests/flowcore/nifi/public_flows`` (their sources and
licences are in ``sources.md`` there), the script

1. loads it as ``flowcore run`` does (``Flow.from_nifi``, no type map) and records the first
   error: the NiFi processor and controller service types flowcore lacks, with how many of each,
   or the import rule that stopped it, in one line;
2. runs it when it loads, with the direct runner, as ``flowcore run FLOW --runner direct`` in a
   child process whose working directory and repository are a fresh temporary directory, for at
   most ``--timeout`` seconds (then Ctrl-C, then kill). Before that, the flow's own properties
   decide whether it may run at all: a flow that would reach beyond loopback (a URL or host
   property naming another host, a remote process group, a processor type that talks to an
   external system: HTTP, Kafka, a database, S3 ...) is "not tried (calls HOST)"; one that names
   an absolute path (a GetFile or PutFile directory outside the temporary directory) is "not
   tried (absolute path ...)"; one that runs scripts or commands is "not tried" too.

It prints one JSON line per flow and a table. ``--save FILE`` keeps the rows (JSON lines);
``--markdown`` prints the "Public NiFi flows" table of ``docs/nifi-interop.md`` with an earlier
tree's rows beside this one's (``--before FILE``; by default ``nifi_flows_before.jsonl`` beside
this script, measured on the tree before issue 33, ``9428417``). To measure another tree, run
this script with ``PYTHONPATH`` pointing at it: the child processes run the flowcore the script
imported.

Run: ``.venv/bin/python bench/nifi_flows.py`` (``--flows DIR``, ``--timeout S``, ``--save FILE``,
``--markdown``, ``--before FILE``). About a minute on the 2-core VM.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import attrs

# Scripts run from bench/, where bench/processors.py would shadow the processors package.
# With PYTHONPATH set (another tree measured), that tree's flowcore is the one imported.
ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT))

import flowcore
from flowcore.builder import Flow
from flowcore.errors import FlowcoreError

FLOWS = ROOT / "tests" / "flowcore" / "nifi" / "public_flows"
#: The rows measured on the tree before issue 33 (9428417), for the docs table's first column.
BEFORE = Path(__file__).resolve().with_name("nifi_flows_before.jsonl")
LOOPBACK = re.compile(r"^(localhost|127(\.\d{1,3}){3}|\[?::1\]?|0:0:0:0:0:0:0:1)$", re.IGNORECASE)
URL = re.compile(r"\b([a-z][a-z0-9+.-]*)://(?:[^@/\s]*@)?(\[[^\]]+\]|[^/:\s,;\"'?#]+)", re.I)
HOST_PROPERTY = re.compile(r"host|server|broker|bootstrap|endpoint|url|uri", re.I)
PATH_PROPERTY = re.compile(r"director|file|path|folder", re.I)
# Processor types that talk to systems outside the machine whatever their properties say (the
# host may come from a service or a default): a run of these is never tried.
EXTERNAL_TYPE = re.compile(
    r"HTTP|Kafka|SQL|Database|Table|S3|Azure|GCS|BigQuery|Elastic|OpenSearch|Mongo|JMS|AMQP|MQTT|"
    r"FTP|Email|SMTP|POP3|IMAP|Syslog|TCP|UDP|Slack|Snowflake|Splunk|Solr|Cassandra|Redis|Hive|"
    r"HBase|HDFS|Kinesis|SQS|SNS|Lambda|DynamoDB|Couchbase|InfluxDB|Neo4j|Pulsar|Websocket|"
    r"RecordSink|Listen|Site|Remote|Teams|Ldap|Salesforce|Box|Dropbox|GoogleDrive|SMB|DBCP|"
    r"ConnectionPool|Hikari|Prometheus|Graphite|Datadog",
    re.I,
)
LOCAL_TYPE = re.compile(r"^(GetFile|PutFile|ListFile|FetchFile|TailFile|LogAttribute)$")
SCRIPT_TYPE = re.compile(r"Script|ExecuteProcess|ExecuteStreamCommand|Groovy|Jython", re.I)
# The first error's lines for missing types; before issue 33 they named the users without a count.
MISSING_PROCESSOR = re.compile(
    r"processor type (.+?): flowcore has no such processor(?:; used by (\d+) processors?|(.*))"
)
MISSING_SERVICE = re.compile(
    r"controller service type (.+?): flowcore has no equivalent(?:; (\d+) services?|(.*))"
)


def simple(nifi_type: str) -> str:
    """``org.apache.nifi.processors.standard.InvokeHTTP`` -> ``InvokeHTTP``."""
    return nifi_type.rsplit(".", 1)[-1] or nifi_type


def lacking(nifi_type: str) -> str:
    """A missing type as the table names it: its simple name, or the whole name when flowcore
    has a processor of that simple name (the package is what it lacks: MiNiFi C++'s types)."""
    name = simple(nifi_type)
    try:
        from flowcore.registry import available_processors

        known = available_processors()
    except Exception:
        known = {}
    return nifi_type if name in known else name


# ---------------------------------------------------------------------------------------------
# Reading a flow file as data (any shape, whatever flowcore makes of it)


def read_text(path: Path) -> str:
    """The file's text, gunzipped when its bytes are gzip."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


@attrs.frozen
class Component:
    """A processor or controller service as the file holds it: type, name, properties."""

    kind: str
    type: str
    name: str
    properties: dict[str, Any]


def _json_components(document: Any) -> tuple[list[Component], list[str], list[str]]:
    """Processors, services, remote process group URIs and parameter values of a JSON flow."""
    components: list[Component] = []
    remote_uris: list[str] = []
    values: list[str] = []

    def visit(node: Any, key: str = "") -> None:
        if isinstance(node, dict):
            if key in ("processors", "controllerServices") or (
                "properties" in node and "type" in node and node.get("componentType")
            ):
                kind = "service" if key == "controllerServices" else "processor"
                if node.get("componentType") == "CONTROLLER_SERVICE":
                    kind = "service"
                properties = node.get("properties") or {}
                components.append(
                    Component(
                        kind,
                        str(node.get("type") or "(no type)"),
                        str(node.get("name") or ""),
                        properties if isinstance(properties, dict) else {},
                    )
                )
            for uri_key in ("targetUri", "targetUris"):
                if isinstance(node.get(uri_key), str):
                    remote_uris.append(node[uri_key])
            if key == "parameters" or ("sensitive" in node and "value" in node):
                value = node.get("value")
                if isinstance(value, str):
                    values.append(value)
            for child_key, child in node.items():
                if child_key in ("propertyDescriptors", "bundle", "position"):
                    continue
                visit(child, child_key)
        elif isinstance(node, list):
            for item in node:
                visit(item, key)

    visit(document)
    return components, remote_uris, values


def _xml_components(root: ElementTree.Element) -> tuple[list[Component], list[str], list[str]]:
    """Processors, services and remote process group URIs of a template or ``flow.xml``."""
    components = []
    remote_uris = []
    for element in root.iter():
        tag = element.tag
        if tag in ("targetUri", "targetUris", "url") and element.text:
            remote_uris.append(element.text)
        if tag not in ("processors", "processor", "controllerServices", "controllerService"):
            continue
        nifi_type = element.findtext("type") or element.findtext("class") or "(no type)"
        properties: dict[str, Any] = {}
        for holder in (element.find("config/properties"), element.find("properties")):
            if holder is not None:
                for entry in holder.findall("entry"):
                    properties[entry.findtext("key") or ""] = entry.findtext("value")
        for entry in element.findall("property"):  # flow.xml: <property><name/><value/>
            properties[entry.findtext("name") or ""] = entry.findtext("value")
        kind = "service" if tag.startswith("controllerService") else "processor"
        components.append(Component(kind, nifi_type, element.findtext("name") or "", properties))
    return components, remote_uris, []


def describe(path: Path) -> dict[str, Any]:
    """What the file is, read as plain data: shape, NiFi version, processors, and its parts."""
    text = read_text(path)
    info: dict[str, Any] = {"shape": "?", "nifi_version": "unknown"}
    if text.lstrip().startswith("<"):
        if "<!DOCTYPE" in text.upper():  # entities could expand without bound: NiFi writes none
            msg = f"{path.name} declares a document type, which NiFi never writes"
            raise ValueError(msg)
        root = ElementTree.fromstring(text.encode("utf-8"))
        info["shape"] = {"template": "XML template", "flowController": "flow.xml"}.get(
            root.tag, f"XML <{root.tag}>"
        )
        info["nifi_version"] = "1.x"
        components, remote_uris, values = _xml_components(root)
    else:
        document = json.loads(text)
        info["shape"] = _json_shape(document)
        components, remote_uris, values = _json_components(document)
        versions = re.findall(r'"version"\s*:\s*"(\d+\.\d+[^"]*)"', text)
        if versions:
            info["nifi_version"] = Counter(versions).most_common(1)[0][0]
        elif isinstance(document, dict) and document.get("encodingVersion"):
            info["nifi_version"] = "2.x (instance flow)"
    processors = [c for c in components if c.kind == "processor"]
    info["processors"] = len(processors)
    info["types"] = dict(Counter(simple(c.type) for c in processors).most_common())
    info["components"] = components
    info["remote_uris"] = remote_uris
    info["parameter_values"] = values
    return info


def _json_shape(document: Any) -> str:
    if not isinstance(document, dict):
        return "JSON (not an object)"
    if "header" in document and "content" in document:
        return "Registry flow file"
    if "snapshotMetadata" in document:
        return "Registry snapshot"
    if "rootGroup" in document:
        return "instance flow.json"
    if "flowContents" in document:
        return "flow definition"
    return "JSON (unknown shape)"


# ---------------------------------------------------------------------------------------------
# Deciding whether a run is safe: nothing beyond loopback, nothing outside the temp dir


def _hosts_in(value: str) -> list[str]:
    return [match.group(2).strip("[]") for match in URL.finditer(value)]


def why_not_run(info: dict[str, Any]) -> str | None:
    """Why the flow must not run here (it would reach beyond loopback or the temp dir), or None.

    The first that applies, in this order: a host other than loopback in a URL, a host
    property, a remote process group or a parameter; an absolute path (or one leaving the
    working directory) in a directory, file or path property; a processor that runs scripts or
    commands; a processor or service of a type that talks to external systems; a host property
    whose value is an expression (it cannot be told before the run).
    """
    hosts: list[str] = []
    paths: list[str] = []
    scripts: list[str] = []
    external: list[str] = []
    unresolved: list[str] = []
    for uri in info["remote_uris"]:
        hosts += [host for part in uri.split(",") for host in _hosts_in(part.strip())]
    for value in info["parameter_values"]:
        hosts += _hosts_in(value)
    for component in info["components"]:
        name = simple(component.type)
        if component.kind == "processor" and SCRIPT_TYPE.search(name):
            scripts.append(name)
        named: list[str] = []  # the hosts this component names
        for key, value in component.properties.items():
            if not isinstance(value, str) or not value:
                continue
            named += _hosts_in(value)
            if HOST_PROPERTY.search(key) and "://" not in value:
                if "${" in value or "#{" in value:
                    unresolved.append(f"{name} '{key}' = {value}")
                elif not re.fullmatch(r"[\d.]+|true|false|\d+\s*\w*", value, re.I):
                    named.append(value.split(":")[0].split(",")[0].strip())
            if PATH_PROPERTY.search(key) and (
                value.startswith(("/", "~", "\\")) or re.match(r"[A-Za-z]:[\\/]", value)
            ):
                paths.append(f"absolute path {value} ({name} '{key}') outside the temp dir")
            elif PATH_PROPERTY.search(key) and ".." in Path(value).parts:
                paths.append(f"path {value} ({name} '{key}') leaves the temp dir")
        hosts += named
        # A type that talks to other systems, naming none but loopback hosts, may run.
        if EXTERNAL_TYPE.search(name) and not LOCAL_TYPE.match(name) and not named:
            external.append(name)
    remote = sorted({host for host in hosts if host and not LOOPBACK.match(host)})
    if remote:
        return "calls " + ", ".join(remote)
    if paths:
        return paths[0]
    if scripts:
        return "runs scripts or commands: " + ", ".join(sorted(set(scripts)))
    if external:
        return "talks to external systems: " + ", ".join(sorted(set(external)))
    if unresolved:
        return "host from an expression: " + unresolved[0]
    return None


# ---------------------------------------------------------------------------------------------
# Loading and running through flowcore


def _problem_text(problem: Any) -> str:
    """A problem without its fix: what is wrong, and where."""
    if hasattr(problem, "subject") and hasattr(problem, "problem"):
        return f"{problem.subject}: {problem.problem}"
    return str(problem)


def _missing(pattern: re.Pattern[str], problems: list[str]) -> list[str]:
    """``Type xN`` for each missing type a problem names (N counted from its users if not given)."""
    found = []
    for problem in problems:
        match = pattern.search(problem)
        if match:
            nifi_type, count, rest = match.groups()
            count = count or str(max(1, len(re.findall(r"'[^']*'", rest or ""))))
            found.append(f"{lacking(nifi_type)} x{count}")
    return found


def lacks_of(error: BaseException, path: Path) -> str:
    """The first error in one line: missing types with counts, else the rule that stopped it."""
    problems = [_problem_text(p) for p in getattr(error, "problems", ())]
    problems = problems or [str(error).replace(str(path), path.name)]
    processors = _missing(MISSING_PROCESSOR, problems)
    services = _missing(MISSING_SERVICE, problems)
    parts = []
    if processors:
        parts.append("processors: " + ", ".join(processors))
    if services:
        parts.append("services: " + ", ".join(services))
    others = [
        p for p in problems if not MISSING_PROCESSOR.search(p) and not MISSING_SERVICE.search(p)
    ]
    if others:
        first = " ".join(others[0].split()).split("; ")[0]
        first = first if len(first) <= 160 else first[:157] + "..."
        more = f" (+{len(others) - 1} more)" if len(others) > 1 else ""
        parts.append(f"rule: {first}{more}")
    return "; ".join(parts)


def load(path: Path) -> tuple[bool, str, list[str]]:
    """(loads, what it lacks, notes) from ``Flow.from_nifi`` without a type map."""
    try:
        flow = Flow.from_nifi(path)
    except FlowcoreError as error:
        return False, lacks_of(error, path), []
    except Exception as error:  # a traceback is a flowcore bug: reported as such
        return False, f"BUG: {type(error).__name__}: {error}", []
    return True, "", [str(note) for note in getattr(flow, "notes", ())]


def run(path: Path, timeout: float) -> tuple[str, str, float]:
    """Run the flow with the direct runner in a temp dir: (runs, detail, seconds)."""
    package_root = str(Path(flowcore.__file__).resolve().parents[1])
    environment = dict(os.environ, PYTHONPATH=package_root)
    with tempfile.TemporaryDirectory(prefix="nifi-flow-") as work:
        command = [
            sys.executable,
            "-m",
            "flowcore",
            "run",
            str(path.resolve()),
            "--runner",
            "direct",
            "--repository",
            str(Path(work) / "repository"),
            "--json",
        ]
        started = time.monotonic()
        child = subprocess.Popen(
            command,
            cwd=work,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        stopped = ""
        try:
            out, err = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            child.send_signal(signal.SIGINT)
            stopped = f"stopped after {timeout:g} s"
            try:
                out, err = child.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)  # its session: nothing it started survives
                out, err = child.communicate()
                stopped += ", killed"
        seconds = time.monotonic() - started
    return (*_outcome(child.returncode, out, err, stopped), seconds)


def _outcome(status: int, out: str, err: str, stopped: str) -> tuple[str, str]:
    """(runs, detail) from ``flowcore run``'s exit status, JSON summary and stderr lines.

    Exit 0 is "yes"; 3 (FlowFiles it could not finish) "stuck" and 4 (FlowFiles dropped at an
    auto-terminated failure) "failed", each with the first ``stuck:``/``failed:`` line; any
    other status "no", with the ``error:`` line (and the first problem under it).
    """
    lines = [line for line in err.splitlines() if line.strip()]
    told = [line for line in lines if line.startswith(("stuck:", "failed:", "error:"))]
    summary = ""
    try:
        result = json.loads(out)
        flowfiles = sum(n for rels in result["transfers"].values() for n, _ in rels.values())
        summary = f"{flowfiles} FlowFile transfers, {result['provenance_events']} events"
    except (ValueError, KeyError, TypeError):
        pass
    if stopped:
        return "stopped", "; ".join(filter(None, [stopped, summary, *told[:1]]))
    if status == 0:
        return "yes", summary
    if status in (3, 4):
        outcome = "stuck" if status == 3 else "failed"
        return outcome, "; ".join(filter(None, [summary, *told[:1]]))
    first = told[0] if told else (lines[-1] if lines else f"exit status {status}")
    if first.startswith("error:") and len(told) == 1:
        index = lines.index(first)
        first = " ".join([first, *lines[index + 1 : index + 2]])
    first = " ".join(first.split())
    return "no", first if len(first) <= 200 else first[:197] + "..."


def measure(path: Path, timeout: float) -> dict[str, Any]:
    """One flow's row."""
    try:
        info = describe(path)
    except (ValueError, ElementTree.ParseError, OSError) as error:  # not JSON nor XML at all
        info = {"shape": "unreadable", "nifi_version": "unknown", "processors": 0, "types": {}}
        info["unreadable"] = f"not checked, as its text could not be read: {error}"
    started = time.monotonic()
    loads, lacks, notes = load(path)
    row: dict[str, Any] = {
        "flow": path.name,
        "shape": info["shape"],
        "nifi_version": info["nifi_version"],
        "processors": info["processors"],
        "types": info["types"],
        "loads": loads,
        "lacks": lacks,
        "notes": len(notes),
        "load_seconds": round(time.monotonic() - started, 3),
    }
    if not loads:
        row.update(runs="not tried (does not load)", run_detail="", run_seconds=0.0)
        return row
    refusal = info.get("unreadable") or why_not_run(info)
    if refusal:
        row.update(runs=f"not tried ({refusal})", run_detail="", run_seconds=0.0)
        return row
    runs, detail, seconds = run(path, timeout)
    row.update(runs=runs, run_detail=detail, run_seconds=round(seconds, 2))
    return row


# ---------------------------------------------------------------------------------------------
# Output


def sources(flows: Path) -> dict[str, str]:
    """File name -> repository, from sources.md beside the flows."""
    found = {}
    table = flows / "sources.md"
    if table.is_file():
        for line in table.read_text().splitlines():
            cells = [cell.strip().strip("`") for cell in line.strip().strip("|").split("|")]
            if len(cells) >= 2 and "/" in cells[1] and (flows / cells[0]).is_file():
                found[cells[0]] = cells[1]
    return found


def _cell(row: dict[str, Any] | None) -> str:
    """One tree's result for a flow, in a table cell: loads, runs, and what it lacks."""
    if row is None:
        return "(not measured)"
    if not row["loads"]:
        text = f"does not load: {row['lacks']}"
    else:
        detail = row.get("run_detail") or ""
        runs = row["runs"]
        if runs == "yes":
            text = f"loads, runs ({detail})" if detail else "loads, runs"
        elif runs.startswith("not tried"):
            text = f"loads; run {runs}"
        elif runs == "no":
            text = f"loads; run refused: {detail.removeprefix('error: ')}"
        else:
            text = f"loads; run {runs}: {detail}"
    return text.replace("|", "\\|")


def _tally(rows: list[dict[str, Any]]) -> str:
    loaded = sum(row["loads"] for row in rows)
    ran = sum(row["runs"] == "yes" for row in rows)
    return f"{loaded} load, {ran} run to the end"


def summary(rows: list[dict[str, Any]], before: dict[str, dict[str, Any]]) -> str:
    """One paragraph: how many flows, load and run before and now, the types most lacking."""
    processors = sum(row["processors"] for row in rows)
    lacking_types: Counter[str] = Counter()
    for row in rows:
        for kind in ("processors", "services"):
            for part in row["lacks"].split("; "):
                if part.startswith(kind + ": "):
                    for item in part[len(kind) + 2 :].split(", "):
                        lacking_types[item.rsplit(" x", 1)[0]] += 1
    earlier = [before[row["flow"]] for row in rows if row["flow"] in before]
    text = f"{len(rows)} flows, {processors} processors. "
    if earlier:
        text += f"Before issue 33: {_tally(earlier)}. "
    text += f"Now: {_tally(rows)}."
    if lacking_types:
        ranked = ", ".join(f"{name} ({n})" for name, n in lacking_types.most_common(12))
        text += f" Types still lacking, by the number of flows that use them: {ranked}."
    return text


def markdown(rows: list[dict[str, Any]], before: dict[str, dict[str, Any]], flows: Path) -> str:
    """The docs table: each flow with its source, shape, processors, before and now."""
    repositories = sources(flows)
    lines = [
        summary(rows, before),
        "",
        "| Flow | Source | NiFi, shape | Processors | Before issue 33 | Now |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        types = ", ".join(
            f"{name} x{count}" if count > 1 else name for name, count in row["types"].items()
        )
        lines.append(
            f"| `{row['flow']}` | {repositories.get(row['flow'], '?')} | "
            f"{row['nifi_version']}, {row['shape']} | {row['processors']}"
            f"{': ' + types if types else ''} | "
            f"{_cell(before.get(row['flow']))} | {_cell(row)} |"
        )
    return "\n".join(lines)


def table(rows: list[dict[str, Any]]) -> None:
    """A short table for people."""
    from rich.console import Console
    from rich.table import Table

    out = Table(title=f"public NiFi flows through flowcore {Path(flowcore.__file__).parents[1]}")
    for column in ("flow", "shape", "procs", "loads", "runs", "lacks"):
        out.add_column(column, overflow="fold")
    for row in rows:
        runs = row["runs"] + (f" ({row['run_detail']})" if row.get("run_detail") else "")
        out.add_row(
            row["flow"],
            f"{row['nifi_version']} {row['shape']}",
            str(row["processors"]),
            "yes" if row["loads"] else "no",
            runs,
            row["lacks"],
        )
    console = Console(width=200)
    console.print(out)
    console.print(f"{len(rows)} flows: {_tally(rows)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=Path, default=FLOWS, help="directory of flow files")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per run")
    parser.add_argument("--save", type=Path, help="write the rows to FILE (JSON lines)")
    parser.add_argument("--markdown", action="store_true", help="print the docs table")
    parser.add_argument(
        "--before",
        type=Path,
        default=BEFORE,
        help="rows saved from an earlier tree (default: the tree before issue 33's)",
    )
    args = parser.parse_args()
    files = sorted(
        path for path in args.flows.iterdir() if path.is_file() and path.name != "sources.md"
    )
    rows = []
    for path in files:
        row = measure(path, args.timeout)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.save:
        args.save.write_text("".join(json.dumps(row) + "\n" for row in rows))
    table(rows)
    if args.markdown:
        before = {}
        if args.before and args.before.is_file():
            for line in args.before.read_text().splitlines():
                if line.strip():
                    earlier = json.loads(line)
                    before[earlier["flow"]] = earlier
        print(markdown(rows, before, args.flows))


if __name__ == "__main__":
    main()
