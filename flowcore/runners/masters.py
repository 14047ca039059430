"""Spark master URLs: the forms Spark accepts, and whether a cluster's master answers.

Both are checked before a JVM starts, so a mistyped or unreachable master is one line naming
the fix rather than Spark's stack trace (or its minute of retries).
"""

from __future__ import annotations

import re
import socket
import urllib.parse

from flowcore.errors import ConfigurationError

__all__ = ["DEFAULT_CONNECT_TIMEOUT", "check_master", "master_addresses", "reach_master"]

DEFAULT_CONNECT_TIMEOUT = 30.0  # seconds: Settings.spark_connect_timeout's "30 sec"

# The master URLs Spark accepts (SparkContext's master patterns; spark-submit refuses the rest).
_MASTER_FORMS = tuple(
    re.compile(form)
    for form in (
        r"local",
        r"local\[([0-9]+|\*)\]",
        r"local\[([0-9]+|\*)\s*,\s*([0-9]+)\]",
        r"local-cluster\[\s*[0-9]+\s*,\s*[0-9]+\s*,\s*[0-9]+\s*\]",
        r"spark://.+",
        r"k8s://.+",
        r"yarn",
    )
)
_MASTER_HINT = (
    "use local[*] (local[N] for N cores), spark://HOST:7077 for a standalone cluster, yarn, "
    "or k8s://https://HOST:PORT"
)


def check_master(master: str) -> None:
    """Refuse a master URL Spark would refuse, before a JVM prints its stack trace.

    Raises:
        ConfigurationError: *master* has none of Spark's forms, or a ``spark://`` URL lacks a
            port.
    """
    if not any(form.fullmatch(master) for form in _MASTER_FORMS):
        msg = f"{master!r} is not a Spark master URL; {_MASTER_HINT}"
        raise ConfigurationError(msg)
    master_addresses(master)  # a spark:// URL's host:port list must parse


def master_addresses(master: str) -> list[tuple[str, int]]:
    """The network addresses of a cluster's master(s); none for local and YARN masters."""
    if master.startswith("spark://"):
        addresses = []
        for part in master.removeprefix("spark://").split(","):
            host, _, port = part.strip().rpartition(":")
            if not host or not port.isdigit():
                msg = f"Spark master {master!r} needs HOST:PORT after spark://; {_MASTER_HINT}"
                raise ConfigurationError(msg)
            addresses.append((host.strip("[]"), int(port)))
        return addresses
    if master.startswith("k8s://"):
        url = master.removeprefix("k8s://")
        parts = urllib.parse.urlsplit(url if "://" in url else f"https://{url}")
        try:
            port = parts.port or (80 if parts.scheme == "http" else 443)
        except ValueError:  # a port that is no number
            msg = f"Spark master {master!r} has a bad port; {_MASTER_HINT}"
            raise ConfigurationError(msg) from None
        return [(parts.hostname, port)] if parts.hostname else []
    return []


def reach_master(master: str, timeout: float = DEFAULT_CONNECT_TIMEOUT) -> None:
    """Check that a cluster's master accepts connections, waiting at most *timeout* seconds each.

    Spark itself retries an unreachable standalone master for over a minute, then fails with a
    trace; this tells the user at once (a refused connection) or after *timeout* (no answer).
    With several masters (``spark://a:7077,b:7077``, standby masters), one answering is enough.

    Raises:
        ConfigurationError: no master answered, naming each address and why.
    """
    addresses = master_addresses(master)
    reasons = []
    for host, port in addresses:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return
        except OSError as error:
            timed_out = isinstance(error, TimeoutError)
            why = f"no answer in {timeout:g} s" if timed_out else error.strerror or error
            reasons.append(f"{host}:{port}: {why}")
    if reasons:
        msg = (
            f"cannot reach the Spark master {master} ({'; '.join(reasons)}): start the master "
            "or correct the URL (a standalone master listens on port 7077), or give a slow "
            "network more time with the spark_connect_timeout setting"
        )
        raise ConfigurationError(msg)
