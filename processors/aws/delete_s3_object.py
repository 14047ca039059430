"""DeleteS3Object: delete an S3 object, or one version of it (NiFi's DeleteS3Object)."""

from __future__ import annotations

from typing import Any, ClassVar

from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import FAILURE, SUCCESS
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from processors.aws import _s3
from processors.aws.fetch_s3_object import _is_s3_error

__all__ = ["DeleteS3Object"]

VERSION = PropertyDescriptor(
    "Version", description="The Version of the Object to delete",
    el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
)  # fmt: skip


class DeleteS3Object(Processor):
    """Deletes a file from an Amazon S3 Bucket (NiFi's DeleteS3Object).

    Deleting is idempotent in S3 (a missing key succeeds), so a replay after a crash does no
    harm. A REMOTE_INVOCATION event 'Object deleted' names ``s3://bucket/key``; errors go to
    ``failure``, penalized, with NiFi's s3.* error attributes.
    """

    BUCKET = _s3.BUCKET
    KEY = _s3.KEY
    property_descriptors: ClassVar = (_s3.BUCKET, _s3.KEY, *_s3.COMMON, VERSION)
    relationships: ClassVar = (SUCCESS, FAILURE)
    tags: ClassVar = ("Amazon", "S3", "AWS", "Archive", "Delete")

    def __init__(self, **properties: object) -> None:
        super().__init__(**properties)
        self._s3 = _s3.S3Client()

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Delete the object one FlowFile names."""
        flowfile = session.get()
        if flowfile is None:
            return
        bucket = context.get_property(self.BUCKET).evaluate_attribute_expressions(flowfile).value
        key = context.get_property(self.KEY).evaluate_attribute_expressions(flowfile).value
        version = context.get_property(VERSION).evaluate_attribute_expressions(flowfile).value
        args: dict[str, Any] = {"Bucket": bucket, "Key": key}
        if version:
            args["VersionId"] = version
        try:
            self._s3.get(context, session, flowfile).delete_object(**args)
        except Exception as error:
            if not _is_s3_error(error):
                raise
            context.logger.error(
                "Failed to delete S3 Object %s from bucket %s for %s; routing to failure: %s",
                key, bucket, flowfile, _s3.describe(error),
            )  # fmt: skip
            flowfile = session.put_all_attributes(flowfile, _s3.error_attributes(error))
            session.transfer(session.penalize(flowfile), FAILURE)
            return
        uri = _s3.transit_uri(bucket or "", key or "")
        session.provenance.invoke_remote_process(flowfile, uri, details="Object deleted")
        session.transfer(flowfile, SUCCESS)
