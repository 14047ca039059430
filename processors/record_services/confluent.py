"""ConfluentSchemaRegistry: schemas from a Confluent-compatible Schema Registry over HTTP.

NiFi's service of that name: a schema name is a Confluent *subject*; a name is fetched from
``/subjects/{name}/versions/latest`` (or ``/versions/{n}`` with a Schema Version), an id (the
``confluent-encoded`` content header) from ``/schemas/ids/{id}``, whose subject and version come
from ``/schemas/ids/{id}/versions`` when the registry has it (5.5.4 and later). The URLs are
tried in order until one answers. Answers are cached ("Cache Size" entries, each for "Cache
Expiration"); every request is bounded by "Communications Timeout". Basic authentication,
TLS through an SSL Context Service, and ``request.header.*`` dynamic properties as headers.
"""

from __future__ import annotations

import collections
import threading
import time
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import IO, Any, ClassVar

import httpx

from flowcore.controller_service import ControllerService, ServiceContext
from flowcore.errors import ConfigurationError
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.records.avro_schema import parse_schema_text
from flowcore.records.schema import RecordSchema
from flowcore.units import parse_time_period
from flowcore.validators import (
    NON_EMPTY_VALIDATOR,
    NON_NEGATIVE_INTEGER_VALIDATOR,
    TIME_PERIOD_VALIDATOR,
    ValidationResult,
    Validator,
)
from processors.record_services._confluent_wire import (
    RegisteredSchema,
    confluent_header,
    read_confluent_id,
)
from processors.record_services.schema_access import SchemaRegistryService

__all__ = [
    "ConfluentEncodedSchemaReferenceReader",
    "ConfluentEncodedSchemaReferenceWriter",
    "ConfluentSchemaRegistry",
]

REQUEST_HEADER_PREFIX = "request.header."
_ACCEPT = "application/vnd.schemaregistry.v1+json"


def _urls_problem(value: str) -> str | None:
    for url in (part.strip() for part in value.split(",")):
        parsed = urllib.parse.urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            return f"{url!r} is not a valid http or https URL"
    return None


def _header_name_problem(name: str) -> str | None:
    if name.startswith(REQUEST_HEADER_PREFIX) and len(name) > len(REQUEST_HEADER_PREFIX):
        return None
    return "Dynamic property names must be of format 'request.header.*'"


URLS = PropertyDescriptor(
    "Schema Registry URLs",
    description="A comma-separated list of URLs of the Schema Registry to interact with",
    default="http://localhost:8081",
    required=True,
    validators=(Validator("MultipleURLValidator", _urls_problem),),
    el_scope=ExpressionLanguageScope.ENVIRONMENT,
    aliases=("url",),
)
SSL_CONTEXT = PropertyDescriptor(
    "SSL Context Service",
    description="Specifies the SSL Context Service to use for interacting with the Confluent "
    "Schema Registry",
    identifies_service="SSLContextProvider",
    aliases=("ssl-context",),
)
TIMEOUT = PropertyDescriptor(
    "Communications Timeout",
    description="Specifies how long to wait to receive data from the Schema Registry before "
    "considering the communications a failure",
    default="30 secs",
    required=True,
    validators=(TIME_PERIOD_VALIDATOR,),
    aliases=("timeout",),
)
CACHE_SIZE = PropertyDescriptor(
    "Cache Size",
    description="Specifies how many Schemas should be cached from the Schema Registry",
    default="1000",
    required=True,
    validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
    aliases=("cache-size",),
)
CACHE_EXPIRATION = PropertyDescriptor(
    "Cache Expiration",
    description="Specifies how long a Schema that is cached should remain in the cache. Once "
    "this time period elapses, a cached version of a schema will no longer be used, and the "
    "service will have to communicate with the Schema Registry again in order to obtain the "
    "schema.",
    default="1 hour",
    required=True,
    validators=(TIME_PERIOD_VALIDATOR,),
    aliases=("cache-expiration",),
)
AUTHENTICATION_TYPE = PropertyDescriptor(
    "Authentication Type",
    description="HTTP Client Authentication Type for Confluent Schema Registry",
    default="NONE",
    allowable_values=(AllowableValue("NONE", "NONE"), AllowableValue("BASIC", "BASIC")),
    aliases=("authentication-type",),
)
USERNAME = PropertyDescriptor(
    "Username",
    description="Username for authentication to Confluent Schema Registry",
    dependencies=((AUTHENTICATION_TYPE, "BASIC"),),
    aliases=("username",),
)
PASSWORD = PropertyDescriptor(
    "Password",
    description="Password for authentication to Confluent Schema Registry",
    sensitive=True,
    dependencies=((AUTHENTICATION_TYPE, "BASIC"),),
    aliases=("password",),
)


class _Cache:
    """NiFi's CachingSchemaRegistryClient: bounded (least recently used out), entries expire."""

    def __init__(self, size: int, seconds: float) -> None:
        self._size = size
        self._seconds = seconds
        self._entries: collections.OrderedDict[Any, tuple[float, RegisteredSchema]] = (
            collections.OrderedDict()
        )
        self._lock = threading.Lock()

    def get(self, key: Any) -> RegisteredSchema | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if time.monotonic() - entry[0] >= self._seconds:
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def put(self, key: Any, value: RegisteredSchema) -> None:
        if self._size <= 0:
            return
        with self._lock:
            self._entries[key] = (time.monotonic(), value)
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)


class ConfluentSchemaRegistry(SchemaRegistryService):
    """A Schema Registry that reads the Confluent Schema Registry (a subject is a schema name)."""

    nifi_types: ClassVar = ("org.apache.nifi.confluent.schemaregistry.ConfluentSchemaRegistry",)
    nifi_bundle: ClassVar = ("org.apache.nifi", "nifi-confluent-platform-nar")
    tags: ClassVar = ("schema", "registry", "confluent", "avro", "kafka")
    supports_dynamic_properties: ClassVar = True
    property_descriptors: ClassVar = (
        URLS,
        SSL_CONTEXT,
        TIMEOUT,
        CACHE_SIZE,
        CACHE_EXPIRATION,
        AUTHENTICATION_TYPE,
        USERNAME,
        PASSWORD,
    )

    def dynamic_descriptor(self, name: str) -> PropertyDescriptor:
        """``request.header.<Name>``: a header sent with every request."""
        return PropertyDescriptor(
            name,
            description="An HTTP header sent in REST requests to the Confluent Schema Registry",
            validators=(
                NON_EMPTY_VALIDATOR,
                Validator("RequestHeaderValidator", lambda _value: _header_name_problem(name)),
            ),
            dynamic=True,
        )

    def custom_validate(self, values: Mapping[str, str | None]) -> Iterable[ValidationResult]:
        """NiFi's checks: HTTPS with an SSL context; a username and password for BASIC."""
        problems = []
        urls = [u.strip() for u in (values.get("Schema Registry URLs") or "").split(",")]
        if values.get("SSL Context Service"):
            insecure = [u for u in urls if not u.startswith("https")]
            if insecure:
                problems.append(
                    ValidationResult(
                        "Schema Registry URLs",
                        insecure[0],
                        False,
                        "When SSL Context is configured, all Schema Registry URL's must use "
                        "HTTPS, not HTTP",
                    )
                )
        if values.get("Authentication Type") == "BASIC":
            for name in ("Username", "Password"):
                if not (values.get(name) or "").strip():
                    problems.append(
                        ValidationResult(
                            name, None, False, f"{name} is required for Basic Authentication"
                        )
                    )
        return problems

    def on_enabled(self, context: ServiceContext) -> None:
        """Open the HTTP client (TLS, authentication, headers, timeout) and the cache."""
        value = self.get_property
        self._urls = [
            u.strip().rstrip("/")
            for u in (
                value("Schema Registry URLs").evaluate_attribute_expressions({}).value or ""
            ).split(",")
            if u.strip()
        ]
        timeout = parse_time_period(value("Communications Timeout").value or "30 secs")
        ssl_name = value("SSL Context Service").value
        # plain http needs no trust store (loading the default one costs a few tenths of a second)
        verify: Any = any(url.startswith("https") for url in self._urls)
        if ssl_name:
            verify = context.controller_service(ssl_name).create_context()  # type: ignore[attr-defined]
        auth = None
        if value("Authentication Type").value == "BASIC":
            auth = httpx.BasicAuth(value("Username").value or "", value("Password").value or "")
        headers = {"Accept": _ACCEPT}
        for name, header in self.dynamic_properties.items():
            if name.startswith(REQUEST_HEADER_PREFIX):
                headers[name[len(REQUEST_HEADER_PREFIX) :]] = header
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout), verify=verify, auth=auth, headers=headers
        )
        self._cache = _Cache(
            int(value("Cache Size").value or "1000"),
            parse_time_period(value("Cache Expiration").value or "1 hour"),
        )

    def on_disabled(self) -> None:
        """Close the HTTP client."""
        client = getattr(self, "_client", None)
        if client is not None:
            client.close()

    # --- lookups --------------------------------------------------------------------------------

    def retrieve_schema(self, name: str, version: int | None = None) -> RecordSchema:
        """The schema of subject *name* (its latest version, or *version*).

        Raises:
            ConfigurationError: no such subject/version, or no registry URL answered.
        """
        return self.registered(name, version).schema

    def registered(self, name: str, version: int | None = None) -> RegisteredSchema:
        """Subject *name*'s schema with its id and version (cached)."""
        key = ("name", name, version)
        found = self._cache.get(key)
        if found is None:
            quoted = urllib.parse.quote(name, safe="")
            path = f"/subjects/{quoted}/versions/{'latest' if version is None else version}"
            body = self._get(path, f"name {name!r}")
            found = self._schema(body, name=body.get("subject", name), version=body.get("version"))
            self._cache.put(key, found)
        return found

    def schema_by_id(self, schema_id: int) -> RegisteredSchema:
        """The schema registered under *schema_id* (cached).

        Raises:
            ConfigurationError: no such id, or no registry URL answered.
        """
        key = ("id", schema_id)
        found = self._cache.get(key)
        if found is None:
            body = self._get(f"/schemas/ids/{schema_id}", f"id {schema_id}")
            body.setdefault("id", schema_id)
            name = version = None
            try:
                versions = self._get(f"/schemas/ids/{schema_id}/versions", f"id {schema_id}")
            except ConfigurationError:
                versions = None  # registries before 5.5.4: the schema has no name then
            if isinstance(versions, list) and versions:
                name = versions[0].get("subject")
                version = versions[0].get("version")
            found = self._schema(body, name=name, version=version)
            self._cache.put(key, found)
        return found

    def _schema(self, body: Any, *, name: str | None, version: Any) -> RegisteredSchema:
        schema_type = body.get("schemaType", "AVRO")
        if schema_type != "AVRO":
            msg = (
                f"the registry's schema {name or body.get('id')!r} is {schema_type}; flowcore "
                "reads Avro schemas only"
            )
            raise ConfigurationError(msg)
        text = body.get("schema")
        if not isinstance(text, str):
            msg = f"the registry's answer for {name or body.get('id')!r} holds no schema text"
            raise ConfigurationError(msg)
        return RegisteredSchema(
            parse_schema_text(text),
            text,
            int(body["id"]),
            name,
            int(version) if version is not None else None,
        )

    def _get(self, path: str, what: str) -> Any:
        """The JSON answer of the first URL that answers *path*.

        Raises:
            ConfigurationError: the schema is not found (404), or no URL answered.
        """
        failures = []
        for base in self._urls:
            url = base + path
            try:
                response = self._client.get(url)
            except httpx.HTTPError as exc:
                failures.append(f"{url}: {type(exc).__name__}: {exc}")
                continue
            if response.status_code == 404:
                msg = f"Unable to find schema with {what} in the Schema Registry at {base}"
                raise ConfigurationError(msg)
            if response.status_code >= 400:
                failures.append(f"{url}: HTTP {response.status_code} {response.text[:200]}")
                continue
            try:
                return response.json()
            except ValueError:
                failures.append(f"{url}: the answer is not JSON")
        msg = (
            f"Failed to retrieve schema with {what} from the Schema Registry: "
            + "; ".join(failures)
            + " (check Schema Registry URLs and the registry's availability)"
        )
        raise ConfigurationError(msg)


class ConfluentEncodedSchemaReferenceReader(ControllerService):
    """Reads the schema id of Confluent's content header: a 0 byte and a 4-byte integer.

    NiFi 2's way to read Confluent-encoded content: a reader with "Schema Access Strategy"
    ``schema-reference-reader`` names this service and a ConfluentSchemaRegistry.
    """

    implements: ClassVar = ("org.apache.nifi.schemaregistry.services.SchemaReferenceReader",)
    nifi_types: ClassVar = (
        "org.apache.nifi.confluent.schemaregistry.ConfluentEncodedSchemaReferenceReader",
    )
    nifi_bundle: ClassVar = ("org.apache.nifi", "nifi-confluent-platform-nar")
    tags: ClassVar = ("confluent", "schema", "registry", "kafka", "avro")

    def schema_reference(self, attributes: Mapping[str, str], stream: IO[bytes]) -> int:
        """The schema id at the start of *stream* (NiFi's ``getSchemaIdentifier``).

        Raises:
            RecordError: the content does not start with Confluent's header.
        """
        del attributes
        return read_confluent_id(stream)


class ConfluentEncodedSchemaReferenceWriter(ControllerService):
    """Writes the schema id as Confluent's content header: a 0 byte and a 4-byte integer.

    NiFi 2's way to write Confluent-encoded content: a writer with "Schema Write Strategy"
    ``schema-reference-writer`` names this service.
    """

    implements: ClassVar = ("org.apache.nifi.schemaregistry.services.SchemaReferenceWriter",)
    nifi_types: ClassVar = (
        "org.apache.nifi.confluent.schemaregistry.ConfluentEncodedSchemaReferenceWriter",
    )
    nifi_bundle: ClassVar = ("org.apache.nifi", "nifi-confluent-platform-nar")
    tags: ClassVar = ("confluent", "schema", "registry", "kafka", "avro")

    def header(self, schema_id: int) -> bytes:
        """The header referencing *schema_id* (NiFi's ``writeHeader``)."""
        return confluent_header(schema_id)
