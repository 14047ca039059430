"""The path of data through the code: modules and module-to-module calls of the README's flow.

Issue 34 counts how many of flowcore's modules one batch passes through on its way along the
README's flow (GetFile -> SplitText (one line) -> UpdateAttribute -> MergeContent -> PutFile),
and how many hops between them it takes. This runs that flow once on the direct runner under
a profiler hook and prints, for the stage runs' tasks only (``run_task`` and below, where the
data moves): the modules of ``flowcore``, ``processors`` and ``repositories`` that ran, and the
distinct caller -> callee module pairs among them (a hop is one such pair, however often it is
taken). Run it from another tree (``PYTHONPATH=OTHER python OTHER/bench/call_path.py``) for a
before/after figure: the count is of code structure, not of time, so one run suffices.

    .venv/bin/python bench/call_path.py [--lines N]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # before bench/'s repositories.py

OURS = ("flowcore", "processors", "repositories")


def _module_of(frame: object) -> str | None:
    name = frame.f_globals.get("__name__", "")  # type: ignore[attr-defined]
    return name if name.split(".")[0] in OURS else None


def main() -> None:
    """Run the flow under the hook; print the JSON figures and a short table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2_000)
    args = parser.parse_args()

    from flowcore import Flow
    from flowcore.driver.controller import run_flow
    from flowcore.settings import Settings
    from processors import GetFile, MergeContent, PutFile, SplitText, UpdateAttribute

    root = Path(tempfile.mkdtemp(prefix="call-path-"))
    (root / "in").mkdir()
    (root / "in" / "a.log").write_bytes(b"".join(b"line %d\n" % i for i in range(args.lines)))
    flow = Flow("web-logs")
    get = flow.add(GetFile(input_directory=str(root / "in")), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    tag = flow.add(UpdateAttribute(source="web"), name="tag")
    merge = flow.add(MergeContent(minimum_number_of_entries=10), name="merge")
    put = flow.add(PutFile(directory=str(root / "out")), name="put")
    flow.connect(get, split)
    flow.connect(split, tag, "splits")
    flow.connect(tag, merge)
    flow.connect(merge, put, "merged")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])

    modules: set[str] = set()
    hops: set[tuple[str, str]] = set()
    depth = [0]  # > 0 inside a task

    def hook(frame, event, arg):  # type: ignore[no-untyped-def]
        del arg
        if event != "call":
            if event == "return" and frame.f_code.co_name == "run_task" and depth[0]:
                depth[0] -= 1
            return
        if frame.f_code.co_name == "run_task":
            depth[0] += 1
        if not depth[0]:
            return
        callee = _module_of(frame)
        if callee is None:
            return
        modules.add(callee)
        caller = frame.f_back
        while caller is not None and _module_of(caller) is None:
            caller = caller.f_back  # through the standard library and numpy, to our caller
        if caller is not None and (source := _module_of(caller)) != callee:
            hops.add((source, callee))

    settings = Settings(sync=False, parallelism=1, driver_run_max_flowfiles=0)
    sys.setprofile(hook)
    try:
        run_flow(flow, "direct", repository=root / "repo", settings=settings)
    finally:
        sys.setprofile(None)
    figures = {
        "modules": len(modules),
        "hops": len(hops),
        "engine_session_testing_modules": sum(
            m.startswith(("flowcore.engine", "flowcore.session", "flowcore.testing"))
            for m in modules
        ),
        "module_list": sorted(modules),
    }
    print(json.dumps(figures))
    print(f"{'modules a task runs':<28}{figures['modules']:>6}")
    print(f"{'module-to-module hops':<28}{figures['hops']:>6}")


if __name__ == "__main__":
    main()
