"""The SFTP server fixtures for every test module here."""

from tests.processors.sftp.sftp_server import remote, sftp_server

__all__ = ["remote", "sftp_server"]
