"""Split files into fragments and put them back together, byte for byte.

    GetFile -> SplitText (100 lines per split, newlines kept)
            -> UpdateAttribute (tags each fragment)
            -> MergeContent (Defragment: fragment.identifier / index / count)
            -> PutFile

SplitText writes NiFi's fragment attributes; MergeContent in Defragment mode waits until every
fragment of a file has arrived, orders them by ``fragment.index`` and rebuilds the file. The
output files equal the inputs. Run: ``python examples/defragment_roundtrip.py [WORKDIR]``.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import random
import shutil
import sys
from pathlib import Path

from flowcore import Flow
from processors import GetFile, MergeContent, PutFile, SplitText, UpdateAttribute

DATA = Path(os.environ.get("DEFRAGMENT_DATA", Path(__file__).resolve().parent / "defrag-data"))


def build_flow(data: Path) -> Flow:
    """The round trip over *data*/in, writing *data*/out."""
    flow = Flow("defragment-roundtrip")
    get = flow.add(GetFile(input_directory=str(data / "in"), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=100, remove_trailing_newlines=False), name="split")
    tag = flow.add(UpdateAttribute(stage="fragment"), name="tag")
    merge = flow.add(MergeContent(merge_strategy="Defragment"), name="merge")
    put = flow.add(
        PutFile(directory=str(data / "out"), conflict_resolution_strategy="replace"), name="put"
    )
    flow.connect(get, split)
    flow.connect(split, tag, "splits")
    flow.connect(tag, merge)
    flow.connect(merge, put, "merged")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    return flow


flow = build_flow(DATA)


def generate(directory: Path, files: int, seed: int = 11) -> None:
    """Text files of random lines (some long, some empty, one without a final newline)."""
    rng = random.Random(seed)
    directory.mkdir(parents=True, exist_ok=True)
    for number in range(files):
        lines = [
            "".join(rng.choices("abcdefghij ", k=rng.choice((0, 5, 40, 300))))
            for _ in range(rng.randint(50, 2_000))
        ]
        text = "\n".join(lines) + ("" if number == 0 else "\n")
        (directory / f"file-{number}.txt").write_text(text)


def main(argv: list[str] | None = None) -> None:
    """Generate, run, compare."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workdir", nargs="?", default=str(DATA))
    parser.add_argument("--runner", choices=("direct", "spark"), default="spark")
    parser.add_argument("--files", type=int, default=5)
    args = parser.parse_args(argv)
    workdir = Path(args.workdir).resolve()
    if workdir.exists():
        shutil.rmtree(workdir)
    generate(workdir / "in", args.files)
    result = build_flow(workdir).run(args.runner, repository=workdir / ".flowcore")
    print(result.summary())
    names = sorted(p.name for p in (workdir / "in").iterdir())
    _, mismatch, errors = filecmp.cmpfiles(workdir / "in", workdir / "out", names, shallow=False)
    if mismatch or errors:
        sys.exit(f"round trip changed {mismatch + errors}")
    print(f"{len(names)} files split, defragmented and written back byte for byte")


if __name__ == "__main__":
    main()
