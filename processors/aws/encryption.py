"""StandardS3EncryptionService: how PutS3Object and FetchS3Object encrypt (NiFi's service).

NiFi's strategies by name: ``NONE``, ``SSE_S3`` (S3-managed keys, AES256), ``SSE_KMS`` (a KMS
key), ``SSE_C`` (a customer-supplied AES-256 key, sent with every request). The client-side
strategies (``CSE_KMS``, ``CSE_C``) need the AWS S3 Encryption Client, which has no Python
equivalent in boto3: they are refused at validation rather than uploading plaintext.
The key material and KMS key id are sensitive: never logged, shown or exported.

NiFi 1.x's service had one ``Key ID or Key Material`` property (``key-id-or-key-material``)
and a ``KMS Region``; a 1.x flow imports as NiFi 2's ``migrateProperties`` migrates it: the
value becomes the KMS Key ID or the Key Material by the strategy, and the region is dropped.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, ClassVar

from flowcore.controller_service import ControllerService, ServiceContext
from flowcore.errors import ConfigurationError
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.validators import ValidationResult

__all__ = ["INTERFACE", "STRATEGIES", "StandardS3EncryptionService"]

INTERFACE = "AmazonS3EncryptionService"
NONE, SSE_S3, SSE_KMS, SSE_C, CSE_KMS, CSE_C = (
    "NONE", "SSE_S3", "SSE_KMS", "SSE_C", "CSE_KMS", "CSE_C",
)  # fmt: skip
#: NiFi's strategies: name -> (display name, description).
STRATEGIES = {
    NONE: ("None", "No encryption."),
    SSE_S3: ("Server-side S3", "Use server-side, S3-managed encryption."),
    SSE_KMS: ("Server-side KMS", "Use server-side, KMS key to perform encryption."),
    SSE_C: ("Server-side Customer Key", "Use server-side, customer-supplied key to perform "
            "encryption."),
    CSE_KMS: ("Client-side KMS", "Use client-side, KMS key to perform encryption."),
    CSE_C: ("Client-side Customer Key", "Use client-side, customer-supplied key to perform "
            "encryption."),
}  # fmt: skip
_CLIENT_SIDE = (CSE_KMS, CSE_C)

ENCRYPTION_STRATEGY = PropertyDescriptor(
    "Encryption Strategy", description="Strategy to use for S3 data encryption and decryption.",
    required=True, default=NONE,
    allowable_values=tuple(AllowableValue(k, d, why) for k, (d, why) in STRATEGIES.items()),
    aliases=("encryption-strategy",),
)  # fmt: skip
KMS_KEY_ID = PropertyDescriptor(
    "KMS Key ID", description="The ID (ARN) of the KMS key used for Server-side or Client-side "
    "KMS encryption.", sensitive=True, el_scope=ExpressionLanguageScope.ENVIRONMENT,
)  # fmt: skip
KEY_MATERIAL = PropertyDescriptor(
    "Key Material", description="The key material used for Server-side or Client-side Customer "
    "Key encryption. The Key Material must be specified in Base64 encoded form. In case of "
    "Server-side Customer Key, the key must be an AES-256 key.", sensitive=True,
    el_scope=ExpressionLanguageScope.ENVIRONMENT,
)  # fmt: skip
COMMITMENT_POLICY = PropertyDescriptor(
    "Commitment Policy", description="The commitment policy for client-side encryption (kept "
    "for NiFi flows: flowcore has no client-side encryption).", required=True,
    default="REQUIRE_ENCRYPT_REQUIRE_DECRYPT", allowable_values=(
        "REQUIRE_ENCRYPT_REQUIRE_DECRYPT", "REQUIRE_ENCRYPT_ALLOW_DECRYPT",
        "FORBID_ENCRYPT_ALLOW_DECRYPT",
    ),
)  # fmt: skip


#: NiFi 1.x's key property (internal and display names), split by NiFi 2 by strategy.
OBSOLETE_KEY_VALUE = ("key-id-or-key-material", "Key ID or Key Material")
#: NiFi 1.x's KMS Region (client-side KMS only), which NiFi 2 removes.
OBSOLETE_KMS_REGION = ("kms-region", "KMS Region")


def _problem(subject: str, why: str) -> ValidationResult:
    return ValidationResult(subject, None, False, why)


def _decode_key(material: str) -> bytes:
    """The AES key from NiFi's Base64 Key Material (ValueError when it is not Base64)."""
    try:
        return base64.b64decode(material.strip(), validate=True)
    except (binascii.Error, ValueError) as error:
        raise ValueError(str(error)) from None


class StandardS3EncryptionService(ControllerService):
    """Adds configurable encryption to S3 Put and S3 Fetch operations (NiFi's service).

    The processors ask it for the request arguments of each call (:meth:`put_args`,
    :meth:`part_args`, :meth:`get_args`): SSE-S3 and SSE-KMS apply to the object's creation
    only (S3 decrypts on GET by itself); SSE-C sends the key on every call that touches the
    content, as S3 requires.
    """

    implements: ClassVar = (INTERFACE,)
    nifi_types: ClassVar = (
        "org.apache.nifi.processors.aws.s3.encryption.StandardS3EncryptionService",
    )
    nifi_bundle: ClassVar = ("org.apache.nifi", "nifi-aws-nar")
    tags: ClassVar = (
        "service",
        "aws",
        "s3",
        "encryption",
        "encrypt",
        "decryption",
        "decrypt",
        "key",
    )
    property_descriptors: ClassVar = (
        ENCRYPTION_STRATEGY,
        KMS_KEY_ID,
        KEY_MATERIAL,
        COMMITMENT_POLICY,
    )

    def __init__(self, name: str | None = None, **properties: Any) -> None:
        """The service; NiFi 1.x's key and region properties migrated as NiFi 2 does."""
        super().__init__(name, **self._migrated(properties))

    @classmethod
    def _migrated(cls, properties: Mapping[str, Any]) -> dict[str, Any]:
        """NiFi 2's ``migrateProperties``: 1.x's key value moved by strategy, region dropped.

        The value goes to KMS Key ID for the KMS strategies, to Key Material for the customer
        key ones, and nowhere for None and Server-side S3 (which take no key), as NiFi does.
        """
        out = {k: v for k, v in properties.items() if k not in OBSOLETE_KMS_REGION}
        legacy = next((k for k in OBSOLETE_KEY_VALUE if k in out), None)
        if legacy is None:
            return out
        value = out.pop(legacy)
        for other in OBSOLETE_KEY_VALUE:
            out.pop(other, None)
        strategy = next((str(v) for k, v in out.items() if k in ENCRYPTION_STRATEGY.names()), NONE)
        target = {
            SSE_KMS: KMS_KEY_ID,
            CSE_KMS: KMS_KEY_ID,
            SSE_C: KEY_MATERIAL,
            CSE_C: KEY_MATERIAL,
        }
        if value is not None and strategy in target:
            out[target[strategy].name] = value
        return out

    def custom_validate(self, values: Any) -> list[ValidationResult]:
        """NiFi's key checks per strategy; client-side strategies are refused (not built)."""
        strategy = values.get(ENCRYPTION_STRATEGY.name) or NONE
        if strategy in _CLIENT_SIDE:
            why = (
                f"{STRATEGIES[strategy][0]} encryption needs the AWS S3 Encryption Client, which "
                "flowcore does not have: use Server-side KMS or Server-side Customer Key"
            )
            return [_problem(ENCRYPTION_STRATEGY.name, why)]
        if strategy == SSE_KMS and not (values.get(KMS_KEY_ID.name) or "").strip():
            return [
                _problem(KMS_KEY_ID.name, "KMS Key ID is required by Server-side KMS: it is empty")
            ]
        if strategy == SSE_C:
            material = (values.get(KEY_MATERIAL.name) or "").strip()
            if not material:
                return [_problem(KEY_MATERIAL.name, "Key Material is empty")]
            try:
                key = _decode_key(material)
            except ValueError:
                return [_problem(KEY_MATERIAL.name, "Key Material is not in Base64 encoded form")]
            if len(key) != 32:
                why = f"Key Material is not a Base64 encoded AES-256 key ({len(key)} bytes, not 32)"
                return [_problem(KEY_MATERIAL.name, why)]
        return []

    def on_enabled(self, context: ServiceContext) -> None:
        """Read the strategy and its key (validated already)."""
        self._strategy = context.get_property(ENCRYPTION_STRATEGY).value or NONE
        if self._strategy in _CLIENT_SIDE:
            msg = f"Encryption Strategy {self._strategy} is not supported by flowcore"
            raise ConfigurationError(msg)
        kms = context.get_property(KMS_KEY_ID).evaluate_attribute_expressions().value
        material = context.get_property(KEY_MATERIAL).evaluate_attribute_expressions().value
        self._kms_key_id = kms or None
        self._key = _decode_key(material) if self._strategy == SSE_C and material else None

    def __repr__(self) -> str:
        """Never the key."""
        return f"{type(self).__name__}(<{getattr(self, '_strategy', 'not enabled')}>)"

    @property
    def strategy_name(self) -> str:
        """NiFi's strategy name (``SSE_S3``...), written to ``s3.encryptionStrategy``."""
        return getattr(self, "_strategy", None) or self.effective_value(ENCRYPTION_STRATEGY) or NONE

    @property
    def strategy_display_name(self) -> str:
        """NiFi's display name of the strategy (``Server-side S3``...)."""
        return STRATEGIES[self.strategy_name][0]

    def put_args(self) -> dict[str, Any]:
        """boto3 arguments of PutObject and CreateMultipartUpload."""
        if self.strategy_name == SSE_S3:
            return {"ServerSideEncryption": "AES256"}
        if self.strategy_name == SSE_KMS:
            return {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": self._kms_key_id}
        return self.part_args()

    def part_args(self) -> dict[str, Any]:
        """boto3 arguments of UploadPart (SSE-C's key; nothing for the other strategies)."""
        if self.strategy_name == SSE_C and self._key is not None:
            # botocore adds the Base64 form and the key's MD5 header itself.
            return {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": self._key}
        return {}

    def get_args(self) -> dict[str, Any]:
        """boto3 arguments of GetObject (SSE-C's key; S3 decrypts the others by itself)."""
        return self.part_args()
