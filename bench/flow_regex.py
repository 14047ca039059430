"""Flow regexes on the ``regex`` engine with a time limit, against Python's ``re``.

Every regular expression a flow supplies runs through ``flowcore.patterns.compile_pattern``:
the ``regex`` engine, with the time limit (``regex_time_limit``) passed on every call. The
figures, each beside its ``re`` baseline measured in the same run, best of N with the range:

* per call, on patterns typical of flows (a file-name filter, a dated log name found in a path,
  whitespace replaced): ``re.Pattern`` method vs ``FlowPattern`` method, same compiled pattern
  reused, so the figure is the engine plus flowcore's wrapper (the timeout argument: ``regex``
  itself, without one, costs about 0.3 us a call here);
* per Expression Language evaluation, ``${filename:matches('.*\\.csv')}`` against the same
  expression with ``endsWith('.csv')`` (no regex), for the regex's share of an evaluation;
* a Java replacement (``replaceAll``'s ``$1``-style text) substituted through a Python callback
  per match (as before) vs translated once into the engine's own template (as now);
* the hostile cases: the issue's ``(a+)+$`` on ``a`` * n + ``!``, ``re`` at n = 20, 22, 24
  (it doubles with every character: n = 33 takes hours) and the flow engine at n = 33, which
  does not backtrack on it; ``(a|aa)+$``, which the flow engine does backtrack on, at n = 60,
  where it stops at its limit (1 s by default; 0.2 s here).

Run: ``.venv/bin/python bench/flow_regex.py`` (``--repeat N``, 5 by default). Prints one JSON
line and a table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

# Scripts run from bench/, where bench/processors.py would shadow the processors package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console
from rich.table import Table

from flowcore.errors import RegexTimeoutError
from flowcore.expression import compile_expression
from flowcore.expression._regex import java_replacement, java_template
from flowcore.patterns import compile_pattern, set_time_limit, time_limit

CALLS = 200_000
CASES = {
    "fullmatch file filter": (r"[^.].*\.csv", "fullmatch", "sales-2024-03-01.csv"),
    "search dated log name": (
        r"[a-z]+-\d{4}-\d{2}-\d{2}\.log",
        "search",
        "/var/data/in/host/app-2024-03-01.log",
    ),
    "replaceAll whitespace": (r"\s+", "sub", "a name  with\tsome   spaces in it.txt"),
}


def best_of(repeat: int, run: Callable[[], float]) -> tuple[float, float, float]:
    """(best, worst, median) of *repeat* runs of *run*, which returns a rate."""
    rates = [run() for _ in range(repeat)]
    return max(rates), min(rates), sorted(rates)[len(rates) // 2]


def calls_per_second(call: Callable[[], object], count: int = CALLS) -> float:
    start = time.perf_counter()
    for _ in range(count):
        call()
    return count / (time.perf_counter() - start)


def _calls(pattern: str, method: str, subject: str) -> tuple[Callable[[], object], ...]:
    """The same call on ``re`` and on the flow engine."""
    theirs, ours = re.compile(pattern), compile_pattern(pattern)
    if method == "sub":
        return (lambda: theirs.sub("_", subject)), (lambda: ours.sub("_", subject))
    re_method, flow_method = getattr(theirs, method), getattr(ours, method)
    return (lambda: re_method(subject)), (lambda: flow_method(subject))


def bench_calls(repeat: int) -> dict[str, dict[str, float]]:
    out = {}
    for name, (pattern, method, subject) in CASES.items():
        baseline, flow = _calls(pattern, method, subject)
        assert (baseline() is None) == (flow() is None)
        re_best, re_worst, _ = best_of(repeat, lambda b=baseline: calls_per_second(b))
        fc_best, fc_worst, _ = best_of(repeat, lambda f=flow: calls_per_second(f))
        out[name] = {
            "re_calls_per_s": re_best,
            "re_worst": re_worst,
            "flowcore_calls_per_s": fc_best,
            "flowcore_worst": fc_worst,
            "overhead_us_per_call": (1 / fc_best - 1 / re_best) * 1e6,
        }
    return out


def bench_expression(repeat: int, count: int = 100_000) -> dict[str, float]:
    attributes = {"filename": "sales-2024-03-01.csv"}
    regex_el = compile_expression(r"${filename:matches('.*\.csv')}")
    plain_el = compile_expression("${filename:endsWith('.csv')}")
    assert regex_el.evaluate(attributes) == plain_el.evaluate(attributes) == "true"
    with_regex = best_of(repeat, lambda: calls_per_second(lambda: regex_el.evaluate(attributes)))
    without = best_of(repeat, lambda: calls_per_second(lambda: plain_el.evaluate(attributes)))
    return {
        "el_matches_evals_per_s": with_regex[0],
        "el_matches_worst": with_regex[1],
        "el_ends_with_evals_per_s": without[0],
        "el_ends_with_worst": without[1],
    }


def _seconds(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    with contextlib.suppress(RegexTimeoutError):
        call()
    return time.perf_counter() - start


def bench_replacement(repeat: int) -> dict[str, float]:
    pattern = compile_pattern(r"(\w+)\s+")
    subject, replacement = "a name  with\tsome   spaces in it.txt", "$1_"
    callback, template = java_replacement(replacement), java_template(replacement)
    assert pattern.sub(callback, subject) == pattern.sub(template, subject)
    before = best_of(repeat, lambda: calls_per_second(lambda: pattern.sub(callback, subject)))
    now = best_of(repeat, lambda: calls_per_second(lambda: pattern.sub(template, subject)))
    return {
        "callback_calls_per_s": before[0],
        "callback_worst": before[1],
        "template_calls_per_s": now[0],
        "template_worst": now[1],
    }


def bench_hostile() -> dict[str, float]:
    """The issue's pattern on ``re`` and on the flow engine; a pattern the engine must stop."""
    issue, stopped = re.compile(r"(a+)+$"), compile_pattern(r"(a|aa)+$")
    out = {
        f"re_issue_seconds_n{n}": _seconds(lambda n=n: issue.match("a" * n + "!"))
        for n in (20, 22, 24)
    }
    out["flowcore_issue_seconds_n33"] = _seconds(
        lambda: compile_pattern(r"(a+)+$").match("a" * 33 + "!")
    )
    before = time_limit()
    set_time_limit(0.2)
    try:
        out["flowcore_alternation_seconds_n60_limit_0.2s"] = _seconds(
            lambda: stopped.match("a" * 60 + "!")
        )
    finally:
        set_time_limit(before)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    results = {
        "calls": bench_calls(repeat),
        "expression": bench_expression(repeat),
        "replacement": bench_replacement(repeat),
        "hostile": bench_hostile(),
    }
    print(json.dumps(results, default=lambda v: round(v, 3)))
    table = Table(title=f"flow regexes vs re (best of {repeat}, worst in brackets)")
    for column in ("case", "re", "flowcore (regex + limit)", "cost per call"):
        table.add_column(column, justify="left" if column == "case" else "right")
    for name, row in results["calls"].items():
        table.add_row(
            name,
            f"{row['re_calls_per_s']:,.0f}/s ({row['re_worst']:,.0f})",
            f"{row['flowcore_calls_per_s']:,.0f}/s ({row['flowcore_worst']:,.0f})",
            f"+{row['overhead_us_per_call']:.2f} us",
        )
    el = results["expression"]
    table.add_row(
        "EL matches() vs endsWith()",
        f"{el['el_ends_with_evals_per_s']:,.0f}/s ({el['el_ends_with_worst']:,.0f})",
        f"{el['el_matches_evals_per_s']:,.0f}/s ({el['el_matches_worst']:,.0f})",
        f"+{(1 / el['el_matches_evals_per_s'] - 1 / el['el_ends_with_evals_per_s']) * 1e6:.2f} us",
    )
    rep = results["replacement"]
    table.add_row(
        "replaceAll '$1_': callback (before) vs template (now)",
        f"{rep['callback_calls_per_s']:,.0f}/s ({rep['callback_worst']:,.0f})",
        f"{rep['template_calls_per_s']:,.0f}/s ({rep['template_worst']:,.0f})",
        f"{(1 / rep['template_calls_per_s'] - 1 / rep['callback_calls_per_s']) * 1e6:+.2f} us",
    )
    hostile = results["hostile"]
    table.add_row(
        "the issue's (a+)+$ on a*n+'!'",
        ", ".join(f"n={n}: {hostile[f're_issue_seconds_n{n}']:.2f} s" for n in (20, 22, 24)),
        f"n=33: {hostile['flowcore_issue_seconds_n33']:.4f} s",
        "",
    )
    table.add_row(
        "(a|aa)+$ on a*60+'!'",
        "~1.6x per character",
        f"{hostile['flowcore_alternation_seconds_n60_limit_0.2s']:.2f} s (stopped at 0.2 s)",
        "",
    )
    Console().print(table)


if __name__ == "__main__":
    main()
