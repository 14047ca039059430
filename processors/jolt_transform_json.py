"""JoltTransformJSON: reshape JSON with a Jolt specification (NiFi's processor, jolt-py inside)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
from pyjolt import PyJoltError
from pyjolt.transforms import Transform

from flowcore.expression import contains_expression
from flowcore.flowfile import FlowFile
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    ATTRIBUTE_KEY_VALIDATOR,
    BOOLEAN_VALIDATOR,
    DATA_SIZE_VALIDATOR,
    NON_EMPTY_VALIDATOR,
    POSITIVE_INTEGER_VALIDATOR,
    ValidationResult,
)
from processors._jolt import (
    CHAIN,
    CUSTOM,
    SORT,
    STRATEGIES,
    JoltSpecError,
    TransformCache,
    build_transform,
    parse_spec,
    read_spec_text,
)
from processors._json_text import InvalidJsonError, read_json, to_json

__all__ = ["JoltTransformJSON"]

FLOW_FILE = "FLOW_FILE"
ATTRIBUTE = "ATTRIBUTE"
JSON_LINES = "JSON_LINES"
_CONTENT_TYPES = {FLOW_FILE: "application/json", JSON_LINES: "application/jsonl"}

REL_SUCCESS = Relationship(
    "success",
    "The FlowFile with successfully transformed content or updated attribute will be routed "
    "to this relationship",
)
REL_FAILURE = Relationship(
    "failure",
    "If the JSON transformation fails (e.g., due to invalid JSON in the content or attribute), "
    "the original FlowFile is routed to this relationship.",
)

_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _escape_non_ascii(text: str) -> str:
    r"""Jackson's ESCAPE_NON_ASCII: every non-ASCII character as ``\\uXXXX`` (pairs past BMP)."""

    def escape(match: re.Match[str]) -> str:
        code = ord(match.group())
        if code < 0x10000:
            return f"\\u{code:04X}"
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04X}\\u{0xDC00 + (code & 0x3FF):04X}"

    return _NON_ASCII.sub(escape, text)


def _no_floats(value: Any) -> bool:
    """Whether *value* holds only JSON's plain types and no float (whose text Java writes apart)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        elif kind is float or kind not in _PLAIN:
            return False
    return True


_PLAIN = frozenset({str, int, bool, type(None)})


def _compact(value: Any) -> str:
    r"""Jackson's compact JSON of *value*, fast where the standard library writes the same.

    The standard library's C encoder is used when the value has no floats and the text no
    escaped control characters; otherwise the Jackson-exact writer is.

    The exact writer walks values in Python with ABC type checks, about 1 ms for a small
    document; the C encoder takes microseconds, and outside doubles (``1.0E10`` in Java) and
    control characters (``\\u001F`` upper case in Jackson) their texts are the same.
    """
    if _no_floats(value):
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        if "\\u00" not in text:
            return text
    return to_json(value)


@attrs.frozen
class _Settings:
    """The per-run settings, read once when scheduled (not per FlowFile)."""

    source: str
    limit: int
    pretty: bool
    retain_escapes: bool


class _TransformFailed(Exception):
    """This FlowFile cannot be transformed (goes to failure)."""


class JoltTransformJSON(Processor):
    """Applies a Jolt specification to JSON content (or an attribute, or JSON Lines).

    NiFi's JoltTransformJSON: ``Jolt Transform`` picks the Jolt operation (Chain by default,
    Shift, Default, Remove, Cardinality, Sort, the Modify forms, or Custom), ``Jolt
    Specification`` holds the spec's JSON, or names a file holding it, and may use Expression
    Language per FlowFile (each distinct evaluated spec is built once, up to ``Transform Cache
    Size`` kept). The output is written as NiFi's Jackson writes it, compact or pretty-printed.
    A FlowFile whose JSON does not parse, or whose transform fails, goes to ``failure`` unchanged.

    ``Custom`` (and chain entries whose ``operation`` is a dotted class name) loads a *Python*
    class, ``package.module.ClassName``, from ``Custom Module Directory``: constructed with the
    spec, it transforms with ``transform(input)`` or ``apply(input)``. NiFi's Java custom
    transforms in jars cannot run here; such a flow gets a validation error naming the class.
    """

    JOLT_TRANSFORM = PropertyDescriptor(
        "Jolt Transform",
        description="Specifies the Jolt Transformation that should be used with the provided "
        "specification.",
        required=True,
        default=CHAIN,
        allowable_values=tuple(
            AllowableValue(value, display, description)
            for value, (display, description) in STRATEGIES.items()
        ),
        aliases=("jolt-transform", "Jolt Transformation DSL"),
    )
    JOLT_SPEC = PropertyDescriptor(
        "Jolt Specification",
        description="Jolt Specification for transformation of JSON data. The value for this "
        "property may be the text of a Jolt specification or the path to a file containing a "
        "Jolt specification. 'Jolt Specification' must be set, or the value is ignored if the "
        "Jolt Sort Transformation is selected.",
        validators=(NON_EMPTY_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        aliases=("jolt-spec",),
    )
    CUSTOM_CLASS = PropertyDescriptor(
        "Custom Transformation Class Name",
        description="Fully Qualified Class Name for Custom Transformation (a Python class, "
        "package.module.ClassName, in flowcore)",
        validators=(NON_EMPTY_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        dependencies=[("Jolt Transform", CUSTOM)],
        aliases=("jolt-custom-class",),
    )
    MODULES = PropertyDescriptor(
        "Custom Module Directory",
        description="Comma-separated list of paths to files and/or directories which contain "
        "modules containing custom transformations (that are not included on NiFi's "
        "classpath). In flowcore: directories added to Python's import path.",
        el_scope=ExpressionLanguageScope.ENVIRONMENT,
        dependencies=[("Jolt Transform", CUSTOM)],
        aliases=("jolt-custom-modules",),
    )
    TRANSFORM_CACHE_SIZE = PropertyDescriptor(
        "Transform Cache Size",
        description="Compiling a Jolt Transform can be fairly expensive. Ideally, this will be "
        "done only once. However, if the Expression Language is used in the transform, we may "
        "need a new Transform for each FlowFile. This value controls how many of those "
        "Transforms we cache in memory in order to avoid having to compile the Transform each "
        "time.",
        required=True,
        default="1",
        validators=(POSITIVE_INTEGER_VALIDATOR,),
    )
    JSON_SOURCE = PropertyDescriptor(
        "JSON Source",
        description="Specifies whether the Jolt transformation is applied to FlowFile JSON "
        "content or to specified FlowFile JSON attribute.",
        required=True,
        default=FLOW_FILE,
        allowable_values=(
            AllowableValue(
                FLOW_FILE, FLOW_FILE, "Transformation applied to FlowFile content containing JSON"
            ),
            AllowableValue(
                ATTRIBUTE, ATTRIBUTE, "Transformation applied to FlowFile attribute containing JSON"
            ),
            AllowableValue(
                JSON_LINES,
                JSON_LINES,
                "Transformation applied to FlowFile content containing JSON Lines or NDJSON",
            ),
        ),
    )
    JSON_SOURCE_ATTRIBUTE = PropertyDescriptor(
        "JSON Source Attribute",
        description="The FlowFile attribute containing JSON to be transformed.",
        required=True,
        validators=(ATTRIBUTE_KEY_VALIDATOR,),
        dependencies=[("JSON Source", ATTRIBUTE)],
    )
    PRETTY_PRINT = PropertyDescriptor(
        "Pretty Print",
        description="Apply pretty print formatting to the output of the Jolt transform",
        required=True,
        default="false",
        allowable_values=("true", "false"),
        validators=(BOOLEAN_VALIDATOR,),
        dependencies=[("JSON Source", FLOW_FILE, ATTRIBUTE)],
        aliases=("pretty_print",),
    )
    MAX_STRING_LENGTH = PropertyDescriptor(
        "Max String Length",
        description="The maximum allowed length of a string value when parsing the JSON document",
        required=True,
        default="20 MB",
        validators=(DATA_SIZE_VALIDATOR,),
    )
    RETAIN_UNICODE_ESCAPE_SEQUENCES = PropertyDescriptor(
        "Retain Unicode Escape Sequences",
        description="Allows for retaining Unicode escape sequences instead of resolving them "
        "(e.g. retain text \\u00E9 without resolving to é)",
        required=True,
        default="false",
        allowable_values=("true", "false"),
        validators=(BOOLEAN_VALIDATOR,),
    )
    property_descriptors: ClassVar = (
        JOLT_TRANSFORM,
        JOLT_SPEC,
        CUSTOM_CLASS,
        MODULES,
        TRANSFORM_CACHE_SIZE,
        JSON_SOURCE,
        JSON_SOURCE_ATTRIBUTE,
        PRETTY_PRINT,
        MAX_STRING_LENGTH,
        RETAIN_UNICODE_ESCAPE_SEQUENCES,
    )
    relationships: ClassVar = (REL_SUCCESS, REL_FAILURE)
    supports_batching: ClassVar = True
    tags: ClassVar = (
        "json",
        "jolt",
        "transform",
        "chainr",
        "shift",
        "default",
        "remove",
        "cardinality",
        "sort",
    )
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "mime.type": "Set to application/json or application/jsonl based on configuration"
    }

    def __init__(self, **properties: object) -> None:
        super().__init__(**properties)
        self._cache: TransformCache | None = None
        self._fixed: Transform | None = None  # the one transform, when no EL can change it
        self._settings: _Settings | None = None

    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        state["_cache"] = None  # transforms are rebuilt where the processor is scheduled
        state["_fixed"] = None
        state["_settings"] = None
        return state

    # --- validation ---------------------------------------------------------------------------

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """NiFi's checks: a spec unless Sort, and a spec that builds (when it has no EL)."""
        strategy = values.get(self.JOLT_TRANSFORM.name) or CHAIN
        spec = values.get(self.JOLT_SPEC.name)
        custom = values.get(self.CUSTOM_CLASS.name)
        subject = self.JOLT_SPEC.display_name
        if not spec and strategy != SORT:
            why = "'Jolt Specification' must be set, or the Transformation must be 'Sort'"
            return [ValidationResult(subject, spec, False, why)]
        if strategy == SORT or contains_expression(spec) or contains_expression(custom):
            return []
        if strategy == CUSTOM and not custom:
            why = "A custom transformation class should be provided. "
            return [ValidationResult(self.CUSTOM_CLASS.display_name, custom, False, why)]
        try:
            build_transform(
                strategy,
                parse_spec(read_spec_text(spec or "")),
                custom_class=custom,
                module_dirs=_module_dirs(values.get(self.MODULES.name)),
            )
        except JoltSpecError as ex:
            return [ValidationResult(subject, spec, False, f"Specification not valid: {ex}")]
        return []

    # --- running ------------------------------------------------------------------------------

    def on_scheduled(self, context: ProcessContext) -> None:
        """A fresh transform cache of ``Transform Cache Size`` entries."""
        self._fixed = None
        self._settings = _Settings(
            source=context.get_property(self.JSON_SOURCE).value or FLOW_FILE,
            limit=int(context.get_property(self.MAX_STRING_LENGTH).as_data_size("B") or 0),
            pretty=bool(context.get_property(self.PRETTY_PRINT).as_boolean()),
            retain_escapes=bool(
                context.get_property(self.RETAIN_UNICODE_ESCAPE_SEQUENCES).as_boolean()
            ),
        )
        self._cache = TransformCache(
            context.get_property(self.TRANSFORM_CACHE_SIZE).as_integer() or 1
        )

    def _transform(self, context: ProcessContext, flowfile: FlowFile) -> Transform:
        """The transform for *flowfile*: built once per distinct evaluated spec."""
        if self._fixed is not None:
            return self._fixed
        if self._cache is None:
            self.on_scheduled(context)
        assert self._cache is not None
        strategy = context.get_property(self.JOLT_TRANSFORM).value or CHAIN
        spec_value = context.get_property(self.JOLT_SPEC)
        key = (
            spec_value.evaluate_attribute_expressions(flowfile).value
            if spec_value.is_set()
            else None
        )
        custom = context.get_property(self.CUSTOM_CLASS)
        custom_name = (
            custom.evaluate_attribute_expressions(flowfile).value if custom.is_set() else None
        )
        cache_key = key if strategy != CUSTOM else f"{custom_name}\n{key}"

        def build() -> Transform:
            spec = None
            if key is not None and strategy != SORT:
                spec = parse_spec(read_spec_text(key))
            modules = context.get_property(self.MODULES)
            dirs = _module_dirs(
                modules.evaluate_attribute_expressions().value if modules.is_set() else None
            )
            return build_transform(strategy, spec, custom_class=custom_name, module_dirs=dirs)

        try:
            transform = self._cache.get(cache_key, build)
        except JoltSpecError as ex:
            msg = f"Transform creation failed: {ex}"
            raise _TransformFailed(msg) from ex
        if not contains_expression(spec_value.value) and not contains_expression(custom.value):
            self._fixed = transform  # the same for every FlowFile: skip the evaluations
        return transform

    @staticmethod
    def _write(settings: _Settings, value: Any, *, pretty: bool) -> str:
        text = to_json(value, pretty=True) if pretty else _compact(value)
        return _escape_non_ascii(text) if settings.retain_escapes else text

    def _apply(self, transform: Transform, value: Any) -> Any:
        try:
            # the value was parsed for this call alone: jolt-py may work on it in place
            owned = getattr(transform, "_apply_owned", None)
            return owned(value) if owned is not None else transform.apply(value)
        except (PyJoltError, TypeError, ValueError, KeyError, IndexError, AttributeError) as ex:
            msg = f"the Jolt transform failed: {ex}"
            raise _TransformFailed(msg) from ex

    def _read(self, data: bytes, limit: int) -> Any:
        try:
            return read_json(data, limit)
        except InvalidJsonError as ex:
            msg = f"JSON parsing failed: {ex}"
            raise _TransformFailed(msg) from ex

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Transform one FlowFile's JSON; failures go to 'failure' unchanged."""
        original = session.get()
        if original is None:
            return
        if self._settings is None:
            self.on_scheduled(context)
        settings = self._settings
        assert settings is not None
        source, limit, pretty = settings.source, settings.limit, settings.pretty
        try:
            transform = self._transform(context, original)
            if source == ATTRIBUTE:
                name = context.get_property(self.JSON_SOURCE_ATTRIBUTE).value or ""
                text = original.attributes.get(name)
                if text is None or not text.strip():
                    msg = f"Content not found in FlowFile Attribute [{name}]"
                    raise _TransformFailed(msg)
                value = self._apply(transform, self._read(text.encode("utf-8"), limit))
                flowfile = session.put_attribute(
                    original, name, self._write(settings, value, pretty=pretty)
                )
            else:
                data = session.read_bytes(original)
                if source == JSON_LINES:
                    out = self._lines(settings, transform, data)
                else:
                    value = self._apply(transform, self._read(data, limit))
                    out = self._write(settings, value, pretty=pretty).encode("utf-8")
                flowfile = session.write(original, out)
                flowfile = session.put_attribute(flowfile, "mime.type", _CONTENT_TYPES[source])
                # NiFi reports CONTENT_MODIFIED with the Jolt Transform as details; flowcore's
                # session reports the content change itself, and an explicit report would add
                # a second event (the session does not merge them), so none is made here.
        except _TransformFailed as ex:
            context.logger.error("Failed to Transform %s: %s", original, ex)
            session.transfer(original, REL_FAILURE.name)
            return
        session.transfer(flowfile, REL_SUCCESS.name)

    def _lines(self, settings: _Settings, transform: Transform, data: bytes) -> bytes:
        """JSON Lines: each non-blank line transformed and written compact, newline-ended."""
        out: list[str] = []
        for line in data.decode("utf-8", "replace").split("\n"):
            if not line.strip():
                continue
            value = self._apply(transform, self._read(line.encode("utf-8"), settings.limit))
            out.append(self._write(settings, value, pretty=False))
            out.append("\n")
        return "".join(out).encode("utf-8")


def _module_dirs(value: str | None) -> tuple[str, ...]:
    return tuple(p.strip() for p in (value or "").split(",") if p.strip())
