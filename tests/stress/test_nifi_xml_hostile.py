"""Hostile NiFi 1.x XML: entity bombs through the command line, deep trees, the densest XML the
tag limit lets through (flowcore.nifi.xml_parse), measured in a process of its own."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from flowcore.errors import NiFiFormatError
from flowcore.nifi.xml_flows import read_xml
from flowcore.nifi.xml_parse import MAX_XML_TAGS
from tests.flowcore.cli.conftest import run_flowcore
from tests.flowcore.nifi.test_xml_parse import BILLION_LAUGHS

pytestmark = pytest.mark.stress

ROOT = Path(__file__).resolve().parents[2]


def test_flowcore_run_refuses_a_billion_laughs_in_one_line(tmp_path: Path) -> None:
    """The command ends with status 2 and one error line, having expanded nothing."""
    path = tmp_path / "laughs.xml"
    path.write_bytes(BILLION_LAUGHS)
    done = run_flowcore("run", str(path), "--runner", "direct")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert "declares a document type" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_tree_700_000_elements_deep_is_read_and_released() -> None:
    """Expat builds deep trees without recursion and the reader looks only where NiFi writes:
    a 700,000-deep element under the snippet neither crashes nor hangs."""
    depth = 700_000
    data = b"<template><snippet>" + b"<a>" * depth + b"</a>" * depth + b"</snippet></template>"
    flow = read_xml(data, "deep.xml")
    assert flow.root["processors"] == []
    del flow


_DENSEST = textwrap.dedent(
    """
    import sys
    from flowcore.nifi.xml_flows import read_xml
    count = int(sys.argv[1])
    data = b"<flowController><rootGroup><id>r</id>" + b"<funnel/>" * count
    read_xml(data + b"</rootGroup></flowController>", "dense.xml")
    # VmHWM is this program's own peak; ru_maxrss keeps the forking pytest worker's
    with open("/proc/self/status") as status:
        peak = next(line for line in status if line.startswith("VmHWM:"))
    print(int(peak.split()[1]) // 1024)
    """
)


def test_the_densest_xml_under_the_tag_limit_stays_under_600_mb() -> None:
    """1.5 million <funnel/> (the costliest tag read) peak at about 480 MB, measured; one more
    tag is refused before parsing."""
    count = MAX_XML_TAGS - 10
    done = subprocess.run(
        [sys.executable, "-c", _DENSEST, str(count)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=600,
        check=True,
    )
    assert int(done.stdout.split()[-1]) < 600, done.stdout
    with pytest.raises(NiFiFormatError, match="XML tags"):
        read_xml(b"<flowController>" + b"<funnel/>" * MAX_XML_TAGS + b"</flowController>", "x")
