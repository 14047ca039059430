"""What masking a running processor's secrets costs per log record (flowcore.engine._bulletins).

Every record made while a processor runs loses its secrets in the log record factory, so every
logger is covered; records made elsewhere pay one context-variable read. Nanoseconds per
``logger.info("read %s rows from %s", ...)`` record handled by a NullHandler, interleaved,
best of N (with the range):

- ``plain``: Python's own record factory, nothing masked (the floor);
- ``idle``: flowcore's factory installed, no processor running (any library's record);
- ``masking``: a processor running with three secrets, the message holding none;
- ``masking_hit``: the same, the message holding one (rewritten masked);
- ``handler_before``: the handler flowcore used before (``_Redacting``: getMessage and replace
  on ``flowcore.processors`` records only), with the same three secrets, for comparison.

Run: ``.venv/bin/python bench/log_masking.py [--records 100000] [--repeat 7]``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from flowcore.engine import _bulletins
from flowcore.parameters import redact

SECRETS = ["pw-database-5f0e1", "token-83ab2c41", "svc-pool-c41d7"]


class _HandlerBefore(logging.Handler):
    """The masking handler flowcore had before the record factory (for the comparison)."""

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        redacted = redact(message, SECRETS)
        if redacted != message:
            record.msg, record.args = redacted, None


def _logger(name: str, *handlers: logging.Handler) -> logging.Logger:
    log = logging.getLogger(name)
    log.handlers[:] = [*handlers, logging.NullHandler()]
    log.propagate = False
    log.setLevel(logging.INFO)
    return log


def _time(log: logging.Logger, records: int, said: str) -> float:
    """Nanoseconds per record."""
    start = time.perf_counter_ns()
    for n in range(records):
        log.info("read %s rows from %s", n, said)
    return (time.perf_counter_ns() - start) / records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    plain_factory = logging.getLogRecordFactory()
    _bulletins._install()
    ours = logging.getLogRecordFactory()
    bare = _logger("bench.masking.plain")
    before = _logger("bench.masking.before", _HandlerBefore())
    runs: dict[str, list[float]] = {
        k: [] for k in ("plain", "idle", "masking", "masking_hit", "handler_before")
    }
    for _ in range(args.repeat):
        logging.setLogRecordFactory(plain_factory)
        runs["plain"].append(_time(bare, args.records, "orders.csv"))
        runs["handler_before"].append(_time(before, args.records, "orders.csv"))
        logging.setLogRecordFactory(ours)
        runs["idle"].append(_time(bare, args.records, "orders.csv"))
        with _bulletins.redacting(lambda: SECRETS):
            runs["masking"].append(_time(bare, args.records, "orders.csv"))
            runs["masking_hit"].append(_time(bare, args.records, SECRETS[0]))
    logging.setLogRecordFactory(plain_factory)
    result = {k: {"best_ns": round(min(v)), "worst_ns": round(max(v))} for k, v in runs.items()}
    floor = result["plain"]["best_ns"]
    print(json.dumps({"records": args.records, "repeat": args.repeat, "results": result}))
    print(f"{'variant':<16}{'best ns':>10}{'worst ns':>10}{'over plain':>12}")
    for name, r in result.items():
        print(f"{name:<16}{r['best_ns']:>10}{r['worst_ns']:>10}{r['best_ns'] - floor:>+12}")


if __name__ == "__main__":
    main()
