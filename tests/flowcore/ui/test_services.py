"""A group's controller services as NiFi's tab lists them: masked, scoped, referenced."""

from __future__ import annotations

import json

import pytest

from flowcore.ui.flow_document import SENSITIVE_VALUE_SET
from flowcore.ui.services import group_services


def _root() -> dict:
    service = {
        "identifier": "svc-1",
        "name": "creds",
        "type": "org.apache.nifi.processors.aws.credentials.provider.service.X",
        "bundle": {"artifact": "nifi-aws-nar", "version": "2.0.0"},
        "scheduledState": "ENABLED",
        "properties": {"Secret": "hunter2", "Ref": "#{secret}", "Region": "eu"},
        "propertyDescriptors": {
            "Secret": {"name": "Secret", "sensitive": True},
            "Ref": {"name": "Ref", "sensitive": True},
            "Region": {"name": "Region", "displayName": "Region", "sensitive": False},
        },
    }
    return {
        "identifier": "root",
        "name": "flow",
        "controllerServices": [service],
        "processors": [{"identifier": "p1", "name": "fetch", "properties": {"Creds": "svc-1"}}],
        "processGroups": [
            {
                "identifier": "g1",
                "name": "inner",
                "controllerServices": [],
                "processors": [{"identifier": "p2", "name": "other", "properties": {}}],
            }
        ],
    }


def test_services_are_listed_masked_with_their_references() -> None:
    """Name, short type, state, referencing processors; no sensitive value or reference sent."""
    (found,) = group_services(_root())
    assert (found["name"], found["type"], found["state"]) == ("creds", "X", "ENABLED")
    assert found["referencing_components"] == [{"id": "p1", "name": "fetch", "kind": "processor"}]
    values = {p["name"]: p["value"] for p in found["properties"]}
    assert values == {"Secret": SENSITIVE_VALUE_SET, "Ref": SENSITIVE_VALUE_SET, "Region": "eu"}
    text = json.dumps(found)
    assert "hunter2" not in text
    assert "#{secret}" not in text
    assert found["inherited"] is False


def test_a_child_group_lists_its_ancestors_services_and_unknown_groups_fail() -> None:
    """In group g1 the root's service is listed as inherited; an unknown group is a KeyError."""
    (found,) = group_services(_root(), "g1")
    assert found["inherited"] is True
    assert found["scope"] == "flow"
    with pytest.raises(KeyError, match="no process group"):
        group_services(_root(), "nope")


def test_a_service_without_descriptors_is_masked_by_its_type() -> None:
    """A DBCPConnectionPool whose JSON has no descriptors: its Password masked, as flowcore's
    class for the NiFi type says it is sensitive; the plain URL shown."""
    service = {
        "identifier": "svc-1",
        "name": "pg",
        "type": "org.apache.nifi.dbcp.DBCPConnectionPool",
        "properties": {"Database Connection URL": "postgresql://h/db", "Password": "hunter2"},
    }
    root = {"identifier": "root", "name": "flow", "controllerServices": [service]}
    (found,) = group_services(root)
    rows = {p["name"]: p for p in found["properties"]}
    assert rows["Password"]["value"] == SENSITIVE_VALUE_SET
    assert rows["Password"]["sensitive"] is True
    assert rows["Password"]["dynamic"] is False
    assert rows["Database Connection URL"]["value"] == "postgresql://h/db"
    assert "hunter2" not in json.dumps(found)
