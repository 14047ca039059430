"""Tests for parameter contexts, references in property text, and sensitive values."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore.errors import ConfigurationError
from flowcore.expression import compile_expression
from flowcore.parameters import (
    MASK,
    Parameter,
    ParameterContext,
    SensitiveText,
    context_from_json,
    layered,
    load_parameters,
    parameter_references,
    redact,
    sole_reference,
    substitute_parameters,
)

VALUES = {"abc": "xxx", "def": "yyy"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [  # NiFi's User Guide, "Parameter Reference Syntax"
        ("#{abc}", "xxx"),
        ("#{abc}/data", "xxx/data"),
        ("#{abc}/#{def}", "xxx/yyy"),
        ("#{abc", "#{abc"),
        ("#abc", "#abc"),
        ("##{abc}", "#{abc}"),
        ("###{abc}", "#xxx"),
        ("####{abc}", "##{abc}"),
        ("#####{abc}", "##xxx"),
    ],
)
def test_references_substitute_as_nifi_documents(text: str, expected: str) -> None:
    """References and ## escapes give NiFi's effective values, with or without EL after."""
    assert substitute_parameters(text, VALUES) == expected
    as_el = substitute_parameters(text, VALUES, expressions=True)
    assert compile_expression(as_el).evaluate({}) == expected


def test_references_inside_expressions_are_read_by_the_expression() -> None:
    """A reference inside ${...} is the parameter's value there, as NiFi's EL reads it."""
    text = "${ #{abc}:replace('xxx', 'zzz') }-${a:equals(#{abc})}-${a:replace('#{x}', 'q')}"
    as_el = substitute_parameters(text, VALUES, expressions=True)
    assert compile_expression(as_el).evaluate({"a": "xxx"}) == "zzz-true-xxx"
    assert parameter_references(text, expressions=True) == ("abc",)


@given(st.text(max_size=30))
def test_any_value_comes_through_exactly(value: str) -> None:
    """Quotes, backslashes, line breaks, '#{' and '${' in a value come through as written."""
    values = {"p": value}
    outside = substitute_parameters("<#{p}>", values, expressions=True)
    inside = substitute_parameters("${#{p}:append('!')}", values, expressions=True)
    assert substitute_parameters("<#{p}>", values) == f"<{value}>"
    assert compile_expression(inside).evaluate({}) == value + "!"
    # NiFi evaluates EL in values outside ${}: a value holding '${' is an expression there
    # (an unclosed one, '<${>', is an invalid one), so only the others come through as text.
    if "${" not in value and "$$" not in value:
        assert compile_expression(outside).evaluate({}) == f"<{value}>"


def _contexts(depth: int = 2) -> st.SearchStrategy[ParameterContext]:
    names = st.sampled_from(["a", "b", "c", "d"])
    own = st.dictionaries(names, st.text("xyz", min_size=1, max_size=3), max_size=3)
    if depth == 0:
        return st.builds(ParameterContext, st.just(""), parameters=own)
    return st.builds(
        ParameterContext,
        st.just(""),
        parameters=own,
        inherited=st.lists(_contexts(depth - 1), max_size=3),
    )


def _model(context: ParameterContext, name: str) -> str | None:
    """NiFi's order written out: own parameters, then each inherited context depth first."""
    own = {p.name: p.value for p in context.parameters}
    if name in own:
        return own[name]
    for inherited in context.inherited:
        found = _model(inherited, name)
        if found is not None:
            return found
    return None


@given(_contexts())
def test_inheritance_resolves_in_nifis_order(context: ParameterContext) -> None:
    """Own parameters win, then inherited contexts in listed order, each depth first."""
    for name in "abcd":
        found = context.find(name)
        assert (found.value if found else None) == _model(context, name)
    assert {n: p.value for n, p in context.effective().items()} == {
        n: _model(context, n) for n in "abcd" if _model(context, n) is not None
    }


def test_names_and_sources_are_checked_when_made() -> None:
    """Bad names, two sources, or a name twice in one context raise at once, naming it."""
    with pytest.raises(ConfigurationError, match="abc/data"):
        Parameter("abc/data", "x")
    with pytest.raises(ConfigurationError, match="one of"):
        Parameter("p", "x", value_from_env="P")
    with pytest.raises(ConfigurationError, match="twice"):
        ParameterContext("c", parameters=[Parameter("p", "1"), Parameter("p", "2")])
    with pytest.raises(ConfigurationError, match="dict"):
        ParameterContext.of(["p"])  # type: ignore[arg-type]


def test_sensitive_values_never_show_and_travel_as_their_source(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A sensitive value reprs as ********, pickles as its source and is read again on load."""
    monkeypatch.setenv("FLOWCORE_TEST_SECRET", "hunter2")
    parameter = Parameter("db.password", sensitive=True, value_from_env="FLOWCORE_TEST_SECRET")
    value = parameter.read()
    assert isinstance(value, SensitiveText)
    assert value == "hunter2"
    assert repr(value) == repr(MASK)
    assert "hunter2" not in repr(ParameterContext("c", parameters=[parameter]))
    assert "hunter2" not in repr(Parameter("p", "hunter2", sensitive=True))
    shipped = pickle.dumps({"password": value})
    assert b"hunter2" not in shipped
    monkeypatch.setenv("FLOWCORE_TEST_SECRET", "rotated")
    assert pickle.loads(shipped)["password"] == "rotated"
    monkeypatch.delenv("FLOWCORE_TEST_SECRET")
    with pytest.raises(ConfigurationError, match="FLOWCORE_TEST_SECRET, which is not set"):
        pickle.loads(shipped)


def test_value_from_file_drops_one_line_break(tmp_path: Path) -> None:
    """A value read from a file loses its trailing line break; a missing file says so."""
    (tmp_path / "secret").write_text("pa55\n")
    assert Parameter("p", value_from_file=str(tmp_path / "secret")).read() == "pa55"
    with pytest.raises(ConfigurationError, match="cannot be read"):
        Parameter("p", value_from_file=str(tmp_path / "missing")).read()
    with pytest.raises(ConfigurationError, match="--parameter-env p=ENVVAR"):
        Parameter("p", sensitive=True).read()


def test_values_for_reads_defined_names_only(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """values_for gives defined names their value, None when unreadable, nothing when undefined."""
    monkeypatch.delenv("FLOWCORE_TEST_UNSET", raising=False)
    context = ParameterContext(
        parameters=[Parameter("a", "1"), Parameter("s", value_from_env="FLOWCORE_TEST_UNSET")]
    )
    assert context.values_for(["a", "s", "zzz"]) == {"a": "1", "s": None}


def test_nifi_export_with_inherited_contexts(tmp_path: Path) -> None:
    """A NiFi flow definition's contexts load, inherited ones by name or nested, in order."""
    export = {
        "flowContents": {"parameterContextName": "prod"},
        "parameterContexts": {
            "prod": {
                "name": "prod",
                "parameters": [{"name": "host", "value": "db1", "sensitive": False}],
                "inheritedParameterContexts": ["base", {"name": "extra", "parameters": []}],
            },
            "base": {
                "name": "base",
                "description": "shared",
                "parameters": [
                    {"name": "host", "value": "db0"},
                    {"name": "port", "value": "5432", "description": "the port"},
                    {"name": "db.password", "sensitive": True, "value_from_env": "PW"},
                ],
            },
        },
    }
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(export))
    context = load_parameters(path)
    assert context.name == "prod"
    assert context.find("host").value == "db1"  # type: ignore[union-attr]
    assert context.find("port").description == "the port"  # type: ignore[union-attr]
    assert context.find("db.password").sensitive  # type: ignore[union-attr]
    single = context_from_json(export["parameterContexts"]["base"])  # type: ignore[index]
    assert single.find("host").value == "db0"  # type: ignore[union-attr]


def test_plain_maps_and_bad_files(tmp_path: Path) -> None:
    """A name -> value object loads too; unreadable or odd files are errors naming the file."""
    assert context_from_json({"n": 3, "flag": True}).effective()["flag"].value == "true"
    secret = context_from_json({"pw": {"sensitive": True, "value_from_file": "/x"}})
    assert secret.find("pw").value_from_file == "/x"  # type: ignore[union-attr]
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(ConfigurationError, match=r"bad\.json is not valid JSON"):
        load_parameters(bad)
    with pytest.raises(ConfigurationError, match=r"missing\.json cannot be read"):
        load_parameters(tmp_path / "missing.json")
    with pytest.raises(ConfigurationError, match="lacks"):
        context_from_json({"name": "x", "parameters": [], "inheritedParameterContexts": ["y"]})
    with pytest.raises(ConfigurationError, match="list value"):
        context_from_json({"n": [1]})


def test_command_line_wins_over_file_over_flow() -> None:
    """layered puts --parameter over the file over the flow's own values."""
    flow = ParameterContext("f", parameters={"a": "flow", "b": "flow", "c": "flow"})
    file = ParameterContext("file", parameters={"b": "file", "c": "file"})
    context = layered(flow, file=file, values={"c": "cli"})
    assert {n: p.value for n, p in context.effective().items()} == {
        "a": "flow",
        "b": "file",
        "c": "cli",
    }


def test_secrets_do_not_go_on_the_command_line() -> None:
    """A value for a sensitive parameter is refused; --parameter-env keeps it sensitive."""
    flow = ParameterContext(parameters=[Parameter("pw", sensitive=True, value_from_env="X")])
    with pytest.raises(ConfigurationError, match="--parameter-env pw=ENVVAR"):
        layered(flow, values={"pw": "hunter2"})
    context = layered(flow, from_env={"pw": "Y", "new": "Z"})
    assert context.find("pw").value_from_env == "Y"  # type: ignore[union-attr]
    assert context.find("new").sensitive  # type: ignore[union-attr]
    with pytest.raises(ConfigurationError, match="pick one"):
        layered(flow, values={"a": "1"}, from_env={"a": "A"})


def test_redact_masks_every_occurrence() -> None:
    """redact replaces each secret wherever it appears, longest first."""
    text = "pw=abcd, again abcd; abcde"
    assert redact(text, ["abcd", "abcde"]) == f"pw={MASK}, again {MASK}; {MASK}"
    assert redact("nothing", [""]) == "nothing"


@pytest.mark.parametrize(
    ("value", "sole"),
    [
        ("#{password}", True),
        ("#{db pass.v-2_x}", True),
        ("#{user}hunter2}", False),
        ("#{user}hunter2", False),
        ("x#{user}", False),
        ("#{}", False),
        ("#{a}#{b}", False),
        ("#{a/b}", False),
    ],
)
def test_sole_reference_is_one_whole_reference(value: str, sole: bool) -> None:
    """Only one reference in NiFi's name grammar counts, so an export never writes a secret."""
    assert sole_reference(value) is sole


def test_redact_leaves_secrets_too_short_to_mask() -> None:
    """A secret under MIN_MASKED_LENGTH characters is not masked: "a" would garble every word."""
    text = "Transferring data at a rate of 5 rows/s"
    assert redact(text, ["a", "abc"]) == text
