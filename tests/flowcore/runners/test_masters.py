"""Tests for flowcore.runners.masters: Spark's master URL forms, checked before a JVM starts."""

from __future__ import annotations

import pytest

from flowcore.errors import ConfigurationError
from flowcore.runners.masters import check_master


def test_check_master_takes_sparks_forms_and_refuses_the_rest() -> None:
    """Every master form Spark accepts passes; others are refused naming the good forms."""
    for good in (
        "local",
        "local[4]",
        "local[*]",
        "local[2, 3]",
        "local-cluster[2,1,1024]",
        "spark://a:7077",
        "spark://a:7077,b:7078",
        "yarn",
        "k8s://https://api:6443",
    ):
        check_master(good)
    for bad in ("foo://x", "local[x]", "Local", "spark://a", "spark://a:port", "k8s://h:x", ""):
        with pytest.raises(ConfigurationError, match=r"spark://HOST:7077"):
            check_master(bad)
