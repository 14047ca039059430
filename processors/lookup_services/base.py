"""NiFi's lookup service interfaces: what LookupRecord (and users' processors) call.

NiFi's ``LookupService<T>`` answers ``lookup(coordinates, context)`` with an ``Optional<T>``;
``StringLookupService`` answers strings, ``RecordLookupService`` records. Here a lookup returns
the value or ``None`` (NiFi's empty Optional); a record is a mapping of field names to values.
``required_keys`` are the coordinate names the service needs (NiFi's ``getRequiredKeys``):
LookupRecord's dynamic properties must name them.

A service whose data lives in a session (the map cache, whose entries commit with the session
that changed them) answers through :meth:`LookupService.for_session`: the processor asks for
the view of its session once per trigger and looks up through it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from flowcore.controller_service import ControllerService
from flowcore.errors import ProcessException

if TYPE_CHECKING:
    from flowcore.session.process_session import ProcessSession

__all__ = [
    "KEY",
    "LookupFailureError",
    "LookupService",
    "RecordLookupService",
    "StringLookupService",
]

#: The coordinate NiFi's key/value services read (``coordinates.get("key")``).
KEY = "key"


class LookupFailureError(ProcessException):
    """A lookup could not be made (NiFi's ``LookupFailureException``): the file is unreadable."""


class LookupService(ControllerService):
    """Base of every lookup service (NiFi's ``org.apache.nifi.lookup.LookupService``).

    Subclasses set ``required_keys`` and implement :meth:`lookup`; the methods must be safe
    to call from several tasks at once (a service is shared by a process's tasks).
    """

    implements: ClassVar[tuple[str, ...]] = ("org.apache.nifi.lookup.LookupService",)
    #: The coordinate names a lookup needs (NiFi's ``getRequiredKeys``).
    required_keys: ClassVar[frozenset[str]] = frozenset({KEY})
    #: What a lookup returns: ``"string"`` or ``"record"`` (NiFi's ``getValueType``).
    value_type: ClassVar[str] = "string"

    def lookup(
        self, coordinates: Mapping[str, Any], context: Mapping[str, str] | None = None
    ) -> Any | None:
        """The value at *coordinates*, or None when there is none (NiFi's empty Optional).

        Args:
            coordinates: the coordinate values by name (LookupRecord's dynamic properties'
                names, each with the value its RecordPath selected).
            context: the FlowFile's attributes, for services that use them (NiFi 1.x's
                ``lookup(coordinates, context)``).

        Raises:
            LookupFailureError: the lookup could not be made (the processor routes the
                FlowFile to failure).
        """
        raise NotImplementedError

    def for_session(self, session: ProcessSession) -> LookupService:
        """The service as *session* sees it (itself, unless its data commits with sessions)."""
        del session
        return self


class StringLookupService(LookupService):
    """A lookup service answering strings (NiFi's ``StringLookupService``)."""

    implements: ClassVar[tuple[str, ...]] = (
        "org.apache.nifi.lookup.StringLookupService",
        "org.apache.nifi.lookup.LookupService",
    )
    value_type: ClassVar[str] = "string"


class RecordLookupService(LookupService):
    """A lookup service answering records, as mappings (NiFi's ``RecordLookupService``)."""

    implements: ClassVar[tuple[str, ...]] = (
        "org.apache.nifi.lookup.RecordLookupService",
        "org.apache.nifi.lookup.LookupService",
    )
    value_type: ClassVar[str] = "record"
