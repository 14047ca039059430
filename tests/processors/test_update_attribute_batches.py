"""Tests for UpdateAttribute's batch form: a batch changed whole, and the same FlowFiles,
events and state as one by one (Hypothesis), in the harness and in the engine. A split of
test_update_attribute.py by concept: the same processor, processors/update_attribute.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.flowfile import Attributes
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.session.batch_context import BatchContext
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import GetFile, SplitText, UpdateAttribute
from processors.update_attribute import DELETE_KEY, MATCHED_RULE, Rule
from repositories.repository_set import RepositorySet
from tests.processors._update_attribute import BIG, STATEFUL, rules_runner


def _batch() -> FlowFileBatch:
    return FlowFileBatch.alike(
        count=3,
        first_id=1,
        uuid_key="0123abcd-0000-4000-8000-0000",
        uuid_first=0,
        attributes=Attributes({"path": "./"}),
        uuid_named=("filename",),
        resource_claim=None,
        offset=0,
        stride=0,
        size=0,
        entry_date=1,
        lineage_start_date=1,
    )


def _batch_context(processor: UpdateAttribute) -> BatchContext:
    """The context a batch form gets, over a harness as its host (as an engine task makes it)."""
    runner = TestRunner(processor)
    return BatchContext(runner.context, runner)


@pytest.mark.parametrize(
    ("processor", "whole"),
    [
        (UpdateAttribute(source="bench", filename="x.txt"), True),
        (UpdateAttribute(source="${filename}", filename="x.txt"), True),
        (UpdateAttribute(source="a", **{"Delete Attributes Expression": "k.*"}), True),
        (UpdateAttribute(source="a", rules=[Rule("r", ["${k:equals('v')}"], {"x": "1"})]), True),
        (
            UpdateAttribute(
                source="a",
                rules=[Rule("r", ["${path:equals('./')}"], {"x": "1"}), Rule("s", [], {"y": "2"})],
            ),
            False,
        ),
    ],
    ids=["plain", "expression", "delete", "rules", "clones"],
)
def test_values_and_expressions_are_set_on_a_whole_batch(
    processor: UpdateAttribute, whole: bool
) -> None:
    """A batch is changed whole, expressions per FlowFile, deletions and rules included; a
    FlowFile that USE_CLONE would clone makes the batch decline."""
    batch = _batch()
    result = processor.transform_batch(_batch_context(processor), batch)
    assert (result is not None) is whole
    if result is not None:
        (route,) = result
        relationship, changed = route.relationship, route.batch
        assert relationship == "success"
        assert route.attributes_modified  # NiFi's modifyAttributes for each FlowFile
        for before, after in zip(batch.flowfiles(), changed.flowfiles(), strict=True):
            expected = processor.dynamic_properties["source"].replace(
                "${filename}", before.filename
            )
            assert (after.uuid, after.filename, after.attributes["source"]) == (
                before.uuid,
                processor.dynamic_properties.get("filename", before.filename),
                expected,
            )


_NAMES = st.sampled_from(["a.1", "a.2", "b", "keep", "filename", "path"])


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.dictionaries(_NAMES, st.sampled_from(["x", "y", "1"]), max_size=4),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from(["a\\..*", "b|keep", "${kind}", "", "filename|a.1", "zz"]),
    st.dictionaries(st.sampled_from(["a.1", "b", "new"]), st.sampled_from(["v", "${b}"])),
    st.booleans(),
)
def test_deleting_on_batches_agrees_with_one_by_one(
    inputs: list[dict[str, str]], delete: str, updates: dict[str, str], shared_kind: bool
) -> None:
    """Delete Attributes Expression over a batch: the same FlowFiles and events as one by one,
    for literal regexes, one taken from an attribute (the same for all, or not), an empty one,
    core names, names some FlowFiles lack and names also set here."""
    runner = TestRunner(
        UpdateAttribute(**{"Delete Attributes Expression": delete, **updates}), batches=True
    )
    for number, attributes in enumerate(inputs):
        kind = "a\\..*" if shared_kind or number % 2 else "b"
        runner.enqueue(b"x", {**attributes, "kind": kind})
    runner.assert_batch_form_agrees(allow_decline=True)


# --- advanced rules in the batch form ----------------------------------------------------------


def _enqueue_all(runner: TestRunner, inputs: list[tuple[bytes, dict[str, str]]]) -> None:
    for content, attributes in inputs:
        runner.enqueue(content, attributes)


_CONDITIONS = st.sampled_from(
    [
        "${a:equals('x')}",
        "${b:isEmpty()}",
        "${n:gt(1)}",
        "${a:equals(${b})}",
        "${fileSize:gt(1)}",
        "${filename:endsWith('1.mockFlowFile')}",
        "${c:startsWith('y'):or(${n:equals('0')})}",
    ]
)
_ACTION_VALUES = st.sampled_from(["v", "${a}", "${b:append('-')}", "${n:plus(1)}", "", "${c}"])
_TARGETS = st.sampled_from(["a", "b", "new", "tag"])
_DELETES = st.sampled_from(["a|b", "c", "${kind}", "", "new|n", "UpdateAttribute\\..*"])
_INPUTS = st.lists(
    st.tuples(
        st.sampled_from([b"", b"x", b"xyz"]),
        st.fixed_dictionaries(
            {},
            optional={
                "a": st.sampled_from(["x", "y", "1"]),
                "b": st.sampled_from(["x", "y"]),
                "c": st.sampled_from(["x", "y"]),
                "n": st.sampled_from(["0", "2", "10"]),
                "kind": st.sampled_from(["a|b", "c"]),
                MATCHED_RULE: st.just("earlier"),
            },
        ),
    ),
    min_size=1,
    max_size=8,
)


@st.composite
def _rules(draw: st.DrawFn, deletes: bool = True) -> list[Rule]:
    made = []
    for index in range(draw(st.integers(0, 3))):
        actions = draw(st.dictionaries(_TARGETS, _ACTION_VALUES, max_size=3))
        if deletes and draw(st.integers(0, 3)) == 0:
            actions[DELETE_KEY] = draw(_DELETES)
        conditions = draw(st.lists(_CONDITIONS, max_size=2))
        made.append(Rule(name=f"r{index}", conditions=conditions, actions=actions))
    return made


@settings(max_examples=60, deadline=None)
@given(
    _INPUTS,
    _rules(),
    st.dictionaries(_TARGETS, _ACTION_VALUES, max_size=2),
    st.one_of(st.none(), _DELETES),
    st.sampled_from(["USE_CLONE", "USE_ORIGINAL"]),
)
def test_rules_on_batches_agree_with_one_by_one(
    inputs: list[tuple[bytes, dict[str, str]]],
    rules: list[Rule],
    defaults: dict[str, str],
    delete: str | None,
    policy: str,
) -> None:
    """Random rules, conditions, actions (deletions included), defaults and policies over a
    batch: the same FlowFiles, attributes and events as one by one, or a decline."""
    properties = {**defaults, **({DELETE_KEY: delete} if delete is not None else {})}
    runner = TestRunner(
        UpdateAttribute(rules=rules, flowfile_policy=policy, **properties), batches=True
    )
    _enqueue_all(runner, inputs)
    runner.assert_batch_form_agrees(allow_decline=True)


@settings(max_examples=40, deadline=None)
@given(_INPUTS, _rules(deletes=False), st.dictionaries(_TARGETS, _ACTION_VALUES, max_size=2))
def test_rules_without_deletions_under_use_original_are_always_taken_whole(
    inputs: list[tuple[bytes, dict[str, str]]], rules: list[Rule], defaults: dict[str, str]
) -> None:
    """USE_ORIGINAL without Delete Attributes Expressions never declines, and agrees."""
    runner = TestRunner(
        UpdateAttribute(rules=rules, flowfile_policy="USE_ORIGINAL", **defaults), batches=True
    )
    _enqueue_all(runner, inputs)
    runner.assert_batch_form_agrees()
    assert runner.batch_use.whole == len(inputs)


def _size_classes(policy: str) -> UpdateAttribute:
    """NiFi's "else" pattern: rules classify by fileSize, the default says small."""
    return UpdateAttribute(
        rules=[
            Rule("large", ["${fileSize:gt(100)}"], {"size.class": "large"}),
            Rule("medium", ["${fileSize:gt(10)}", "${fileSize:le(100)}"], {"size.class": "medium"}),
        ],
        flowfile_policy=policy,
        **{"size.class": "small", "checked": "yes"},
    )


@pytest.mark.parametrize("policy", ["USE_CLONE", "USE_ORIGINAL"])
def test_rules_classify_a_whole_batch_in_batch_mode(policy: str) -> None:
    """A rule beats a default, the defaults apply alone where no rule matches (NiFi's else),
    and matchedRule names the rule; the batch mode takes the whole batch."""
    runner = TestRunner(_size_classes(policy), batches=True)
    for size in (5, 50, 500, 7):
        runner.enqueue(b"z" * size)
    runner.run()
    assert runner.batch_use.whole == 4
    assert runner.batch_use.declined == []
    outs = runner.flowfiles_for("success")
    assert [o.attributes["size.class"] for o in outs] == ["small", "medium", "large", "small"]
    assert [o.attributes.get(MATCHED_RULE) for o in outs] == [None, "medium", "large", None]
    assert all(o.attributes["checked"] == "yes" for o in outs)
    assert [e.event_type.value for e in runner.provenance_events] == ["ATTRIBUTES_MODIFIED"] * 4


def test_a_flowfile_that_use_clone_clones_sends_its_batch_one_by_one() -> None:
    """USE_CLONE with a FlowFile matching two rules: the batch declines, and the one-by-one
    path makes the clone with its CLONE event."""
    runner = rules_runner(**{"class": "small"})
    for size in ("5", "50", "500"):
        runner.enqueue(b"", {"size": size})
    runner.assert_batch_form_agrees(allow_decline=True)
    assert runner.batch_use.declined == ["transform_batch returned None for 3 FlowFiles"]
    classes = [o.attributes["class"] for o in runner.flowfiles_for("success")]
    assert classes == ["small", "big", "big", "huge"]
    assert [e.event_type.value for e in runner.provenance_events].count("CLONE") == 1


def test_use_clone_with_one_match_at_most_is_taken_whole() -> None:
    """USE_CLONE where no FlowFile matches two rules clones nothing: the batch goes whole."""
    runner = rules_runner(**{"class": "small"})
    for size in ("5", "50", "7"):
        runner.enqueue(b"", {"size": size})
    runner.assert_batch_form_agrees()
    assert runner.batch_use.whole == 3


def test_a_condition_is_evaluated_only_where_the_earlier_ones_held() -> None:
    """A later condition that would fail for a FlowFile the first one rejects is never
    evaluated for it, one by one or in the batch form, which takes the batch whole."""
    rule = Rule("guarded", ["${a:equals('x')}", "${b:matches(${p})}"], {"hit": "${b}", "p": "${p}"})
    runner = TestRunner(UpdateAttribute(rules=[rule], flowfile_policy="USE_ORIGINAL"))
    runner.enqueue(b"", {"a": "x", "b": "bb", "p": "b+"})
    runner.enqueue(b"", {"a": "y", "b": "bb", "p": "("})  # an invalid regex, never compiled
    runner.enqueue(b"", {"a": "x", "b": "c", "p": "b+"})
    runner.assert_batch_form_agrees()
    assert [o.attributes.get("hit") for o in runner.flowfiles_for("success")] == ["bb", None, None]


def test_rule_deletions_apply_to_their_group_only() -> None:
    """A matched rule's Delete Attributes Expression replaces the property for its FlowFiles
    only; the others get the property's; both in one whole batch."""
    rule = Rule("strip", ["${strip:equals('yes')}"], {DELETE_KEY: "tmp\\..*", "done": "1"})
    runner = TestRunner(UpdateAttribute(rules=[rule], **{DELETE_KEY: "other"}), batches=True)
    runner.enqueue(b"", {"strip": "yes", "tmp.a": "1", "other": "2"})
    runner.enqueue(b"", {"strip": "no", "tmp.a": "1", "other": "2"})
    runner.assert_batch_form_agrees()
    stripped, kept = runner.flowfiles_for("success")
    assert ("tmp.a" in stripped.attributes, "other" in stripped.attributes) == (False, True)
    assert ("tmp.a" in kept.attributes, "other" in kept.attributes) == (True, False)
    assert runner.batch_use.whole == 2


# --- Store State in the batch form -------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    _INPUTS,
    _rules(),
    st.dictionaries(_TARGETS, _ACTION_VALUES, max_size=2),
    st.tuples(st.sampled_from(["USE_CLONE", "USE_ORIGINAL"]), st.sampled_from(["0", ""])),
    st.dictionaries(st.sampled_from(["a", "new", "other"]), st.sampled_from(["s", "0"])),
)
def test_stored_state_on_batches_agrees_with_one_by_one(
    inputs: list[tuple[bytes, dict[str, str]]],
    rules: list[Rule],
    defaults: dict[str, str],
    policy_and_initial: tuple[str, str],
    state: dict[str, str],
) -> None:
    """Store State with expressions that do not read it: the same FlowFiles, events and state
    (each variable's value in the last FlowFile that set it) as one by one, or a decline."""
    policy, initial = policy_and_initial
    processor = UpdateAttribute(
        rules=rules,
        flowfile_policy=policy,
        **STATEFUL,
        **{"Stateful Variables Initial Value": initial},
        **defaults,
    )
    runner = TestRunner(processor, batches=True)
    runner.set_state(state)
    _enqueue_all(runner, inputs)
    runner.assert_batch_form_agrees(allow_decline=True)
    deletes = any(DELETE_KEY in rule.actions for rule in rules)
    if policy == "USE_ORIGINAL" and not deletes:
        assert runner.batch_use.whole == len(inputs)


def test_stored_state_keeps_the_last_values_of_a_whole_batch() -> None:
    """Without reading the state, a batch goes whole and leaves each variable as its last
    FlowFile setting it left it; a rule's variable keeps its last matching FlowFile's value."""
    seen = Rule("seen", ["${kind:equals('x')}"], {"last.x": "${name}"})
    processor = UpdateAttribute(
        rules=[seen],
        flowfile_policy="USE_ORIGINAL",
        **STATEFUL,
        **{"Stateful Variables Initial Value": "none", "last": "${name}"},
    )
    runner = TestRunner(processor, batches=True)
    for name, kind in zip("abcd", "xyxy", strict=True):
        runner.enqueue(b"", {"name": name, "kind": kind})
    runner.assert_batch_form_agrees()
    assert runner.batch_use.whole == 4
    assert runner.state == {"last": "d", "last.x": "c"}


def test_reading_the_state_sends_the_batch_one_by_one() -> None:
    """NiFi's counter (``${getStateValue('count'):plus(1)}``) makes each FlowFile see the
    state the previous one left: the batch declines, and the one-by-one path counts."""
    processor = UpdateAttribute(
        **STATEFUL,
        **{
            "Stateful Variables Initial Value": "0",
            "count": "${getStateValue('count'):plus(1)}",
            "sum": "${getStateValue('sum'):plus(${pencils})}",
        },
    )
    runner = TestRunner(processor, batches=True)
    for pencils in ("2", "3", "4"):
        runner.enqueue(b"", {"pencils": pencils})
    runner.assert_batch_form_agrees(allow_decline=True)
    assert runner.batch_use.declined == ["transform_batch returned None for 3 FlowFiles"]
    assert [o.attributes["sum"] for o in runner.flowfiles_for("success")] == ["2", "5", "9"]
    assert runner.state == {"count": "3", "sum": "9"}


def test_next_int_with_rules_declines() -> None:
    """nextInt's values follow the order of evaluation, which only the one-by-one path keeps."""
    processor = UpdateAttribute(rules=[BIG], **{"n": "${nextInt()}"})
    assert processor.transform_batch(_batch_context(processor), _batch()) is None


# --- in the engine -----------------------------------------------------------------------------


_ENGINE = Settings(sync=False, parallelism=1, driver_run_max_flowfiles=0)
_TWICE = "${filename:equals('a.txt'):and(${fragment.index:equals(1)})}"


def _engine_run(root: Path, processor: UpdateAttribute) -> tuple[dict, list, dict]:
    """GetFile (a.txt, b.txt) -> SplitText (lines) -> UpdateAttribute, in the engine.

    The input is *root*'s parent's ``in`` (made once, kept: every run reads the same files, so
    a clone's events, which name all its attributes, agree on their paths and times; but the
    first run's read moves the files' access time, which is left out).

    Returns the processor's committed state, its events' updated attributes, and transfers.
    """
    source = root.parent / "in"
    if not source.exists():
        source.mkdir(parents=True)
        (source / "a.txt").write_text("1\n2\n3\n")
        (source / "b.txt").write_text("4\n5\n")
    flow = Flow("tagging")
    get = flow.add(GetFile(input_directory=str(source), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    tag = flow.add(processor, name="tag")
    flow.connect(get, split)
    flow.connect(split, tag, "splits")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(tag, list(processor.relationship_names()))
    result = run_flow(flow, "direct", repository=root / "repo", settings=_ENGINE)
    repos = RepositorySet.open(root / "repo")
    try:
        state = dict(repos.flowfiles.state(tag.id))
        events = sorted(  # a clone's uuid (its events name all its attributes) is its own
            (
                e.event_type.value,
                tuple(
                    sorted(
                        (k, v)
                        for k, v in e.updated_attributes.items()
                        if (k, v) != ("uuid", e.flowfile_uuid) and k != "file.lastAccessTime"
                    )
                ),
            )
            for e in repos.provenance.search(limit=1_000)
            if e.component_name == "tag" and e.event_type.value != "DROP"
        )
    finally:
        repos.close()
    return state, events, dict(result.transfers)


@pytest.mark.parametrize("policy", ["USE_CLONE", "USE_ORIGINAL"])
def test_rules_and_state_in_the_engine_agree_with_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, policy: str
) -> None:
    """In a flow, the batch form gives the state, events and transfers of on_trigger alone.
    Under USE_CLONE a.txt's first line matches two rules, so its batch goes one by one, and
    b.txt's batch behind it goes one by one too (a batch never overtakes FlowFiles waiting one
    by one): the state it leaves is b.txt's."""

    def processor() -> UpdateAttribute:
        return UpdateAttribute(
            rules=[Rule("one", [_TWICE], {"r": "1"}), Rule("two", [_TWICE], {"r": "2"})],
            flowfile_policy=policy,
            **STATEFUL,
            **{"Stateful Variables Initial Value": "", "last": "${filename}-${fragment.index}"},
        )

    taken: list[bool] = []
    real = UpdateAttribute.transform_batch

    def spying(self: UpdateAttribute, context: object, batch: FlowFileBatch) -> object:
        result = real(self, context, batch)  # type: ignore[arg-type]
        taken.append(result is not None)
        return result

    monkeypatch.setattr(UpdateAttribute, "transform_batch", spying)
    whole = _engine_run(tmp_path / "whole", processor())
    monkeypatch.setattr(UpdateAttribute, "transform_batch", lambda *_: None)
    single = _engine_run(tmp_path / "single", processor())
    assert whole == single
    assert whole[0] == {"last": "b.txt-2", "r": "2"}
    assert taken == ([False] if policy == "USE_CLONE" else [True, True])


def test_without_state_update_attribute_runs_in_parallel() -> None:
    """Only storing state makes UpdateAttribute serial; otherwise its stage runs in parallel."""
    assert not UpdateAttribute(tag="x").runs_serially()
    assert UpdateAttribute(**STATEFUL, tag="x").runs_serially()
