"""Tests for flowcore/driver/sources.py: listing sources' work per micro-batch, and settling it."""

from __future__ import annotations

from pathlib import Path

import attrs

from flowcore.builder import Flow
from flowcore.driver.controller import Controller, run_flow
from flowcore.driver.sources import MAX_SOURCE_TRIGGERS
from flowcore.runners.direct import DirectRunner
from flowcore.settings import Settings
from processors import GenerateFlowFile, GetFile, UpdateAttribute
from repositories.repository_set import RepositorySet, read_bulletins


def _flow(inputs: Path) -> Flow:
    flow = Flow("listing")
    get = flow.add(GetFile(input_directory=str(inputs), keep_source_file=True), name="get")
    tag = flow.add(UpdateAttribute(k="v"), name="tag")
    flow.connect(get, tag)
    flow.auto_terminate(tag, "success")
    return flow


def test_a_source_lists_until_exhausted_then_is_no_longer_active(tmp_path: Path) -> None:
    """One micro-batch lists every file: GetFile fills it, triggered until a listing comes back
    empty. The source is then inactive for the rest of a batch run, so a later micro-batch lists
    nothing; a continuous run keeps polling it."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    for name in ("a", "b", "c"):
        (inputs / name).write_text(name)
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        controller = Controller(_flow(inputs), DirectRunner(), repos, Settings(sync=False))
        plan = next(p for p in controller.plans.values() if p.source_members)
        member = plan.source_members[0]
        lister = controller.sources
        work, states = lister.list_work(plan, False, (100, 100))
        assert sorted(item.key.rsplit("/", 1)[-1] for _, item in work) == ["a", "b", "c"]
        assert member.component_id in states  # the listing state, for the commit
        assert not lister.active(member, False)
        assert lister.active(member, True)
        assert lister.list_work(plan, False, (100, 100)) == ([], {})
    finally:
        repos.close()


class UnmountedGet(GetFile):
    """GetFile whose on_scheduled raises while the file ``down`` beside its input exists."""

    def on_scheduled(self, context):  # type: ignore[no-untyped-def]
        directory = context.get_property(self.DIRECTORY).value
        if (Path(directory).parent / "down").exists():
            msg = "the share is not mounted"
            raise PermissionError(msg)
        super().on_scheduled(context)


def _two_sources(inputs: Path) -> Flow:
    flow = Flow("two-sources")
    get = flow.add(UnmountedGet(input_directory=str(inputs), keep_source_file=True), name="get")
    gen = flow.add(GenerateFlowFile(), name="gen")
    tag = flow.add(UpdateAttribute(k="v"), name="tag")
    flow.connect(get, tag)
    flow.connect(gen, tag)
    flow.auto_terminate(tag, "success")
    return flow


def test_a_source_whose_on_scheduled_raises_lists_nothing_and_the_run_says_so(
    tmp_path: Path,
) -> None:
    """On the driver, as NiFi: an ERROR bulletin, the source lists nothing, the other source
    runs; the batch run is not finished and names the failure; a later run lists the files."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "a").write_text("a")
    (tmp_path / "down").touch()
    settings = Settings(sync=False, parallelism=1)
    result = run_flow(
        _two_sources(inputs), "direct", repository=tmp_path / "repo", settings=settings
    )
    assert result.count("tag", "success") == 1  # gen's
    assert not result.finished
    assert result.unscheduled == {
        "get": "on_scheduled raised PermissionError: the share is not mounted"
    }
    [bulletin] = read_bulletins(tmp_path / "repo")
    assert bulletin.component_name == "get"
    assert bulletin.level == "ERROR"
    assert "administrative yield duration (30 sec)" in bulletin.message
    (tmp_path / "down").unlink()
    again = run_flow(
        _two_sources(inputs), "direct", repository=tmp_path / "repo", settings=settings
    )
    assert again.count("tag", "success") == 2
    assert again.finished


def _listed_keys(
    inputs: Path, source: GetFile, room: tuple[int, int], **settings: str
) -> list[str]:
    """The file names one micro-batch lists from *source* (in a GetFile -> UpdateAttribute flow)."""
    flow = Flow("filling")
    get = flow.add(source, name="get")
    tag = flow.add(UpdateAttribute(k="v"), name="tag")
    flow.connect(get, tag)
    flow.auto_terminate(tag, "success")
    repos = RepositorySet.open(inputs.parent / "repo")
    try:
        controller = Controller(flow, DirectRunner(), repos, Settings(sync=False, **settings))
        plan = next(p for p in controller.plans.values() if p.source_members)
        work, _ = controller.sources.list_work(plan, False, room)
        return [item.key.rsplit("/", 1)[-1] for _, item in work]
    finally:
        repos.close()


def test_a_filling_source_hands_out_its_listing_past_the_trigger_cap_within_the_budgets(
    tmp_path: Path,
) -> None:
    """GetFile at Batch Size 1 over 100 files fills one micro-batch (past MAX_SOURCE_TRIGGERS
    triggers), as far as the room left by back pressure and the micro-batch's byte budget."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    for number in range(100):
        (inputs / f"f{number:03d}").write_text("x")

    def get() -> GetFile:
        return GetFile(input_directory=str(inputs), keep_source_file=True, batch_size=1)

    assert MAX_SOURCE_TRIGGERS < 100
    assert _listed_keys(inputs, get(), (1000, 1000)) == [f"f{n:03d}" for n in range(100)]
    assert len(_listed_keys(inputs, get(), (80, 80))) == 80  # back pressure's room
    assert len(_listed_keys(inputs, get(), (1000, 1000), batch_max_bytes="70 B")) == 70


class ArrivingGet(GetFile):
    """GetFile over a directory where five new files arrive before each listing."""

    listings = 0

    def _list(self, context, root):  # type: ignore[no-untyped-def]
        for number in range(5):
            (root / f"f{ArrivingGet.listings * 5 + number:03d}").write_text("x")
        ArrivingGet.listings += 1
        return super()._list(context, root)


def test_past_the_trigger_cap_a_filling_source_does_not_list_anew(tmp_path: Path) -> None:
    """Past MAX_SOURCE_TRIGGERS triggers a filling source only hands out what it had listed: a
    directory that keeps getting files cannot hold a micro-batch open."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    ArrivingGet.listings = 0
    source = ArrivingGet(input_directory=str(inputs), keep_source_file=True, batch_size=1)
    keys = _listed_keys(inputs, source, (1000, 1000))
    # 64 triggers take 13 listings of 5 files; the last listing's 65th file is handed out too
    assert MAX_SOURCE_TRIGGERS == 64
    assert (len(keys), ArrivingGet.listings) == (65, 13)


class TenEachGet(GetFile):
    """GetFile whose work items each make ten FlowFiles, as a ConsumeKafka range makes many
    (its ``pending_work`` still counts work items: files)."""

    def list_work(self, context, state):  # type: ignore[no-untyped-def]
        listing = super().list_work(context, state)
        items = tuple(attrs.evolve(item, flowfiles=10) for item in listing.items)
        return attrs.evolve(listing, items=items)


def test_past_the_trigger_cap_items_left_count_as_the_flowfiles_they_make(tmp_path: Path) -> None:
    """Past MAX_SOURCE_TRIGGERS a source whose items each make ten FlowFiles hands out all it
    had listed (its items left count as ten FlowFiles each, as the items handed out did), not
    just four more items (items left added to FlowFiles made)."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    for number in range(100):
        (inputs / f"f{number:03d}").write_text("x")
    source = TenEachGet(input_directory=str(inputs), keep_source_file=True, batch_size=1)
    assert MAX_SOURCE_TRIGGERS < 100
    keys = _listed_keys(inputs, source, (10_000, 10_000))
    assert keys == [f"f{n:03d}" for n in range(100)]


class CountingGet(GetFile):
    """GetFile that remembers the items ``after_commit`` was given, on the driver."""

    committed: list[str] = []

    def after_commit(self, context, items):  # type: ignore[no-untyped-def]
        del context
        type(self).committed.extend(item.key.rsplit("/", 1)[-1] for item in items)


def test_after_commit_gets_the_items_a_stage_run_committed(tmp_path: Path) -> None:
    """After the stage run's commit, the driver hands the source the items it committed."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    for name in ("a", "b"):
        (inputs / name).write_text(name)
    flow = Flow("committed")
    get = flow.add(CountingGet(input_directory=str(inputs), keep_source_file=True), name="get")
    flow.auto_terminate(get, "success")
    CountingGet.committed = []
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    assert result.count("get", "success") == 2
    assert sorted(CountingGet.committed) == ["a", "b"]


def test_a_source_lists_again_only_once_its_after_commit_actions_are_done(
    tmp_path: Path,
) -> None:
    """A source with an after-commit action still running (GetSFTP deleting what it pulled)
    waits for it before it lists: it could list the file again otherwise."""
    import threading

    from flowcore.session.host import AfterCommitAction

    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "a").write_text("a")
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        controller = Controller(_flow(inputs), DirectRunner(), repos, Settings(sync=False))
        plan = next(p for p in controller.plans.values() if p.source_members)
        member = plan.source_members[0]
        gate, seen = threading.Event(), []

        def remote(component_id: str, payloads: object) -> None:
            assert gate.wait(30)
            seen.append(component_id)

        actions = controller.sinks.actions
        actions._run = remote  # the remote work of this source: a slow delete
        actions.budget_seconds = 0
        actions.hand_over([AfterCommitAction(member.component_id, {"remote": "a"})])
        done_before_listing = []

        def list_work() -> None:
            work, _ = controller.sources.list_work(plan, False, (9, 9))
            done_before_listing.append((len(seen), len(work)))

        listing = threading.Thread(target=list_work)
        listing.start()
        listing.join(0.2)
        gate.set()
        listing.join(30)
        assert done_before_listing == [(1, 1)]  # the delete, then the listing
    finally:
        repos.close()


def test_a_source_whose_after_commit_action_hangs_skips_its_listing(tmp_path: Path) -> None:
    """The wait before listing is bounded (the after-commit budget): a delete that hangs does
    not hold the driver; the source does not list this time (it would list the file again)."""
    import threading

    from flowcore.session.host import AfterCommitAction

    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "a").write_text("a")
    repos = RepositorySet.open(tmp_path / "repo")
    gate = threading.Event()
    try:
        settings = Settings(sync=False, after_commit_budget="50 ms")
        controller = Controller(_flow(inputs), DirectRunner(), repos, settings)
        plan = next(p for p in controller.plans.values() if p.source_members)
        member = plan.source_members[0]
        actions = controller.sinks.actions
        actions._run = lambda component_id, payloads: gate.wait(30)  # a delete that hangs
        actions.hand_over([AfterCommitAction(member.component_id, {"remote": "a"})])
        work, _ = controller.sources.list_work(plan, False, (9, 9))
        assert work == []
        gate.set()
        assert actions.wait_for(member.component_id, timeout=30)
        work, _ = controller.sources.list_work(plan, False, (9, 9))
        assert len(work) == 1
    finally:
        gate.set()
        repos.close()
