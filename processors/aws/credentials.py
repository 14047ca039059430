"""AWSCredentialsProviderControllerService: how the S3 processors authenticate (NiFi's service).

One of: an access key pair, a credentials file (with a profile), boto3's default chain, or
anonymous access; optionally an assumed role (STS) on top. The secret values are sensitive
properties: never logged, shown or exported.
"""

from __future__ import annotations

from typing import Any, ClassVar

from flowcore.controller_service import ControllerService, ServiceContext
from flowcore.errors import ConfigurationError
from flowcore.properties import PropertyDescriptor
from flowcore.validators import (
    BOOLEAN_VALIDATOR,
    FILE_EXISTS_VALIDATOR,
    NON_EMPTY_VALIDATOR,
    ValidationResult,
)

__all__ = ["AWSCredentialsProviderControllerService", "require_boto3"]

INTERFACE = "AWSCredentialsProviderService"


def require_boto3() -> Any:
    """The boto3 module, or one clear error naming the extra to install."""
    try:
        import boto3  # noqa: PLC0415 (optional dependency, imported on use)
    except ImportError:
        msg = "the S3 processors need boto3: pip install 'flowcore[aws]'"
        raise ConfigurationError(msg) from None
    return boto3


def _flag(display: str, old: str, description: str) -> PropertyDescriptor:
    return PropertyDescriptor(
        display,
        display,
        description=description,
        default="false",
        allowable_values=("true", "false"),
        validators=(BOOLEAN_VALIDATOR,),
        aliases=(old,),
    )


USE_DEFAULT = _flag(
    "Use Default Credentials",
    "default-credentials",
    "If true, uses the Default Credential chain, including EC2 instance profiles or roles, "
    "environment variables, default user credentials, etc.",
)
ACCESS_KEY = PropertyDescriptor(
    "Access Key ID", "Access Key ID", sensitive=True, validators=(NON_EMPTY_VALIDATOR,),
    aliases=("Access Key",),
)  # fmt: skip
SECRET_KEY = PropertyDescriptor(
    "Secret Access Key", "Secret Access Key", sensitive=True, validators=(NON_EMPTY_VALIDATOR,),
    aliases=("Secret Key",),
)  # fmt: skip
CREDENTIALS_FILE = PropertyDescriptor(
    "Credentials File",
    description="Path to a file containing AWS access key and secret key in properties file "
    "format.",
    validators=(FILE_EXISTS_VALIDATOR,),
)
PROFILE_NAME = PropertyDescriptor(
    "Profile Name", "Profile Name", description="The AWS profile name for credentials from the "
    "profile configuration file.", aliases=("profile-name",),
)  # fmt: skip
USE_ANONYMOUS = _flag(
    "Use Anonymous Credentials",
    "anonymous-credentials",
    "If true, uses Anonymous credentials",
)
ASSUME_ROLE_ARN = PropertyDescriptor(
    "Assume Role ARN", "Assume Role ARN",
    description="The AWS Role ARN for cross account access. This is used in conjunction with "
    "Assume Role Session Name and other Assume Role properties.", aliases=("assume-role-arn",),
)  # fmt: skip
ASSUME_ROLE_NAME = PropertyDescriptor(
    "Assume Role Session Name", "Assume Role Session Name",
    description="The AWS Role Session Name for cross account access.",
    aliases=("assume-role-name",),
)  # fmt: skip
SESSION_TIME = PropertyDescriptor(
    "Assume Role Session Time", "Assume Role Session Time", default="3600",
    description="Session time for role based session (between 900 and 3600 seconds).",
    aliases=("Session Time",),
)  # fmt: skip
EXTERNAL_ID = PropertyDescriptor(
    "Assume Role External ID", "Assume Role External ID",
    description="External ID for cross-account access.", aliases=("assume-role-external-id",),
)  # fmt: skip
STS_REGION = PropertyDescriptor(
    "Assume Role STS Region", "Assume Role STS Region", default="us-west-2",
    description="The AWS Security Token Service (STS) region", aliases=("assume-role-sts-region",),
)  # fmt: skip
STS_ENDPOINT = PropertyDescriptor(
    "Assume Role STS Endpoint Override", "Assume Role STS Endpoint Override",
    description="The default AWS Security Token Service (STS) endpoint is determined by the "
    "region; this overrides it.", aliases=("assume-role-sts-endpoint",),
)  # fmt: skip


class AWSCredentialsProviderControllerService(ControllerService):
    """Defines credentials for the AWS processors (NiFi's AWSCredentialsProviderControllerService).

    Strategies, as NiFi picks them: Use Default Credentials; Access Key ID and Secret Access
    Key; Credentials File (NiFi's properties format ``accessKey=``/``secretKey=``); Profile
    Name; Use Anonymous Credentials. Assume Role ARN assumes a role through STS with the chosen
    credentials. With no strategy set, boto3's default chain is used, as NiFi's implicit default.
    """

    implements: ClassVar = (INTERFACE,)
    nifi_types: ClassVar = (
        "org.apache.nifi.processors.aws.credentials.provider.service."
        "AWSCredentialsProviderControllerService",
    )
    nifi_bundle: ClassVar = ("org.apache.nifi", "nifi-aws-nar")
    tags: ClassVar = ("aws", "credentials", "provider")
    property_descriptors: ClassVar = (
        USE_DEFAULT, ACCESS_KEY, SECRET_KEY, CREDENTIALS_FILE, PROFILE_NAME, USE_ANONYMOUS,
        ASSUME_ROLE_ARN, ASSUME_ROLE_NAME, SESSION_TIME, EXTERNAL_ID, STS_REGION, STS_ENDPOINT,
    )  # fmt: skip

    def custom_validate(self, values: Any) -> list[ValidationResult]:
        """NiFi's checks: a key pair is whole, one strategy at most, a role has a session name."""
        problems = []
        access, secret = values.get(ACCESS_KEY.name), values.get(SECRET_KEY.name)
        if bool(access) != bool(secret):
            problems.append(
                ValidationResult(
                    "Access Key ID",
                    None,
                    False,
                    "Access Key ID and Secret Access Key must both be set, or neither",
                )
            )
        chosen = [
            name
            for name, on in (
                ("Access Key ID", bool(access)),
                ("Credentials File", bool(values.get(CREDENTIALS_FILE.name))),
                ("Use Default Credentials", values.get(USE_DEFAULT.name) == "true"),
                ("Use Anonymous Credentials", values.get(USE_ANONYMOUS.name) == "true"),
            )
            if on
        ]
        if len(chosen) > 1:
            problems.append(
                ValidationResult(
                    chosen[1],
                    None,
                    False,
                    f"{chosen[0]} and {chosen[1]} are exclusive: choose one way to authenticate",
                )
            )
        if values.get(ASSUME_ROLE_ARN.name) and not values.get(ASSUME_ROLE_NAME.name):
            problems.append(
                ValidationResult(
                    "Assume Role Session Name",
                    None,
                    False,
                    "Assume Role Session Name is required with Assume Role ARN",
                )
            )
        return problems

    def on_enabled(self, context: ServiceContext) -> None:
        """Read the configuration (the boto3 session is made per client, in the task)."""
        self._values = {d.name: context.get_property(d).value for d in self.property_descriptors}

    def __repr__(self) -> str:
        """Never the secrets."""
        return f"{type(self).__name__}(<credentials>)"

    @property
    def anonymous(self) -> bool:
        """Whether requests go unsigned (NiFi's anonymous credentials)."""
        return self._value(USE_ANONYMOUS) == "true"

    def fingerprint(self) -> int:
        """A digest of the configuration (a process's clients are shared by it)."""
        return hash(tuple(self._value(d) for d in self.property_descriptors))

    def _value(self, descriptor: PropertyDescriptor) -> str | None:
        values = getattr(self, "_values", None)
        if values is None:
            return self.effective_value(descriptor)
        return values.get(descriptor.name)

    def session(self, region: str | None) -> Any:
        """A boto3 session with these credentials (an assumed role's, when one is set)."""
        boto3 = require_boto3()
        access, secret = self._value(ACCESS_KEY), self._value(SECRET_KEY)
        if access and secret:
            base = boto3.session.Session(
                aws_access_key_id=access, aws_secret_access_key=secret, region_name=region
            )
        elif self._value(CREDENTIALS_FILE):
            base = boto3.session.Session(
                region_name=region, **_read_file(self._value(CREDENTIALS_FILE))
            )
        elif self._value(PROFILE_NAME):
            base = boto3.session.Session(profile_name=self._value(PROFILE_NAME), region_name=region)
        else:
            base = boto3.session.Session(region_name=region)
        role = self._value(ASSUME_ROLE_ARN)
        if not role:
            return base
        sts = base.client(
            "sts",
            region_name=self._value(STS_REGION) or region,
            endpoint_url=self._value(STS_ENDPOINT) or None,
        )
        args = {
            "RoleArn": role,
            "RoleSessionName": self._value(ASSUME_ROLE_NAME) or "flowcore",
            "DurationSeconds": int(self._value(SESSION_TIME) or 3600),
        }
        if self._value(EXTERNAL_ID):
            args["ExternalId"] = self._value(EXTERNAL_ID)
        granted = sts.assume_role(**args)["Credentials"]
        return boto3.session.Session(
            aws_access_key_id=granted["AccessKeyId"],
            aws_secret_access_key=granted["SecretAccessKey"],
            aws_session_token=granted["SessionToken"],
            region_name=region,
        )


def _read_file(path: str | None) -> dict[str, str]:
    """NiFi's credentials file (Java properties: ``accessKey=...``, ``secretKey=...``)."""
    values: dict[str, str] = {}
    with open(path or "", encoding="utf-8") as handle:
        for raw in handle:
            line = raw.strip()
            if not line or line.startswith(("#", "!")) or "=" not in line:
                continue
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    if "accessKey" not in values or "secretKey" not in values:
        msg = f"the AWS Credentials File {path} needs accessKey= and secretKey= lines"
        raise ConfigurationError(msg)
    return {"aws_access_key_id": values["accessKey"], "aws_secret_access_key": values["secretKey"]}
