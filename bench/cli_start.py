"""What a ``flowcore`` command costs to start: CPU seconds of one process, best of N.

The test suite starts hundreds of ``flowcore`` processes (every kill test restarts ``flowcore
run`` eight times or more), so each command's start is paid again and again. Each command here
runs in a fresh interpreter on a tiny flow (three 100-line files, GetFile -> SplitText ->
UpdateAttribute -> MergeContent -> PutFile on the direct runner) and is measured in CPU seconds
(user + system, from ``getrusage`` of the children), which a busy machine inflates far less
than wall time. The floor is the interpreter's own start (``python -c pass``).

With ``--baseline DIR`` (a checkout of another commit, e.g. ``git worktree add /tmp/base HEAD~3``,
bytecode compiled with ``python -m compileall -q flowcore processors repositories`` as
``make test`` does) each command also runs on that checkout's code, interleaved round by round.

Run: ``.venv/bin/python bench/cli_start.py [--repeat 7] [--baseline DIR]``; prints one JSON
line and a table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FLOW = """
from flowcore import Flow
from processors import GetFile, MergeContent, PutFile, SplitText, UpdateAttribute

flow = Flow("start")
get = flow.add(GetFile(input_directory="in", keep_source_file=True, batch_size=3), name="get")
split = flow.add(SplitText(line_split_count=20, remove_trailing_newlines=False), name="split")
tag = flow.add(UpdateAttribute(stage="x"), name="tag")
merge = flow.add(MergeContent(merge_strategy="Defragment"), name="merge")
put = flow.add(PutFile(directory="out", conflict_resolution_strategy="replace"), name="put")
flow.connect(get, split)
flow.connect(split, tag, "splits")
flow.connect(tag, merge)
flow.connect(merge, put, "merged")
flow.auto_terminate(split, ["original", "failure"])
flow.auto_terminate(merge, ["original", "failure"])
flow.auto_terminate(put, ["success", "failure"])
"""

RUN = ["run", "flow.py", "--runner", "direct", "--json"]

#: Each command, as the arguments after ``python -m flowcore`` (None: the interpreter alone).
COMMANDS: dict[str, list[str] | None] = {
    "python -c pass": None,
    "run (direct, tiny flow)": RUN,
    "status": ["status"],
    "provenance search": ["provenance", "search"],
    "dataset show": ["dataset", "show", "ds"],
    "processors": ["processors"],
    "explain": ["explain", "flow.py"],
    "--help": ["--help"],
}


def _cpu(command: list[str] | None, code: Path, workdir: Path) -> float:
    """CPU seconds (user + system) of one process running *command* on *code*'s checkout."""
    if command is not None and command[0] == "run":
        shutil.rmtree(workdir / ".flowcore", ignore_errors=True)
        shutil.rmtree(workdir / "out", ignore_errors=True)
    args = ["-c", "pass"] if command is None else ["-m", "flowcore", *command]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, *args],
        cwd=workdir,
        env={**os.environ, "PYTHONPATH": str(code), "COLUMNS": "100"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    """Time each command on this checkout (and on ``--baseline``), interleaved; print both."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--baseline", type=Path, help="another checkout to compare with")
    args = parser.parse_args()
    codes = {"this": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch)
        (workdir / "in").mkdir()
        for n in range(3):
            (workdir / "in" / f"f{n}.txt").write_text(f"{n} " + "\n".join(map(str, range(100))))
        (workdir / "flow.py").write_text(FLOW)
        subprocess.run(  # a repository for status and provenance to read
            [sys.executable, "-m", "flowcore", *RUN],
            cwd=workdir,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            check=True,
        )
        seconds: dict[str, dict[str, list[float]]] = {c: {k: [] for k in codes} for c in COMMANDS}
        for _ in range(args.repeat):
            for name, command in COMMANDS.items():
                for key, code in codes.items():
                    seconds[name][key].append(_cpu(command, code, workdir))
    best = {name: {key: min(v) for key, v in runs.items()} for name, runs in seconds.items()}
    spread = {
        name: {key: [round(min(v), 3), round(max(v), 3)] for key, v in runs.items()}
        for name, runs in seconds.items()
    }
    print(json.dumps({"bench": "cli_start", "repeat": args.repeat, "best_cpu_s": best,
                      "range_cpu_s": spread}))  # fmt: skip
    print(f"\n{'command':28s}" + "".join(f"{key + ' (best, range)':>28s}" for key in codes))
    for name in COMMANDS:
        cells = "".join(
            f"{best[name][key]:>10.2f} s ({spread[name][key][0]:.2f}-{spread[name][key][1]:.2f})"
            .rjust(28)
            for key in codes
        )  # fmt: skip
        print(f"{name:28s}{cells}")


if __name__ == "__main__":
    main()
