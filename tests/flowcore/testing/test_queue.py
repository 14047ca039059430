"""Tests for the harness's input queue."""

from __future__ import annotations

from flowcore.flowfile import FlowFile
from flowcore.session.host import FlowFileFilterResult
from flowcore.testing._queue import InputQueue


def _flowfile(index: int, penalty: int = 0) -> FlowFile:
    return FlowFile.create(index, 0, {"n": str(index)}).replace(
        queue_date=1, queue_date_index=index, penalty_expiration=penalty
    )


def test_penalized_flowfiles_wait_then_rejoin_in_queue_order() -> None:
    """A penalized FlowFile is skipped until its penalty ends, then comes back in order."""
    clock = [100]
    queue = InputQueue(lambda: clock[0])
    for index, penalty in ((1, 0), (2, 200), (3, 0)):
        queue.put(_flowfile(index, penalty))
    assert [f.attributes["n"] for f in queue.ready()] == ["1", "3"]
    assert len(queue) == 3
    clock[0] = 300
    assert [f.attributes["n"] for f in queue.take_ready()] == ["2", "1", "3"]


def test_a_filter_takes_what_it_accepts_and_leaves_the_rest_in_place() -> None:
    """As session.get(filter): rejected FlowFiles stay, in order; a stop ends the scan."""
    queue = InputQueue(lambda: 0)
    for index in range(1, 6):
        queue.put(_flowfile(index))

    def odd_until_four(flowfile: FlowFile) -> FlowFileFilterResult:
        n = int(flowfile.attributes["n"])
        return FlowFileFilterResult((n % 2 == 1, n < 4))

    taken = queue.take(10, odd_until_four)
    assert [f.attributes["n"] for f in taken] == ["1", "3"]
    assert [f.attributes["n"] for f in queue.ready()] == ["2", "4", "5"]
    queue.put_back(taken)
    assert [f.attributes["n"] for f in queue.ready()] == ["1", "3", "2", "4", "5"]
