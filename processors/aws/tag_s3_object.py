"""TagS3Object: add a tag to an S3 object (NiFi's TagS3Object)."""

from __future__ import annotations

from typing import Any, ClassVar

from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import FAILURE, SUCCESS
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import NON_BLANK_VALIDATOR
from processors.aws import _s3
from processors.aws.fetch_s3_object import _is_s3_error

__all__ = ["TagS3Object"]

_FLOWFILE = ExpressionLanguageScope.FLOWFILE_ATTRIBUTES
TAG_KEY = PropertyDescriptor(
    "Tag Key", description="The key of the tag that will be set on the S3 Object",
    required=True, validators=(NON_BLANK_VALIDATOR,), el_scope=_FLOWFILE, aliases=("tag-key",),
)  # fmt: skip
TAG_VALUE = PropertyDescriptor(
    "Tag Value", description="The value of the tag that will be set on the S3 Object",
    required=True, validators=(NON_BLANK_VALIDATOR,), el_scope=_FLOWFILE,
    aliases=("tag-value",),
)  # fmt: skip
APPEND_TAG = PropertyDescriptor(
    "Append Tag", description="If set to true, the tag will be appended to the existing set of "
    "tags on the S3 object. Any existing tags with the same key as the new tag will be updated "
    "with the specified value. If set to false, the existing tags will be removed and the new "
    "tag will be set on the S3 object.", required=True, default="true",
    allowable_values=("true", "false"), aliases=("append-tag",),
)  # fmt: skip
VERSION = PropertyDescriptor(
    "Version ID", description="The Version of the Object to tag", el_scope=_FLOWFILE,
    aliases=("version",),
)  # fmt: skip


class TagS3Object(Processor):
    """Adds or updates a tag on an Amazon S3 Object (NiFi's TagS3Object).

    The object's tags after the call become ``s3.tag.<key>`` attributes (those before it
    removed). Setting a tag is idempotent, so a replay after a crash is harmless. Errors go to
    ``failure``, penalized, with NiFi's s3.* error attributes.
    """

    BUCKET = _s3.BUCKET
    KEY = _s3.KEY
    property_descriptors: ClassVar = (
        _s3.BUCKET, _s3.KEY, *_s3.COMMON, TAG_KEY, TAG_VALUE, APPEND_TAG, VERSION,
    )  # fmt: skip
    relationships: ClassVar = (SUCCESS, FAILURE)
    tags: ClassVar = ("Amazon", "S3", "AWS", "Archive", "Tag")
    writes_attributes: ClassVar = {"s3.tag.___": "The tags associated with the S3 object"}

    def __init__(self, **properties: object) -> None:
        super().__init__(**properties)
        self._s3 = _s3.S3Client()

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Tag the object one FlowFile names."""
        flowfile = session.get()
        if flowfile is None:
            return
        value_of = lambda d: context.get_property(d).evaluate_attribute_expressions(flowfile).value  # noqa: E731
        bucket, key, version = value_of(self.BUCKET), value_of(self.KEY), value_of(VERSION)
        tag_key, tag_value = value_of(TAG_KEY), value_of(TAG_VALUE)
        target: dict[str, Any] = {"Bucket": bucket, "Key": key}
        if version:
            target["VersionId"] = version
        try:
            client = self._s3.get(context, session, flowfile)
            tags: dict[str, str] = {}
            if context.get_property(APPEND_TAG).as_boolean():
                got = client.get_object_tagging(**target)["TagSet"]
                tags = {t["Key"]: t["Value"] for t in got}
            tags[tag_key or ""] = tag_value or ""
            tag_set = [{"Key": k, "Value": v} for k, v in tags.items()]
            client.put_object_tagging(**target, Tagging={"TagSet": tag_set})
        except Exception as error:
            if not _is_s3_error(error):
                raise
            context.logger.error(
                "Failed to tag S3 Object %s in bucket %s for %s; routing to failure: %s",
                key, bucket, flowfile, _s3.describe(error),
            )  # fmt: skip
            flowfile = session.put_all_attributes(flowfile, _s3.error_attributes(error))
            session.transfer(session.penalize(flowfile), FAILURE)
            return
        old = [name for name in flowfile.attributes if name.startswith("s3.tag.")]
        for name in old:
            flowfile = session.remove_attribute(flowfile, name)
        flowfile = session.put_all_attributes(flowfile, {f"s3.tag.{k}": v for k, v in tags.items()})
        uri = _s3.transit_uri(bucket or "", key or "")
        session.provenance.invoke_remote_process(flowfile, uri, details="Object tagged")
        session.transfer(flowfile, SUCCESS)
