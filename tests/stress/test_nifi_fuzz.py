"""Mistyped, deep and oversized NiFi flow definitions: one line and exit 2 (or a flow), never a
traceback, and memory bounded by flowcore's limits rather than by the input.

The fuzz walks every key path of each sample definition (the example and the interop tests'
samples), one path per field of NiFi's schema (``processors[*].properties[*]`` is one field,
whichever processor or property holds it), and puts each of :data:`WRONG` there. Each mutation
is written to a file and loaded as ``flowcore run FLOW.json`` and ``flowcore explain`` load it
(:func:`flowcore.cli._common.load_flow`), the error mapped to a line as :func:`flowcore.cli.main`
maps it. A sample of them goes through the whole ``flowcore explain`` in-process, and a handful
through ``python -m flowcore explain`` in a subprocess.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcore.cli import main
from flowcore.cli._common import load_flow
from flowcore.errors import FlowcoreError, NiFiFormatError, NiFiImportError
from flowcore.nifi.formats import MAX_DEFINITION_BYTES
from flowcore.nifi.schema import MAX_DEPTH, json_path
from tests.flowcore.cli.conftest import run_flowcore

pytestmark = pytest.mark.stress

ROOT = Path(__file__).resolve().parents[2]


def _document(sample: Path) -> Any:
    data = sample.read_bytes()
    return json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)


EXAMPLE = ROOT / "examples" / "nifi_flow.json"

#: The JSON samples, smallest first: a field is mutated in the first that has it, the cheapest
#: to load. (The XML samples are NiFi 1.x's, read into these same fields: test_xml_*.)
SAMPLES = tuple(
    sorted(
        [
            EXAMPLE,
            *(
                p
                for p in (ROOT / "tests/flowcore/nifi/samples").iterdir()
                if ".xml" not in p.suffixes
            ),
        ],
        key=lambda sample: len(json.dumps(_document(sample))),
    )
)

#: What each field is replaced with: every JSON type, a huge string and a negative number.
WRONG: tuple[Any, ...] = (None, 7, "x", [], {}, True, "y" * 100_000, -1)

#: Fields whose keys are names (of properties, contexts ...): one key of each stands for all.
_MAPS = {"properties", "propertyDescriptors", "parameterContexts", "externalControllerServices"}


def _key_paths(value: Any, path: tuple = (), field: tuple = ()) -> Iterator[tuple[tuple, tuple]]:
    """Every (key path, schema field) below *value*: the field has ``#`` for list indexes and
    ``*`` for the keys of name-keyed maps."""
    if isinstance(value, dict):
        in_map = bool(field) and field[-1] in _MAPS
        for key, child in value.items():
            step = (*path, key), (*field, "*" if in_map else key)
            yield step
            yield from _key_paths(child, *step)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            step = (*path, index), (*field, "#")
            yield step
            yield from _key_paths(child, *step)


def _schema_field(field: tuple) -> tuple:
    """The NiFi field a key path is, wherever its group: the top group (a download's
    ``flowContents``, an instance's ``rootGroup``) and the groups nested in it are one."""
    steps = list(field)
    if steps and steps[0] in ("flowContents", "rootGroup"):
        steps[0] = "group"
    kept = []
    index = 0
    while index < len(steps):
        nested = steps[index] == "processGroups" and steps[index + 1 : index + 2] == ["#"]
        if nested and index + 2 < len(steps):  # a field of a nested group: the group's field
            index += 2
            continue
        kept.append(steps[index])
        index += 1
    return tuple(kept)


def _targets(every_path: bool) -> list[tuple[Path, tuple]]:
    """(sample, key path): every key path of every sample, or the first of each NiFi field."""
    seen: set[tuple] = set()
    found = []
    for sample in SAMPLES:
        for path, field in _key_paths(_document(sample)):
            key = (sample, path) if every_path else _schema_field(field)
            if key not in seen:
                seen.add(key)
                found.append((sample, path))
    return found


#: Set to run every key path of every sample (some 30,000 mutations, minutes) instead of
#: every NiFi field (some 2,000, under a minute).
EVERY_PATH = os.environ.get("FLOWCORE_FUZZ_EVERY_PATH") == "1"

TARGETS = _targets(EVERY_PATH)


def _spelled(path: tuple) -> str:
    """The JSON path as flowcore's messages spell it."""
    text = ""
    for key in path:
        text = json_path(text, key)
    return text


def _mutated(document: Any, path: tuple, value: Any, file: Path) -> None:
    """Write *document* with *value* at *path* to *file* (the document is left as it was)."""
    holder = document
    for key in path[:-1]:
        holder = holder[key]
    old = holder[path[-1]]
    holder[path[-1]] = value
    try:
        file.write_text(json.dumps(document))
    finally:
        holder[path[-1]] = old


def _loaded(file: Path) -> tuple[int, str, BaseException | None]:
    """Load *file* as ``flowcore run`` does: (exit status, the error line(s), the error)."""
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            load_flow(file)
    except FlowcoreError as error:  # flowcore.cli.main prints these as "error: ..." and exits 2
        return 2, str(error), error
    return 0, "", None


def _check_error(text: str, error: BaseException, path: tuple, value: Any) -> None:
    """One line naming the field; an import's problems are listed one per line after it."""
    if isinstance(error, NiFiImportError):
        first, *rest = text.splitlines()
        assert "cannot run in flowcore" in first, text
        assert rest, text
        assert all(line.startswith("  - ") for line in rest), text
        return
    assert "\n" not in text, text
    assert "Traceback" not in text
    if isinstance(error, NiFiFormatError) and value is not None:
        # A wrong type is named by its path, or by the path of what holds it
        spelled = _spelled(path)
        named = [_spelled(path[:n]) for n in range(1, len(path) + 1)]
        assert any(p in text for p in named) or "not a NiFi flow definition" in text, (
            spelled,
            text,
        )


def test_every_field_of_every_sample_mistyped_loads_or_fails_in_one_line(tmp_path: Path) -> None:
    """Each wrong type at each schema field of each sample: exit 0 or 2, never a traceback; an
    error is one line that names the field by its JSON path (an import's problems, one each)."""
    file = tmp_path / "flow.json"
    documents = {sample: _document(sample) for sample in SAMPLES}
    outcomes = {0: 0, 2: 0}
    for sample, path in TARGETS:
        for value in WRONG:
            _mutated(documents[sample], path, value, file)
            status, text, error = _loaded(file)  # anything but a FlowcoreError fails the test
            outcomes[status] += 1
            if error is not None:
                _check_error(text, error, path, value)
    print(f"{sum(outcomes.values())} mutations: {outcomes}")
    assert sum(outcomes.values()) == len(TARGETS) * len(WRONG) > 2_000


def _explain(file: Path) -> tuple[int, str]:
    """``flowcore explain FILE`` in this process: (exit status, stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        status = main(["explain", str(file)])
    return status, err.getvalue()


def _check_stderr(status: int, stderr: str) -> None:
    """Exit 0 or 2; on 2 one error line (an import's problems listed under it), notes aside."""
    assert status in (0, 2), stderr
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if not line.startswith("note: ")]
    if status == 2:
        errors = [line for line in lines if line.startswith("error: ")]
        assert len(errors) == 1, stderr
        assert all(line.startswith(("error: ", "  - ")) for line in lines), stderr


def test_a_sample_of_mutations_through_the_whole_explain(tmp_path: Path) -> None:
    """300 mutations drawn at random (seeded) through ``flowcore explain`` in this process:
    compiled and drawn when they load, one error line when not."""
    file = tmp_path / "flow.json"
    documents = {sample: _document(sample) for sample in SAMPLES}
    chosen = random.Random(31).sample([(t, v) for t in TARGETS for v in WRONG], 300)
    for (sample, path), value in chosen:
        _mutated(documents[sample], path, value, file)
        _check_stderr(*_explain(file))


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    target=st.sampled_from(TARGETS),
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
        max_leaves=8,
    ),
)
def test_any_json_at_any_field_loads_or_fails_in_one_line(
    tmp_path: Path, target: tuple[Path, tuple], value: Any
) -> None:
    """Any JSON value (hypothesis's) at any schema field: a flow, or a FlowcoreError in one
    line naming the field."""
    sample, path = target
    file = tmp_path / "flow.json"
    _mutated(_document(sample), path, value, file)
    status, text, error = _loaded(file)
    if error is not None:
        _check_error(text, error, path, value)
    assert status in (0, 2)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        (("flowContents", "connections", 0, "backPressureObjectThreshold"), "lots"),
        (("parameterContexts",), "x"),
        (("flowContents", "processGroups", 0, "processors"), {}),
    ],
)
def test_the_real_command_says_one_line_and_exits_2(
    tmp_path: Path, field: tuple, value: Any
) -> None:
    """``python -m flowcore explain`` on a mistyped field: exit 2, one line naming the field."""
    file = tmp_path / "flow.json"
    _mutated(_document(EXAMPLE), field, value, file)
    done = run_flowcore("explain", str(file))
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("error: NiFi flow "), done.stderr
    assert _spelled(field) in done.stderr


def _nested(depth: int) -> str:
    """A process group whose groups nest *depth* deep, as JSON text (no recursion to write)."""
    opening = '{"name": "g", "processGroups": [' * depth
    return '{"flowContents": ' + opening + "{}" + "]}" * depth + "}"


@pytest.mark.parametrize("depth", [MAX_DEPTH, 200_000])
def test_a_flow_nested_deeper_than_the_limit_is_refused_in_one_line(
    tmp_path: Path, depth: int
) -> None:
    """Groups in groups 200,000 deep (past the parser) or just past MAX_DEPTH (past the check):
    one line naming the limit, exit 2."""
    file = tmp_path / "deep.json"
    file.write_text(_nested(depth))
    done = run_flowcore("explain", str(file))
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.count("\n") == 1, done.stderr[-2000:]
    assert f"nested more than {MAX_DEPTH} levels deep" in done.stderr


def test_a_deep_dict_from_python_is_refused(tmp_path: Path) -> None:
    """Flow.from_nifi of a dict nested 200,000 deep: NiFiFormatError, no RecursionError."""
    from flowcore import Flow

    inner: dict[str, Any] = {}
    top = inner
    for _ in range(200_000):
        child: dict[str, Any] = {}
        inner["processGroups"] = [child]
        inner = child
    with pytest.raises(NiFiFormatError, match=f"nested more than {MAX_DEPTH} levels deep"):
        Flow.from_nifi({"flowContents": top})


#: The child: loads a flow with flowcore's NiFi reader, prints its error's first 200 characters
#: and its peak RSS in MB (VmHWM: this program's own, not the pytest process it forked from).
_MEASURE = """
import sys
from pathlib import Path
from flowcore.errors import FlowcoreError
from flowcore.nifi.formats import read_definition
try:
    read_definition(sys.argv[1])
    print("read")
except FlowcoreError as error:
    print(str(error)[:200])
hwm = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith("VmHWM"))
print(int(hwm.split()[1]) // 1024)
"""


def _peak(file: Path) -> tuple[str, int]:
    """What reading *file* said, and the reader's peak RSS in MB, in a subprocess."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(file)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    said, peak = done.stdout.splitlines()
    return said, int(peak)


def _bomb(file: Path, size: int) -> None:
    """A gzip file inflating to *size* bytes of spaces (2 GiB from some 2 MB): one member
    of 16 MiB written again and again, as gzip readers take concatenated members as one."""
    member = gzip.compress(b" " * 2**24, compresslevel=9)
    with file.open("wb") as out:
        for _ in range(size // 2**24):
            out.write(member)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_a_gzip_bomb_is_refused_with_memory_bounded_by_the_limit(tmp_path: Path) -> None:
    """A ~2 MB .json.gz inflating to 2 GiB is refused once MAX_DEFINITION_BYTES are inflated:
    peak RSS stays under the interpreter's, twice the limit (the buffer and its copy as it
    grows) and 50 MB of slack; it was 4.2 GB before the limit."""
    bomb = tmp_path / "bomb.json.gz"
    _bomb(bomb, 2 * 2**30)
    assert bomb.stat().st_size < 3 * 2**20
    small = tmp_path / "small.json"
    small.write_text('{"processors": []}')
    _, base = _peak(small)
    said, peak = _peak(bomb)
    print(f"gzip bomb of {bomb.stat().st_size:,} bytes: peak {peak} MB, base {base} MB")
    assert f"inflates to more than {MAX_DEFINITION_BYTES // 2**20} MiB" in said
    assert peak < base + 2 * MAX_DEFINITION_BYTES // 2**20 + 50


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_the_densest_json_under_the_limits_parses_within_the_documented_bound(
    tmp_path: Path,
) -> None:
    """``[{"a":0},...]`` just under MAX_DEFINITION_VALUES (the densest JSON in memory: ~190
    bytes of dict per 8 of text): read, refused for what it holds, peaking under 600 MB."""
    dense = tmp_path / "dense.json.gz"
    with gzip.open(dense, "wb") as out:
        out.write(b'{"processors": [' + b'{"a":0},' * 1_999_990 + b'{"a":0}]}')
    said, peak = _peak(dense)
    print(f"2 million one-key objects: peak {peak} MB")
    assert "processors[0].identifier must be an identifier" in said
    assert peak < 600
