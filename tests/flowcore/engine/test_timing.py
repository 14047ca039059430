"""Tests for each member's task time: exclusive of the members that ran inside its calls."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from flowcore.engine._timing import MemberClock


def _ticking(step: int = 10) -> MemberClock:
    """A clock that advances *step* nanoseconds at each read."""
    ticks = itertools.count(0, step)
    return MemberClock(lambda: next(ticks))


def test_a_member_run_inside_another_is_not_counted_twice() -> None:
    """A source's call that pumps a downstream member counts only its own time; each read of
    the clock advances 10 ns, so the split is exact."""
    clock = _ticking()
    with clock.timing("source"):  # reads 0
        with clock.timing("split"):  # reads 10: source ran 10
            pass  # reads 20: split ran 10
        with clock.timing("tag"):  # reads 30: source ran 10 more
            pass  # reads 40: tag ran 10
    # reads 50: source ran 10 more
    assert clock.nanos == {"source": 30, "split": 10, "tag": 10}


def test_a_member_that_raises_is_still_counted() -> None:
    """The time before an exception counts, and the outer member resumes its own count."""
    clock = _ticking()
    with clock.timing("source"):
        try:
            with clock.timing("boom"):
                raise RuntimeError
        except RuntimeError:
            pass
    assert clock.nanos == {"source": 20, "boom": 10}
    with clock.timing("after"):  # nothing left running: a fresh start
        pass
    assert clock.nanos["after"] == 10


Nesting = st.recursive(
    st.just(()), lambda inner: st.lists(inner, max_size=3).map(tuple), max_leaves=20
)


@given(st.lists(Nesting, min_size=1, max_size=3), st.integers(1, 1000))
def test_members_time_adds_up_to_the_task_time(calls: list[tuple], step: int) -> None:
    """However members nest, their times add up to the time the outermost calls took."""
    ticks = itertools.count(0, step)
    clock = MemberClock(lambda: next(ticks))
    names = itertools.count()

    def enter(children: tuple) -> None:
        with clock.timing(f"m{next(names) % 4}"):  # members come back: one name, summed
            for child in children:
                enter(child)

    spans = 0
    for call in calls:
        before = next(ticks)
        enter(call)
        spans += next(ticks) - before - 2 * step  # between the member's first and last read
    assert sum(clock.nanos.values()) == spans
    assert all(n > 0 for n in clock.nanos.values())
