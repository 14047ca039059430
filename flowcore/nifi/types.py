"""Which NiFi component type is which flowcore processor or service, and from which NiFi bundle.

NiFi names a component by its fully qualified Java class (``type``) and the NAR it comes from
(``bundle``: group, artifact, version). Import looks a type up here to find the flowcore processor
registered under the simple name; export writes the type and bundle back, so NiFi finds the
standard NAR that holds it. The table is explicit, as the registry of processors is: a processor
that is not here is flowcore's own (or a plugin's), and export names it under
:data:`FLOWCORE_BUNDLE`, which NiFi shows as a missing ("ghost") component it can still open.
"""

from __future__ import annotations

import attrs

__all__ = [
    "FLOWCORE_BUNDLE",
    "FLOWCORE_PACKAGE",
    "NIFI_PROCESSORS",
    "NIFI_VERSION",
    "NiFiBundle",
    "NiFiType",
    "nifi_type_of",
    "simple_name",
]

#: The NiFi version whose bundles an export names. NiFi resolves a bundle of another version when
#: it holds exactly one of that group and artifact, so an export opens on any 2.x.
NIFI_VERSION = "2.0.0"


@attrs.frozen
class NiFiBundle:
    """A NAR's coordinates, as a versioned component's ``bundle`` holds them."""

    group: str
    artifact: str
    version: str = NIFI_VERSION

    def to_json(self) -> dict[str, str]:
        """The ``bundle`` object of NiFi's JSON."""
        return {"group": self.group, "artifact": self.artifact, "version": self.version}


@attrs.frozen
class NiFiType:
    """A NiFi component type: its class name and the bundle it comes from."""

    type: str
    bundle: NiFiBundle

    @property
    def simple_name(self) -> str:
        """The class name without its package, the name flowcore registers processors under."""
        return simple_name(self.type)


_STANDARD = NiFiBundle("org.apache.nifi", "nifi-standard-nar")
_UPDATE_ATTRIBUTE = NiFiBundle("org.apache.nifi", "nifi-update-attribute-nar")
_JOLT = NiFiBundle("org.apache.nifi", "nifi-jolt-nar")  # NiFi 1.x: in the standard NAR
_AVRO = NiFiBundle("org.apache.nifi", "nifi-avro-nar")
_STANDARD_PACKAGE = "org.apache.nifi.processors.standard"
_KAFKA = NiFiBundle("org.apache.nifi", "nifi-kafka-nar")
_KAFKA_NAMES = ("ConsumeKafka", "PublishKafka")
_KAFKA_1X = "org.apache.nifi.processors.kafka.pubsub"
#: What an export names flowcore's own processors under.
FLOWCORE_PACKAGE = "io.flowcore.processors"
FLOWCORE_BUNDLE = NiFiBundle("io.flowcore", "flowcore-nar", "0.1.0")

_STANDARD_NAMES = (
    "AttributesToJSON",
    "CompressContent",
    "ControlRate",
    "ConvertRecord",
    "CryptographicHashContent",
    "DetectDuplicate",
    "DuplicateFlowFile",
    "EvaluateJsonPath",
    "EvaluateXPath",
    "ExecuteSQL",
    "ExecuteSQLRecord",
    "ExtractText",
    "FetchDistributedMapCache",
    "FetchFile",
    "ForkEnrichment",
    "GenerateFlowFile",
    "GenerateTableFetch",
    "GetFile",
    "HandleHttpRequest",
    "HandleHttpResponse",
    "InvokeHTTP",
    "JoinEnrichment",
    "ListenHTTP",
    "ListFile",
    "LogAttribute",
    "LogMessage",
    "LookupRecord",
    "MergeContent",
    "MergeRecord",
    "ModifyBytes",
    "Notify",
    "PartitionRecord",
    "PutDatabaseRecord",
    "PutDistributedMapCache",
    "PutEmail",
    "PutFile",
    "PutSQL",
    "QueryDatabaseTable",
    "QueryDatabaseTableRecord",
    "QueryRecord",
    "ReplaceText",
    "RetryFlowFile",
    "RouteOnAttribute",
    "RouteOnContent",
    "RouteText",
    "SplitJson",
    "SplitRecord",
    "SplitText",
    "UnpackContent",
    "UpdateRecord",
    "ValidateRecord",
    "Wait",
)

#: flowcore's processors that are NiFi's, by the simple name flowcore registers them under.
NIFI_PROCESSORS: dict[str, NiFiType] = {
    **{name: NiFiType(f"{_STANDARD_PACKAGE}.{name}", _STANDARD) for name in _STANDARD_NAMES},
    "UpdateAttribute": NiFiType(
        "org.apache.nifi.processors.attributes.UpdateAttribute", _UPDATE_ATTRIBUTE
    ),
    "JoltTransformJSON": NiFiType("org.apache.nifi.processors.jolt.JoltTransformJSON", _JOLT),
    "ConvertAvroToJSON": NiFiType("org.apache.nifi.processors.avro.ConvertAvroToJSON", _AVRO),
    "ExtractAvroMetadata": NiFiType("org.apache.nifi.processors.avro.ExtractAvroMetadata", _AVRO),
    "JoltTransformRecord": NiFiType("org.apache.nifi.processors.jolt.JoltTransformRecord", _JOLT),
    **{n: NiFiType(f"org.apache.nifi.kafka.processors.{n}", _KAFKA) for n in _KAFKA_NAMES},
    **{
        n: NiFiType(f"{_STANDARD_PACKAGE}.{n}", _STANDARD)
        for n in ("FetchSFTP", "GetSFTP", "ListSFTP", "PutSFTP")
    },
    **{
        n: NiFiType(
            f"org.apache.nifi.processors.aws.s3.{n}", NiFiBundle("org.apache.nifi", "nifi-aws-nar")
        )
        for n in ("DeleteS3Object", "FetchS3Object", "ListS3", "PutS3Object", "TagS3Object")
    },
}


#: Class names NiFi gave a processor before its current one; an import takes them as that
#: processor (an export writes the current name).
FORMER_TYPES: dict[str, tuple[str, ...]] = {
    "JoltTransformJSON": (f"{_STANDARD_PACKAGE}.JoltTransformJSON",),  # NiFi 1.x: standard NAR
    "JoltTransformRecord": ("org.apache.nifi.processors.jolt.record.JoltTransformRecord",),
    **{n: (f"{_KAFKA_1X}.{n}_2_6", f"{_KAFKA_1X}.{n}Record_2_6") for n in _KAFKA_NAMES},
}


def simple_name(type_name: str) -> str:
    """``org.apache.nifi.processors.standard.SplitText`` -> ``SplitText``."""
    return type_name.rsplit(".", 1)[-1]


def nifi_type_of(name: str) -> NiFiType:
    """The NiFi type and bundle an export writes for the flowcore processor called *name*."""
    return NIFI_PROCESSORS.get(name) or NiFiType(f"{FLOWCORE_PACKAGE}.{name}", FLOWCORE_BUNDLE)
