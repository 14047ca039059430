"""Tests for ``flowcore processors``, run as the real command."""

from __future__ import annotations

from tests.flowcore.cli.conftest import Flowcore


def test_the_list_shows_dynamic_relationships(flowcore_cmd: Flowcore) -> None:
    """RouteOnAttribute's row lists matched, unmatched and its one-per-dynamic-property ones."""
    done = flowcore_cmd("processors")
    assert done.returncode == 0
    row = " ".join(
        line.split("│")[3].strip()
        for line in done.stdout.splitlines()
        if line.count("│") > 3 and line.split("│")[1].strip() in ("RouteOnAttribute", "")
    )
    assert "matched, unmatched, <one per dynamic property>" in " ".join(row.split())


def test_a_usage_page_keeps_its_indentation_when_wrapped(flowcore_cmd: Flowcore) -> None:
    """A long description wraps under its property, not back at column 0 (COLUMNS=100)."""
    done = flowcore_cmd("processors", "GetFile")
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 100
    start = next(i for i, line in enumerate(lines) if line.startswith("  Keep Source File"))
    description = lines[start + 3 : start + 6]
    assert description[0].startswith("    If true, the file is not deleted")
    assert all(line.startswith("    ") for line in description)
    assert "  <one per dynamic property>: " in flowcore_cmd("processors", "RouteOnAttribute").stdout


def test_services_are_listed_and_have_usage_pages(flowcore_cmd: Flowcore) -> None:
    """--services lists the controller services; a service's name shows its usage page."""
    done = flowcore_cmd("processors", "--services")
    assert done.returncode == 0
    assert "MapCacheService" in done.stdout
    assert "StandardSSLContext" in done.stdout
    page = flowcore_cmd("processors", "MapCacheService")
    assert page.returncode == 0
    assert "Implements: DistributedMapCacheClient" in page.stdout
    missing = flowcore_cmd("processors", "SplitTxt")
    assert missing.returncode == 2
    assert "did you mean SplitText" in missing.stderr
