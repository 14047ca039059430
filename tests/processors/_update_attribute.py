"""UpdateAttribute's example rules and settings, for the test_update_attribute* modules."""

from __future__ import annotations

from flowcore.testing import TestRunner
from processors import UpdateAttribute
from processors.update_attribute import Rule

BIG = Rule(name="big", conditions=["${size:gt(10)}"], actions={"class": "big", "tag": "B"})
HUGE = Rule(name="huge", conditions=[" ${size:gt(100)} "], actions={"class": "huge"})
#: Store State, locally.
STATEFUL = {"Store State": "Store state locally"}


def rules_runner(policy: str = "USE_CLONE", **properties: object) -> TestRunner:
    """A harness of UpdateAttribute with the rules BIG and HUGE under *policy*."""
    return TestRunner(UpdateAttribute(rules=[BIG, HUGE], flowfile_policy=policy, **properties))
