"""The S3 server fixtures for every test module here."""

from tests.processors.aws.s3_server import api_calls, bucket, s3, s3_endpoint

__all__ = ["api_calls", "bucket", "s3", "s3_endpoint"]
