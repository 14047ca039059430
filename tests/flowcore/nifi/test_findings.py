"""Tests for flowcore.nifi.findings: every problem of an import raised once, types grouped."""

from __future__ import annotations

import pytest

from flowcore.errors import FlowDefinitionError, NiFiImportError
from flowcore.nifi.findings import Findings, ImportNote


def test_problems_are_raised_once_types_first_one_line_each() -> None:
    """Unsupported types come first, sorted, each with how many use it, which, and the fix;
    then the others."""
    findings = Findings()
    findings.problem("G/Route", "has a bad setting", "fix it")
    findings.unsupported_processor("org.apache.nifi.processors.standard.InvokeHTTP", "G/Call")
    findings.unsupported_processor("com.acme.Zap", "Zap")
    findings.unsupported_processor("org.apache.nifi.processors.standard.InvokeHTTP", "Call 2")
    findings.unsupported_service(
        "com.acme.Pool", "flowcore has no equivalent", "'pool' (used by 'Zap')"
    )
    with pytest.raises(NiFiImportError) as raised:
        findings.raise_if_any("web", "flow.json")
    error = raised.value
    assert isinstance(error, FlowDefinitionError)
    lines = str(error).splitlines()
    assert lines[0] == "NiFi flow 'web' (flow.json) cannot run in flowcore (4 problems):"
    assert lines[1].startswith("  - processor type com.acme.Zap: flowcore has no such processor")
    assert "no such processor; used by 2 processors: 'G/Call', 'Call 2'; map it" in lines[2]
    assert "type_map={'InvokeHTTP': YourProcessor}" in lines[2]
    assert lines[3] == (
        "  - controller service type com.acme.Pool: flowcore has no equivalent; "
        "1 service: 'pool' (used by 'Zap'); write a ControllerService for it and register it "
        "under the entry point group 'flowcore.services' (docs/services.md), or replace what "
        "uses it in NiFi"
    )
    assert lines[4] == "  - G/Route: has a bad setting; fix it"
    assert len(error.problems) == 4


def test_nothing_is_raised_without_problems() -> None:
    """Notes alone never raise."""
    findings = Findings()
    findings.note("connection a -> b", "load balancing kept")
    findings.raise_if_any("web", "flow.json")
    assert [str(n) for n in findings.notes] == ["connection a -> b: load balancing kept"]
    assert findings.notes[0] == ImportNote("connection a -> b", "load balancing kept")
