"""ControlRate's throttles, kept in the processor's state between stage runs.

A throttle is NiFi's ``ControlRate.Throttle`` over a ``TimedBuffer``: what passed in the last
Time Duration, in one-second buckets, and a penalization that makes a FlowFile that overshot the
maximum cost the time it would have taken. NiFi keeps throttles in memory; here they are the
processor's state, committed with the FlowFiles that passed, so a restart (or a crash and redo)
goes on from the committed window instead of starting a new one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

import attrs

__all__ = ["Throttle", "load_throttles", "save_throttles"]

#: The state key of the configuration the throttles were made under.
CONFIG_KEY = "config"


@attrs.define
class Throttle:
    """One group's data or count throttle (NiFi's ``ControlRate.Throttle``).

    Attributes:
        period_ms: the Time Duration.
        buckets: epoch second -> [amount added in it, time of the last add (ms)].
        penalization_period: ms the next accepted add must wait (set by an overshoot).
        penalization_expired: until when nothing is accepted (epoch ms).
        last_update: when the throttle last accepted something (epoch ms).
    """

    period_ms: int
    buckets: dict[int, list[int]] = attrs.field(factory=dict)
    penalization_period: int = 0
    penalization_expired: int = 0
    last_update: int = 0

    def _live(self, now: int) -> list[list[int]]:
        """Buckets still inside the window (NiFi's bins not expired)."""
        return [b for b in self.buckets.values() if b[1] >= now - self.period_ms]

    def try_add(self, value: int, maximum: int, now: int) -> bool:
        """Let *value* through if the window allows; NiFi's ``tryAdd``, step by step."""
        if value < 0 or self.penalization_expired > now:
            return False
        live = self._live(now)
        if live and sum(b[0] for b in live) >= maximum:
            return False
        if self.penalization_period > 0:
            self.penalization_expired = now + self.penalization_period
            self.penalization_period = 0
            return False
        second = now // 1000
        self.buckets = {s: b for s, b in self.buckets.items() if b[1] >= now - self.period_ms}
        bucket = self.buckets.setdefault(second, [0, now])
        bucket[0] += value
        bucket[1] = now
        # NiFi compares the bucket's own total (TimedBuffer.add returns it), not the window's
        if bucket[0] > maximum:
            over = bucket[0] - maximum
            self.penalization_period = int(self.period_ms * (over / maximum))
        self.last_update = now
        return True

    def opens_at(self, maximum: int, now: int) -> int:
        """The earliest time :meth:`try_add` may accept again (epoch ms, at least *now* + 1)."""
        buckets = sorted(self._live(now), key=lambda b: b[1])
        total = sum(b[0] for b in buckets)
        at = now
        for amount, last in buckets:
            if total < maximum:
                break
            total -= amount
            at = last + self.period_ms + 1
        at = max(at, self.penalization_expired)
        return max(at + self.penalization_period, now + 1)

    def to_text(self) -> str:
        return json.dumps(
            [
                sorted(([s, *b] for s, b in self.buckets.items()), key=lambda x: x[0]),
                self.penalization_period,
                self.penalization_expired,
                self.last_update,
            ]
        )

    @classmethod
    def from_text(cls, text: str, period_ms: int) -> Throttle:
        buckets, period, expired, last = json.loads(text)
        return cls(period_ms, {s: [a, t] for s, a, t in buckets}, period, expired, last)


def _key(kind: str, group: str | None) -> str:
    return json.dumps([kind, group])


def load_throttles(
    state: Mapping[str, str], config: str, period_ms: int
) -> dict[tuple[str, str | None], Throttle]:
    """The throttles in *state*, or none when it was made under another configuration.

    NiFi clears its throttles when the criteria, the rate controlled attribute, the grouping
    attribute or the Time Duration change; *config* names those.
    """
    if state.get(CONFIG_KEY) != config:
        return {}
    throttles = {}
    for key, text in state.items():
        if key == CONFIG_KEY:
            continue
        kind, group = json.loads(key)
        throttles[(kind, group)] = Throttle.from_text(text, period_ms)
    return throttles


def save_throttles(
    throttles: Mapping[tuple[str, str | None], Throttle], config: str, now: int
) -> dict[str, str]:
    """The state to commit: throttles used within two Time Durations (NiFi clears older ones).

    One still penalized is kept until its penalization is over.
    """
    kept: Iterable[tuple[tuple[str, str | None], Throttle]] = (
        (k, t)
        for k, t in throttles.items()
        if t.last_update >= now - 2 * t.period_ms
        or t.penalization_expired > now
        or t.penalization_period > 0
    )
    state = {_key(kind, group): t.to_text() for (kind, group), t in kept}
    state[CONFIG_KEY] = config
    return state
