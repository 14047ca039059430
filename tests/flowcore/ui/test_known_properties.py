"""Sensitive as a component's JSON descriptor OR flowcore's class for its NiFi type says."""

from __future__ import annotations

from flowcore.ui.known_properties import is_sensitive, known_properties

DBCP = "org.apache.nifi.dbcp.DBCPConnectionPool"
INVOKE_HTTP = "org.apache.nifi.processors.standard.InvokeHTTP"


def test_either_source_makes_a_property_sensitive() -> None:
    """flowcore's DBCP Password without a descriptor; a file-marked property flowcore lacks."""
    bare = {"type": DBCP, "properties": {"Password": "x", "Database User": "u"}}
    assert is_sensitive(bare, "Password", service=True)
    assert not is_sensitive(bare, "Database User", service=True)
    marked = {
        "type": "com.example.Unknown",
        "propertyDescriptors": {"Token": {"name": "Token", "sensitive": True}},
    }
    assert is_sensitive(marked, "Token", service=False)
    assert not is_sensitive(marked, "Other", service=False)


def test_declared_and_dynamic_descriptors_are_found_by_type() -> None:
    """A declared property by any spelling; InvokeHTTP's Authorization header is sensitive."""
    dbcp = known_properties({"type": DBCP}, service=True)
    found = dbcp.find("password")
    assert found is not None
    assert (found.name, found.sensitive, found.dynamic) == ("Password", True, False)
    invoke = known_properties({"type": INVOKE_HTTP}, service=False)
    header = invoke.find("Authorization")
    assert header is not None
    assert (header.dynamic, header.sensitive) == (True, True)
    assert known_properties({"type": "com.example.Unknown"}, service=False).find("x") is None
