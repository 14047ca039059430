"""Tests for a repository's flow, and the identity of its queues and state across edits."""

from __future__ import annotations

import hashlib
import json
from contextlib import closing
from pathlib import Path

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcore import Flow
from flowcore.driver.controller import RunResult, run_flow
from flowcore.driver.identity import (
    IDENTITY_KEY,
    FlowRecord,
    adopt_repository,
    claim_repository,
    read_record,
)
from flowcore.errors import FlowDefinitionError, FlowIdentityError
from flowcore.flowfile import FlowFile
from flowcore.parameters import Parameter
from flowcore.services import MapCacheService
from flowcore.settings import Settings
from processors import (
    DetectDuplicate,
    GenerateFlowFile,
    GetFile,
    LogAttribute,
    PutEmail,
    PutFile,
    SplitText,
    UpdateAttribute,
)
from repositories.flowfile_wal import WriteAheadFlowFileRepository
from repositories.records import Transaction
from repositories.repository_set import RepositorySet
from tests.flowcore.driver._controller_runs import Explode

SETTINGS = Settings(sync=False)


def _files(directory: Path) -> dict[str, str]:
    return (
        {p.name: p.read_text() for p in sorted(directory.iterdir())} if directory.exists() else {}
    )


def _copy_flow(name: str, inputs: Path, out: Path, *, get_name: str = "get") -> Flow:
    flow = Flow(name)
    get = flow.add(GetFile(input_directory=str(inputs), keep_source_file=True), name=get_name)
    put = flow.add(PutFile(directory=str(out)), name="put")
    flow.connect(get, put)
    flow.auto_terminate(put, ["success", "failure"])
    return flow


def test_another_flow_on_a_repository_is_refused_naming_both_and_the_way_out(
    tmp_path: Path,
) -> None:
    """Flow B on flow A's repository: refused before anything runs; A's state is untouched."""
    inputs, repository = tmp_path / "in", tmp_path / "repo"
    inputs.mkdir()
    (inputs / "a.txt").write_text("a")
    run_flow(_copy_flow("A", inputs, tmp_path / "out-a"), "direct", repository=repository)
    with pytest.raises(FlowIdentityError) as refused:
        run_flow(_copy_flow("B", inputs, tmp_path / "out-b"), "direct", repository=repository)
    message = str(refused.value)
    assert "belongs to flow 'A', not 'B'" in message
    assert "--repository" in message
    assert "flowcore adopt" in message
    assert "\n" not in message
    assert not (tmp_path / "out-b").exists()  # B wrote nothing, and did not inherit A's state
    result = run_flow(
        _copy_flow("B", inputs, tmp_path / "out-b"), "direct", repository=tmp_path / "repo-b"
    )
    assert _files(tmp_path / "out-b") == {"a.txt": "a"}
    assert result.finished


def test_a_renamed_component_keeps_its_state(tmp_path: Path) -> None:
    """GetFile renamed between runs (same properties) keeps its listing: nothing is read twice."""
    inputs, repository, out = tmp_path / "in", tmp_path / "repo", tmp_path / "out"
    inputs.mkdir()
    (inputs / "a.txt").write_text("a")
    run_flow(_copy_flow("f", inputs, out), "direct", repository=repository, settings=SETTINGS)
    (out / "a.txt").unlink()
    renamed = _copy_flow("f", inputs, out, get_name="fetch-logs")
    result = run_flow(renamed, "direct", repository=repository, settings=SETTINGS)
    assert _files(out) == {}  # a.txt was listed under the old name: not read again
    assert result.transfers.get("fetch-logs", {}).get("success") is None
    assert result.renamed == {"get": "fetch-logs"}
    assert "renamed: get -> fetch-logs (its state and queues kept)" in result.summary()
    with closing(RepositorySet.open(repository)) as repos:
        record = read_record(repos.flowfiles)
    assert record is not None
    assert record.components["get"][0] == "fetch-logs"  # the old id, the new name


def test_a_rename_that_changes_properties_starts_fresh_unless_the_id_is_kept(
    tmp_path: Path,
) -> None:
    """Renamed and reconfigured: a new component, unless ``id=`` names the old one."""
    inputs, repository, out = tmp_path / "in", tmp_path / "repo", tmp_path / "out"
    inputs.mkdir()
    (inputs / "a.txt").write_text("a")
    run_flow(_copy_flow("f", inputs, out), "direct", repository=repository, settings=SETTINGS)
    (out / "a.txt").unlink()

    def changed(name: str, batch_size: int, id: str | None = None) -> Flow:
        flow = Flow("f")
        get = flow.add(
            GetFile(input_directory=str(inputs), keep_source_file=True, batch_size=batch_size),
            name=name,
            id=id,
        )
        put = flow.add(PutFile(directory=str(out)), name="put")
        flow.connect(get, put)
        flow.auto_terminate(put, ["success", "failure"])
        return flow

    run_flow(changed("fetch", 5), "direct", repository=repository, settings=SETTINGS)
    assert _files(out) == {"a.txt": "a"}  # a new component: it lists afresh
    (out / "a.txt").unlink()
    run_flow(changed("fetch-2", 6, id="fetch"), "direct", repository=repository, settings=SETTINGS)
    assert _files(out) == {}  # id="fetch" kept fetch's listing through the rename and change


def _stuck_flow(order: list[int]) -> Flow:
    """gen -> boom (fails, so FlowFiles stay queued) and gen -> log, connected in *order*."""
    flow = Flow("stuck")
    gen = flow.add(GenerateFlowFile(custom_text="x"), name="gen")
    tag = flow.add(UpdateAttribute(k="v"), name="tag")
    boom = flow.add(Explode(), name="boom")
    log = flow.add(LogAttribute(), name="log")
    links = [(gen, tag, {}), (tag, boom, {"durable": True}), (tag, log, {"durable": True})]
    for index in order:
        source, destination, options = links[index]
        flow.connect(source, destination, **options)
    flow.auto_terminate(boom, "success")
    flow.auto_terminate(log, "success")
    return flow


def test_connect_calls_in_another_order_keep_every_queue_on_its_connection(
    tmp_path: Path,
) -> None:
    """FlowFiles queued for 'boom' stay boom's when the flow's connect() calls are reordered."""
    repository = tmp_path / "repo"
    first = run_flow(_stuck_flow([0, 1, 2]), "direct", repository=repository, settings=SETTINGS)
    assert list(first.queued) == ["tag -[success]-> boom"]
    second = run_flow(_stuck_flow([2, 1, 0]), "direct", repository=repository, settings=SETTINGS)
    assert list(second.queued) == ["tag -[success]-> boom"]
    assert second.transfers["log"]["success"][0] == 1  # log got only the new FlowFile
    with closing(RepositorySet.open(repository)) as repos:
        queues = {q: repos.flowfiles.queue_size(q)[0] for q in repos.flowfiles.queue_ids()}
    assert queues == {"tag:success->boom": 2}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.permutations([0, 1, 2]))
def test_ids_do_not_depend_on_the_order_of_connect_calls(order: list[int]) -> None:
    """Any order of the same connect() calls gives the same connection ids."""
    assert {c.id for c in _stuck_flow(order).connections} == {
        c.id for c in _stuck_flow([0, 1, 2]).connections
    }


def test_a_removed_connection_holding_flowfiles_refuses_the_run_and_names_it(
    tmp_path: Path,
) -> None:
    """The queue is named by its endpoints and count; nothing is re-attached; adopt drops it."""
    repository = tmp_path / "repo"
    run_flow(_stuck_flow([0, 1, 2]), "direct", repository=repository, settings=SETTINGS)
    edited = Flow("stuck")
    gen = edited.add(GenerateFlowFile(custom_text="x"), name="gen")
    tag = edited.add(UpdateAttribute(k="v"), name="tag")
    log = edited.add(LogAttribute(), name="log")
    edited.connect(gen, tag)
    edited.connect(tag, log, durable=True)
    edited.auto_terminate(log, "success")
    with pytest.raises(FlowIdentityError) as refused:
        run_flow(edited, "direct", repository=repository, settings=SETTINGS)
    message = str(refused.value)
    assert "tag -[success]-> boom holds 1 FlowFile(s)" in message
    assert "add back 'boom'" in message
    assert "--drop-orphaned" in message
    with closing(RepositorySet.open(repository)) as repos:  # nothing changed, nothing moved
        assert repos.flowfiles.queue_size("tag:success->boom")[0] == 1
        assert repos.flowfiles.queue_size("tag:success->log")[0] == 0
        with pytest.raises(FlowIdentityError):
            adopt_repository(edited, repos.flowfiles, repository)
        before, dropped = adopt_repository(edited, repos.flowfiles, repository, drop_orphaned=True)
        assert before == "stuck"
        assert [(o.label, o.count) for o in dropped] == [("tag -[success]-> boom", 1)]
    result = run_flow(edited, "direct", repository=repository, settings=SETTINGS)
    assert result.finished


def test_a_changed_connection_offers_its_id_and_the_id_carries_the_queue(tmp_path: Path) -> None:
    """Relationships changed on a connection holding FlowFiles: id= of the old one carries them."""
    repository = tmp_path / "repo"

    def split_flow(relationships: list[str], id: str | None = None) -> Flow:
        flow = Flow("split")
        gen = flow.add(GenerateFlowFile(custom_text="a\nb"), name="gen")
        split = flow.add(SplitText(line_split_count=1), name="split")
        boom = flow.add(Explode(), name="boom")
        flow.connect(gen, split)
        flow.connect(split, boom, relationships, durable=True, id=id)
        for relationship in {"splits", "original", "failure"} - set(relationships):
            flow.auto_terminate(split, relationship)
        flow.auto_terminate(boom, "success")
        return flow

    first = run_flow(split_flow(["splits"]), "direct", repository=repository, settings=SETTINGS)
    assert first.queued == {"split -[splits]-> boom": (2, 2)}
    with pytest.raises(FlowIdentityError, match=r"id='split:splits->boom' to carry"):
        run_flow(split_flow(["splits", "failure"]), "direct", repository=repository)
    carried = split_flow(["splits", "failure"], id="split:splits->boom")
    result = run_flow(carried, "direct", repository=repository, settings=SETTINGS)
    assert result.queued == {"split -[splits,failure]-> boom": (4, 4)}


def test_claim_records_the_flow_once_and_reads_it_back(tmp_path: Path) -> None:
    """The record is a state entry of the log: written when it changes, read after a restart."""
    flow = _stuck_flow([0, 1, 2])
    with WriteAheadFlowFileRepository(tmp_path / "wal", sync=False) as wal:
        claimed, renamed = claim_repository(flow, wal, tmp_path)
        assert claimed is flow
        assert renamed == {}
        assert read_record(wal) == FlowRecord.of(flow)
        assert claim_repository(flow, wal, tmp_path) == (flow, {})
    with WriteAheadFlowFileRepository(tmp_path / "wal", sync=False) as wal:
        assert read_record(wal) == FlowRecord.of(flow)
        assert set(wal.state(IDENTITY_KEY)) == {
            "version",
            "flow",
            "components",
            "connections",
            "services",
        }


def test_a_queue_of_an_older_repository_without_a_record_is_named_with_its_way_out(
    tmp_path: Path,
) -> None:
    """A numbered queue id from before stable ids: refused, naming the id to give or to drop."""
    repository = tmp_path / "repo"
    with closing(RepositorySet.open(repository)) as repos:
        wal = repos.flowfiles
        summary = wal.write_segment("connection-2", [FlowFile.create(1, 0, {"filename": "x"})])
        wal.commit(Transaction(enqueued=[summary]))
    with pytest.raises(FlowIdentityError) as refused:
        run_flow(_stuck_flow([0, 1, 2]), "direct", repository=repository, settings=SETTINGS)
    message = str(refused.value)
    assert "connection-2 holds 1 FlowFile(s)" in message
    assert "id='connection-2'" in message
    assert "--drop-orphaned" in message


def _get_put(name: str, inputs: Path, out: Path, *, get_name: str, batch_size: int = 10) -> Flow:
    flow = Flow(name)
    get = flow.add(
        GetFile(input_directory=str(inputs), keep_source_file=True, batch_size=batch_size),
        name=get_name,
    )
    put = flow.add(PutFile(directory=str(out)), name="put")
    flow.connect(get, put)
    flow.auto_terminate(put, ["success", "failure"])
    return flow


def test_a_renamed_component_keeps_its_id_through_later_edits(tmp_path: Path) -> None:
    """Renamed once, then reconfigured: still the same component (its name is recorded now),
    reported renamed once; a new component given the old name starts fresh."""
    inputs, repository, out = tmp_path / "in", tmp_path / "repo", tmp_path / "out"
    inputs.mkdir()
    (inputs / "a.txt").write_text("a")

    def run(flow: Flow) -> RunResult:
        return run_flow(flow, "direct", repository=repository, settings=SETTINGS)

    run(_get_put("f", inputs, out, get_name="get"))
    (out / "a.txt").unlink()
    assert run(_get_put("f", inputs, out, get_name="ingest")).renamed == {"get": "ingest"}
    again = run(_get_put("f", inputs, out, get_name="ingest", batch_size=5))
    assert again.renamed == {}
    assert _files(out) == {}  # still get's listing: nothing read again
    (inputs / "b.txt").write_text("b")
    second = Flow("f")  # 'ingest' stays, and a new GetFile takes the name 'get'
    ingest = second.add(
        GetFile(input_directory=str(inputs), keep_source_file=True, batch_size=5),
        name="ingest",
    )
    fresh = second.add(GetFile(input_directory=str(inputs), keep_source_file=True), name="get")
    put = second.add(
        PutFile(directory=str(out), conflict_resolution_strategy="replace"), name="put"
    )
    second.connect(ingest, put)
    second.connect(fresh, put)
    second.auto_terminate(put, ["success", "failure"])
    result = run(second)
    assert result.transfers["get"]["success"][0] == 2  # new: it lists both files afresh
    assert result.transfers["ingest"]["success"][0] == 1  # only b.txt is new to it


def test_unnamed_components_of_one_class_keep_their_state_when_reordered(tmp_path: Path) -> None:
    """Two unnamed GetFiles added in the other order swap default names, not identities."""
    repository, out = tmp_path / "repo", tmp_path / "out"
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{name}.txt").write_text(name)

    def flow(order: list[str]) -> Flow:
        built = Flow("two")
        put = built.add(PutFile(directory=str(out)), name="put")
        for name in order:
            get = built.add(GetFile(input_directory=str(tmp_path / name), keep_source_file=True))
            built.connect(get, put)
        built.auto_terminate(put, ["success", "failure"])
        return built

    run_flow(flow(["a", "b"]), "direct", repository=repository, settings=SETTINGS)
    assert sorted(_files(out)) == ["a.txt", "b.txt"]
    for path in out.iterdir():
        path.unlink()
    run_flow(flow(["b", "a"]), "direct", repository=repository, settings=SETTINGS)
    assert _files(out) == {}  # neither file is read again


def test_writing_a_default_out_is_no_change_of_properties(tmp_path: Path) -> None:
    """GetFile(batch_size=10) is GetFile(): a rename that spells out a default keeps state."""
    inputs, repository, out = tmp_path / "in", tmp_path / "repo", tmp_path / "out"
    inputs.mkdir()
    (inputs / "a.txt").write_text("a")
    run_flow(_copy_flow("f", inputs, out), "direct", repository=repository, settings=SETTINGS)
    (out / "a.txt").unlink()
    spelled = _get_put("f", inputs, out, get_name="fetch", batch_size=10)
    result = run_flow(spelled, "direct", repository=repository, settings=SETTINGS)
    assert result.renamed == {"get": "fetch"}
    assert _files(out) == {}


def test_adopt_drops_only_the_queues_the_refusal_named_and_keeps_renames(
    tmp_path: Path,
) -> None:
    """boom renamed and 'other' removed: the refusal names other's queue; adopt drops it alone."""
    repository = tmp_path / "repo"

    def flow(boom_name: str, *, with_other: bool) -> Flow:
        built = Flow("stuck")
        gen = built.add(GenerateFlowFile(custom_text="x"), name="gen")
        tag = built.add(UpdateAttribute(k="v"), name="tag")
        boom = built.add(Explode(), name=boom_name)
        built.connect(gen, tag)
        built.connect(tag, boom, durable=True)
        built.auto_terminate(boom, "success")
        if with_other:
            other = built.add(LogAttribute(), name="other", disabled=True)
            built.connect(tag, other, durable=True)
            built.auto_terminate(other, "success")
        return built

    run_flow(flow("boom", with_other=True), "direct", repository=repository, settings=SETTINGS)
    edited = flow("kaboom", with_other=False)
    with pytest.raises(FlowIdentityError) as refused:
        run_flow(edited, "direct", repository=repository, settings=SETTINGS)
    assert "tag -[success]-> other holds 1 FlowFile(s)" in str(refused.value)
    assert "boom holds" not in str(refused.value)
    with closing(RepositorySet.open(repository)) as repos:
        _, dropped = adopt_repository(edited, repos.flowfiles, repository, drop_orphaned=True)
    assert [o.label for o in dropped] == ["tag -[success]-> other"]
    result = run_flow(edited, "direct", repository=repository, settings=SETTINGS)
    assert result.queued == {"tag -[success]-> kaboom": (2, 2)}  # boom's, and a new one


@pytest.mark.parametrize("name", ["$provenance", "$effects", "service:dedupe", "park", "park:x"])
def test_names_that_would_be_taken_for_the_repositorys_own_keys_are_refused(name: str) -> None:
    """A component named like the log's own state or park queues is refused at add()."""
    flow = Flow("f")
    with pytest.raises(FlowDefinitionError, match="kept for flowcore's own keys"):
        flow.add(GenerateFlowFile(), name=name)
    flow.add(GenerateFlowFile(), name=name, id="gen")  # an id= of its own is the way out


def test_a_hash_in_names_does_not_make_ids_depend_on_order() -> None:
    """'a' and 'a#2' connected from one source, in either order: the same ids, no refusal."""

    def build(order: list[str]) -> set[str]:
        flow = Flow("h")
        gen = flow.add(GenerateFlowFile(), name="gen")
        made = {n: flow.add(LogAttribute(), name=n) for n in order}
        for name in order:
            flow.connect(gen, made[name])
        return {c.id for c in flow.connections}

    assert build(["a", "a#2"]) == build(["a#2", "a"]) == {"gen:success->a", "gen:success->a#2"}


def _dedupe_flow(service: str) -> Flow:
    flow = Flow("dedupe")
    flow.add_service(MapCacheService(service))
    gen = flow.add(GenerateFlowFile(custom_text="x"), name="gen")
    dedupe = flow.add(
        DetectDuplicate(cache_entry_identifier="same", distributed_cache_service=service),
        name="dedupe",
    )
    flow.connect(gen, dedupe)
    flow.auto_terminate(dedupe, ["duplicate", "non-duplicate", "failure"])
    return flow


def test_a_renamed_map_cache_service_keeps_its_entries(tmp_path: Path) -> None:
    """The cache DetectDuplicate filled survives a rename of its service: no duplicate passes."""
    repository = tmp_path / "repo"
    first = run_flow(_dedupe_flow("seen"), "direct", repository=repository, settings=SETTINGS)
    assert first.transfers["dedupe"] == {"non-duplicate": (1, 1)}
    second = run_flow(_dedupe_flow("orders seen"), "direct", repository=repository)
    assert second.renamed == {"service seen": "service orders seen"}
    assert second.transfers["dedupe"] == {"duplicate": (1, 1)}


def test_a_secret_never_enters_the_recorded_fingerprint() -> None:
    """A sensitive value counts only as set: two secrets give one fingerprint, unset another."""

    def recorded(**password: str) -> str:
        flow = Flow("secret")
        flow.add(PutEmail(smtp_hostname="h", **password), name="mail")
        ((_, _, fingerprint),) = FlowRecord.of(flow).components.values()
        return fingerprint

    assert recorded(smtp_password="pw-one") == recorded(smtp_password="pw-two")
    assert recorded(smtp_password="pw-one") != recorded()


def _mail_flow(name: str) -> Flow:
    flow = Flow(
        "secret", parameters={"pw": Parameter("pw", value_from_env="MAIL_PW", sensitive=True)}
    )
    flow.add(PutEmail(smtp_hostname="h", smtp_password="#{pw}"), name=name)
    return flow


def test_a_rename_in_the_same_edit_as_the_upgrade_to_masked_fingerprints_is_found(
    tmp_path: Path,
) -> None:
    """A record made before sensitive values were masked (values as written) still finds a
    component with a sensitive property renamed since: it keeps its id."""
    old = _mail_flow("mail")
    (
        (
            rid,
            (name, type_name, _),
        ),
    ) = FlowRecord.of(old).components.items()
    processor = old.component("mail").processor
    assert processor is not None
    values = {d.name: d.default for d in processor.descriptors() if d.default is not None}
    values.update(processor.raw_configured)  # as flowcore wrote fingerprints before masking
    text = json.dumps([type_name, sorted(values.items())], sort_keys=True)
    legacy = hashlib.sha256(text.encode()).hexdigest()[:32]
    record = attrs.evolve(FlowRecord.of(old), components={rid: (name, type_name, legacy)})
    with WriteAheadFlowFileRepository(tmp_path / "wal", sync=False) as wal:
        wal.commit(Transaction(state={IDENTITY_KEY: record.to_state()}))
        claimed, renamed = claim_repository(_mail_flow("mailer"), wal, tmp_path)
        assert renamed == {"mail": "mailer"}
        assert claimed.component("mailer").id == rid
        assert read_record(wal) == FlowRecord.of(claimed)  # the masked fingerprint from now on


def test_another_flows_repository_is_refused_before_the_runner_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The owner is checked before Spark starts: a refused run said so only after the ~14 s a
    session takes to start."""
    import flowcore.runners

    inputs, repository = tmp_path / "in", tmp_path / "repo"
    inputs.mkdir()
    run_flow(_copy_flow("A", inputs, tmp_path / "out-a"), "direct", repository=repository)

    def no_runner(*args: object, **kwargs: object) -> None:
        msg = "the runner must not start for a refused repository"
        raise AssertionError(msg)

    monkeypatch.setattr(flowcore.runners, "make_runner", no_runner)
    with pytest.raises(FlowIdentityError, match="belongs to flow 'A', not 'B'"):
        run_flow(_copy_flow("B", inputs, tmp_path / "out-b"), "spark", repository=repository)
    monkeypatch.undo()
    run_flow(_copy_flow("A", inputs, tmp_path / "out-a"), "direct", repository=repository)
