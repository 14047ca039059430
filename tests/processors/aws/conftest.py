"""The S3 server fixtures for every test module here."""

from tests.processors.aws.s3_server import bucket, s3, s3_endpoint

__all__ = ["bucket", "s3", "s3_endpoint"]
