"""ListS3: list an S3 bucket's objects as zero-content FlowFiles (NiFi's ListS3).

The listing runs where the flow's sources list (the driver) and keeps NiFi's state:
``currentTimestamp``, the newest last-modified time emitted, and ``key-0``, ``key-1`` ... the
keys emitted at that time. An object is new when it is newer than that time, or of that time
and not among those keys. The state is committed in the write-ahead log transaction that
commits the FlowFiles, so each object is listed once across runs, crashes and restarts.

Beside NiFi's keys the state holds ``flowcore.listing.configuration``, a digest of the
properties NiFi resets the listing on (Bucket, Region, Prefix, Listing Strategy): flowcore keeps
state across runs, where NiFi clears it when one of them is modified, so a listing whose digest
differs starts over. Tracking Entities keeps NiFi's ListedEntityTracker map in a map cache
(processors._entity_tracking); a Record Writer writes each listing as one FlowFile of records
(processors._listing_records).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from flowcore.processor.context import ProcessContext
from flowcore.processor.kinds import SourceProcessor, WorkItem, WorkListing
from flowcore.processor.relationship import SUCCESS
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    NON_EMPTY_VALIDATOR,
    POSITIVE_INTEGER_VALIDATOR,
    TIME_PERIOD_VALIDATOR,
    ValidationResult,
)
from processors import _entity_tracking as tracking
from processors._entity_tracking import CONFIGURATION_KEY
from processors._listing_records import S3_OBJECT_SCHEMA, write_listing, writer_set
from processors.aws import _s3

__all__ = ["ListS3"]

CURRENT_TIMESTAMP = "currentTimestamp"
CURRENT_KEY_PREFIX = "key-"
#: Objects one work item lists, at most (one FlowFile batch each).
ITEM_OBJECTS = 10_000
#: Keys one listing request asks for (S3's MaxKeys; S3 answers at most 1,000): the paginator
#: follows markers (V1: NextMarker, else the last key), continuation tokens (V2) and version
#: markers until the listing is complete.
PAGE_KEYS = 1_000

BY_TIMESTAMPS = AllowableValue(
    "timestamps", "Tracking Timestamps",
    "This strategy tracks the latest timestamp of listed entity to determine new/updated "
    "entities. Since it only tracks few timestamps, it can manage listing state efficiently.",
)  # fmt: skip
BY_ENTITIES = AllowableValue(
    "entities", "Tracking Entities",
    "This strategy tracks information of all the listed entities within the latest 'Entity "
    "Tracking Time Window' to determine new/updated entities. This strategy can pick entities "
    "having old timestamp that can be missed with 'Tracking Timestamps'.",
)  # fmt: skip
NO_TRACKING = AllowableValue(
    "none", "No Tracking",
    "This strategy lists all entities without any tracking. The same entities will be listed "
    "each time this processor is scheduled (once in a flowcore batch run).",
)  # fmt: skip


def _bool(display: str, old: str, description: str) -> PropertyDescriptor:
    return PropertyDescriptor(
        display, description=description, required=True, default="false",
        allowable_values=("true", "false"), aliases=(old,),
    )  # fmt: skip


LISTING_STRATEGY = PropertyDescriptor(
    "Listing Strategy", description="Specify how to determine new/updated entities. See each "
    "strategy descriptions for detail.", required=True, default=BY_TIMESTAMPS.value,
    allowable_values=(BY_TIMESTAMPS, BY_ENTITIES, NO_TRACKING), aliases=("listing-strategy",),
)  # fmt: skip
RECORD_WRITER = PropertyDescriptor(
    "Record Writer", description="Specifies the Record Writer to use for creating the listing. "
    "If not specified, one FlowFile will be created for each entity that is listed. If the Record "
    "Writer is specified, all entities will be written to a single FlowFile instead of adding "
    "attributes to individual FlowFiles.",
    identifies_service="RecordSetWriterFactory", aliases=("record-writer",),
)  # fmt: skip
MIN_AGE = PropertyDescriptor(
    "Minimum Object Age", description="The minimum age that an S3 object must be in order to "
    "be considered; any object younger than this amount of time (according to last "
    "modification date) will be ignored", required=True, default="0 sec",
    validators=(TIME_PERIOD_VALIDATOR,), aliases=("min-age",),
)  # fmt: skip
MAX_AGE = PropertyDescriptor(
    "Maximum Object Age", description="The maximum age that an S3 object can be in order to be "
    "considered; any object older than this amount of time (according to last modification "
    "date) will be ignored", validators=(TIME_PERIOD_VALIDATOR,), aliases=("max-age",),
)  # fmt: skip
BATCH_SIZE = PropertyDescriptor(
    "Listing Batch Size", description="How many S3 objects are listed in a single batch (NiFi "
    "transfers FlowFiles in batches of this size; flowcore commits a listing whole).",
    default="100", validators=(POSITIVE_INTEGER_VALIDATOR,),
)  # fmt: skip
WRITE_OBJECT_TAGS = _bool(
    "Write Object Tags", "write-s3-object-tags",
    "If set to 'True', the tags associated with the S3 object will be written as FlowFile "
    "attributes",
)  # fmt: skip
WRITE_USER_METADATA = _bool(
    "Write User Metadata", "write-s3-user-metadata",
    "If set to 'True', the user defined metadata associated with the S3 object will be added "
    "to FlowFile attributes/records",
)  # fmt: skip
DELIMITER = PropertyDescriptor(
    "Delimiter", description="The string used to delimit directories within the bucket. Please "
    "consult the AWS documentation for the correct use of this field.",
    validators=(NON_EMPTY_VALIDATOR,), aliases=("delimiter",),
)  # fmt: skip
PREFIX = PropertyDescriptor(
    "Prefix", description="The prefix used to filter the object list. Do not begin with a "
    "forward slash '/'. In most cases, it should end with a forward slash '/'.",
    validators=(NON_EMPTY_VALIDATOR,), el_scope=ExpressionLanguageScope.ENVIRONMENT,
    aliases=("prefix",),
)  # fmt: skip
USE_VERSIONS = _bool(
    "Use Versions", "use-versions",
    "Specifies whether to use S3 versions, if applicable.  If false, only the latest version "
    "of each object will be returned.",
)  # fmt: skip
LIST_TYPE = PropertyDescriptor(
    "List Type", description="Specifies whether to use the original List Objects or the newer "
    "List Objects Version 2 endpoint.", required=True, default="1",
    allowable_values=(
        AllowableValue("1", "List Objects V1"), AllowableValue("2", "List Objects V2"),
    ),
    aliases=("list-type",),
)  # fmt: skip
REQUESTER_PAYS = _bool(
    "Requester Pays", "requester-pays",
    "If true, indicates that the requester consents to pay any charges associated with listing "
    "the S3 bucket.  This sets the 'x-amz-request-payer' header to 'requester'.  Note that "
    "this setting is not applicable when 'Use Versions' is 'true'.",
)  # fmt: skip


class ListS3(SourceProcessor):
    """Lists the objects of an S3 bucket, one zero-content FlowFile each (NiFi's ListS3).

    Each FlowFile carries ``s3.bucket``, ``s3.region``, ``filename`` (the key), ``s3.etag``,
    ``s3.isLatest``, ``s3.lastModified`` (ms), ``s3.length``, ``s3.storeClass``, and with Use
    Versions ``s3.version``; FetchS3Object's defaults (``${s3.bucket}``, ``${filename}``) read
    them back. See the module docstring for the state and the exactly-once guarantee. With a
    Record Writer one FlowFile per work item (up to 10,000 objects of a listing) holds the
    objects as records (NiFi's schema: key,
    bucket, owner, etag, lastModified, size, storageClass, latest, versionId, tags,
    userMetadata) with ``record.count``, ``mime.type`` and ``s3.region``.
    """

    BUCKET = _s3.BUCKET_NO_DEFAULT
    property_descriptors: ClassVar = (
        _s3.BUCKET_NO_DEFAULT, *_s3.COMMON[:2], LISTING_STRATEGY, tracking.TRACKING_STATE_CACHE,
        tracking.TRACKING_TIME_WINDOW, tracking.INITIAL_LISTING_TARGET, RECORD_WRITER, MIN_AGE,
        MAX_AGE, BATCH_SIZE, WRITE_OBJECT_TAGS, WRITE_USER_METADATA, *_s3.COMMON[2:], DELIMITER,
        PREFIX, USE_VERSIONS, LIST_TYPE, REQUESTER_PAYS,
    )  # fmt: skip
    relationships: ClassVar = (SUCCESS,)
    tags: ClassVar = ("Amazon", "S3", "AWS", "list")
    identifies_work: ClassVar[bool] = True
    writes_attributes: ClassVar = {
        "s3.bucket": "The name of the S3 bucket",
        "s3.region": "The region of the S3 bucket",
        "filename": "The name of the file",
        "s3.etag": "The ETag that can be used to see if the file has changed",
        "s3.isLatest": "A boolean indicating if this is the latest version of the object",
        "s3.lastModified": "The last modified time in milliseconds since epoch in UTC time",
        "s3.length": "The size of the object in bytes",
        "s3.storeClass": "The storage class of the object",
        "s3.version": "The version of the object, if applicable",
        "s3.tag.___": "If 'Write Object Tags' is set to 'True', the tags associated to the S3 "
        "object that is being listed will be written as part of the flowfile attributes",
        "s3.user.metadata.___": "If 'Write User Metadata' is set to 'True', the user defined "
        "metadata associated to the S3 object that is being listed will be written as part of "
        "the flowfile attributes",
    }

    def __init__(self, **properties: object) -> None:
        super().__init__(**properties)
        self._s3 = _s3.S3Client()
        self._entities_listed = ""  # the last entity listing handed out (its digest)

    @property
    def unbounded(self) -> bool:  # type: ignore[override]
        """No Tracking and Tracking Entities never run out: a batch run lists once."""
        return self.effective_value(LISTING_STRATEGY) != BY_TIMESTAMPS.value

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """NiFi's checks: a state cache for Tracking Entities; age and Requester Pays."""
        problems = []
        if values.get(LISTING_STRATEGY.name) == BY_ENTITIES.value:
            problems.extend(tracking.validate(values))
        if values.get(REQUESTER_PAYS.name) == "true" and values.get(USE_VERSIONS.name) == "true":
            problems.append(
                ValidationResult(
                    "Requester Pays", "true", False,
                    "'Requester Pays' cannot be used when listing object versions.",
                )
            )  # fmt: skip
        return problems

    # --- the driver's side -------------------------------------------------------------------

    def list_work(self, context: ProcessContext, state: Mapping[str, str]) -> WorkListing:
        """List the bucket; the new objects in work items, with NiFi's state after them.

        A state recorded for another Bucket, Region, Prefix or Listing Strategy is dropped
        first (NiFi's onPropertyModified). Tracking Entities hands out every object in the
        window: the task decides against the map cache (:meth:`read_work`).
        """
        client = self._s3.get(context, context)
        bucket = context.get_property(self.BUCKET).evaluate_attribute_expressions().value or ""
        now = int(time.time() * 1000)  # S3's times are wall-clock times, as NiFi compares
        min_age = int(context.get_property(MIN_AGE).as_time_period("ms") or 0)
        max_age = context.get_property(MAX_AGE).as_time_period("ms")
        strategy = context.get_property(LISTING_STRATEGY).value
        tracking_timestamps = strategy == BY_TIMESTAMPS.value
        configuration = self._configuration(context, bucket)
        committed = state
        if state.get(CONFIGURATION_KEY) not in (None, configuration) or not tracking_timestamps:
            state = {}
        current = int(state.get(CURRENT_TIMESTAMP) or 0)
        keys = {v for k, v in state.items() if k.startswith(CURRENT_KEY_PREFIX)}
        found = []
        for entry in self._objects(context, client, bucket):
            modified = entry["lastModified"]
            if modified < current or (modified == current and entry["key"] in keys):
                continue
            if modified > now - min_age or (max_age is not None and modified < now - max_age):
                continue
            found.append(entry)
        stamped = {**state, CONFIGURATION_KEY: configuration} if tracking_timestamps else {}
        if not found:
            return WorkListing((), committed if strategy == BY_ENTITIES.value else stamped)
        found.sort(key=lambda e: e["lastModified"])  # stable: S3's key order within a time
        region = self._s3.region(context)
        payload: dict[str, Any] = {"bucket": bucket, "region": region}
        suffix = digest = ""
        entities = strategy == BY_ENTITIES.value
        if entities:
            payload["listing"] = configuration
            suffix = f"#{now}"  # each listing's item its own: the task picks what is new
            new = tracking.new_listing(
                committed,
                configuration,
                ((e["key"], e.get("version"), e["lastModified"], e["size"]) for e in found),
                self._entities_listed,
            )
            if new is None:
                return WorkListing((), committed)  # as the last listing, committed: none new
            self._entities_listed = digest = new
        items = []
        parts = -(-len(found) // ITEM_OBJECTS)
        for start in range(0, len(found), ITEM_OBJECTS):
            part = found[start : start + ITEM_OBJECTS]
            first = part[0]
            items.append(
                WorkItem(
                    f"{bucket}/{first['key']}@{first['lastModified']}+{len(part)}{suffix}",
                    {
                        **payload,
                        "objects": tuple(part),
                        # another strategy ran since: forget the tracked entities (NiFi's reset)
                        "forget": entities
                        and not start
                        and committed.get(CONFIGURATION_KEY) != configuration,
                        "part": start // ITEM_OBJECTS,
                        "parts": parts,
                        "now": now,
                    },
                    # Tracking Entities: the task emits only what the cache does not know
                    flowfiles=None if entities else len(part),
                )
            )
        if not tracking_timestamps:
            if not entities:  # No Tracking: no state
                return WorkListing(tuple(items), {})
            marker = {CONFIGURATION_KEY: configuration, tracking.LISTED_KEY: digest}
            return WorkListing(tuple(items), marker)
        latest = found[-1]["lastModified"]
        newest = [e["key"] for e in found if e["lastModified"] == latest]
        if latest == current:
            newest = [*sorted(keys), *newest]
        new_state = {CURRENT_TIMESTAMP: str(latest), CONFIGURATION_KEY: configuration}
        new_state.update({f"{CURRENT_KEY_PREFIX}{i}": k for i, k in enumerate(newest)})
        return WorkListing(tuple(items), new_state)

    def _configuration(self, context: ProcessContext, bucket: str) -> str:
        """A digest of the values of NiFi's TRACKING_RESET_PROPERTY_DESCRIPTORS.

        NiFi's Custom Region has no property here: flowcore's Region takes any region.
        """
        prefix = context.get_property(PREFIX).evaluate_attribute_expressions().value or ""
        values = [bucket, self._s3.region(context), prefix]
        values.append(context.get_property(LISTING_STRATEGY).value or "")
        return hashlib.blake2b("\0".join(values).encode(), digest_size=8).hexdigest()

    def _objects(
        self, context: ProcessContext, client: Any, bucket: str
    ) -> Iterator[dict[str, Any]]:
        """Every object (or version) under Prefix, as the work item carries it."""
        prefix = context.get_property(PREFIX).evaluate_attribute_expressions().value or ""
        args: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix}
        delimiter = context.get_property(DELIMITER).value
        if delimiter:
            args["Delimiter"] = delimiter
        paging = {"PaginationConfig": {"PageSize": PAGE_KEYS}}
        if context.get_property(USE_VERSIONS).as_boolean():
            pages = client.get_paginator("list_object_versions").paginate(**args, **paging)
            for page in pages:
                for v in page.get("Versions", ()):
                    yield _entry(v, v.get("VersionId"), bool(v.get("IsLatest")))
            return
        if context.get_property(REQUESTER_PAYS).as_boolean():
            args["RequestPayer"] = "requester"
        v2 = context.get_property(LIST_TYPE).value == "2"
        paginator = client.get_paginator("list_objects_v2" if v2 else "list_objects")
        for page in paginator.paginate(**args, **paging):
            for o in page.get("Contents", ()):
                yield _entry(o, None, True)

    def requeue_work(
        self, state: Mapping[str, str], items: Sequence[WorkItem], committed: Mapping[str, str]
    ) -> Mapping[str, str]:
        """A failed read leaves the committed state: the bucket is listed again from there."""
        del state, items
        self._entities_listed = ""
        return dict(committed)

    # --- the task's side ---------------------------------------------------------------------

    def read_work(self, context: ProcessContext, session: ProcessSession, item: WorkItem) -> None:
        """One FlowFile per listed object with NiFi's attributes, or one of records.

        Under Tracking Entities only the objects the map cache does not know (or knows older
        or of another size) are emitted; the cache entry changes in this session.
        """
        bucket, region = item.payload["bucket"], item.payload["region"]
        objects = list(item.payload["objects"])
        if "listing" in item.payload:
            objects = self._untracked(context, session, item.payload, objects)
            if not objects:
                context.yield_()  # nothing new: NiFi's tracker yields
                return
        tags = bool(context.get_property(WRITE_OBJECT_TAGS).as_boolean())
        metadata = bool(context.get_property(WRITE_USER_METADATA).as_boolean())
        client = self._s3.get(context, session) if (tags or metadata) and objects else None
        records = writer_set(context, RECORD_WRITER)
        rows = []
        for entry in objects:
            target = {"Bucket": bucket, "Key": entry["key"]}
            if entry.get("version"):
                target["VersionId"] = entry["version"]
            tagging = metadata_of = None
            if client is not None and tags:
                tagging = {
                    t["Key"]: t["Value"]
                    for t in client.get_object_tagging(**target).get("TagSet", ())
                }
            if client is not None and metadata:
                metadata_of = dict(client.head_object(**target).get("Metadata") or {})
            if records:
                rows.append(_record(entry, bucket, tagging, metadata_of))
                continue
            attributes = {
                "s3.bucket": bucket,
                "s3.region": region,
                "filename": entry["key"],
                "s3.etag": entry["etag"],
                "s3.isLatest": "true" if entry["isLatest"] else "false",
                "s3.lastModified": str(entry["lastModified"]),
                "s3.length": str(entry["size"]),
                "s3.storeClass": entry["storageClass"],
            }
            if entry.get("owner"):
                attributes["s3.owner"] = entry["owner"]
            if entry.get("version"):
                attributes["s3.version"] = entry["version"]
            for name, value in (tagging or {}).items():
                attributes[f"s3.tag.{name}"] = value
            for name, value in (metadata_of or {}).items():
                attributes[f"s3.user.metadata.{name}"] = value
            flowfile = session.put_all_attributes(session.create(), attributes)
            session.transfer(flowfile, SUCCESS)
        if records:
            write_listing(
                context, session, RECORD_WRITER, S3_OBJECT_SCHEMA, rows=rows,
                attributes={"s3.region": region},
            )  # fmt: skip

    def _untracked(
        self,
        context: ProcessContext,
        session: ProcessSession,
        payload: Mapping[str, Any],
        objects: Sequence[dict[str, Any]],
    ) -> list[dict[str, Any]]:
        """NiFi's ListedEntityTracker: the objects new or changed since the cache's entry."""
        return tracking.track_in_session(
            context,
            session,
            payload,
            objects,
            lambda e: (
                f"{e['key']}_{e.get('version') or 'null'}",
                e["lastModified"],
                e["size"],
            ),
            now_ms=int(time.time() * 1000),
        )


def _record(
    entry: Mapping[str, Any],
    bucket: str,
    tagging: Mapping[str, str] | None,
    metadata: Mapping[str, str] | None,
) -> dict[str, Any]:
    """One object as NiFi's RecordObjectWriter writes it."""
    return {
        "key": entry["key"],
        "bucket": bucket,
        "owner": entry.get("owner") or None,
        "etag": entry["etag"],
        "lastModified": entry["lastModified"],
        "size": entry["size"],
        "storageClass": entry["storageClass"],
        "latest": bool(entry["isLatest"]),
        "versionId": entry.get("version"),
        "tags": tagging,
        "userMetadata": metadata,
    }


def _entry(summary: Mapping[str, Any], version: str | None, latest: bool) -> dict[str, Any]:
    """An object summary as a work item carries it (plain values: it is shipped to tasks)."""
    owner = summary.get("Owner") or {}
    return {
        "key": summary["Key"],
        "etag": str(summary.get("ETag") or "").strip('"'),
        "lastModified": int(summary["LastModified"].timestamp() * 1000),
        "size": int(summary.get("Size") or 0),
        "storageClass": str(summary.get("StorageClass") or "STANDARD"),
        "owner": owner.get("ID") or "",  # NiFi: owner().id() (s3.owner, the record's owner)
        "version": version if version and version != "null" else None,
        "isLatest": latest,
    }
