"""NiFi's Parameter Contexts: named values that properties reference as ``#{name}``.

A :class:`ParameterContext` holds :class:`Parameter` values (name, value, description, the
sensitive flag) and may inherit other contexts. A name resolves in NiFi's order: a parameter of
the context itself wins, then the inherited contexts in their listed order, each searched depth
first (its own parameters, then its own inherited contexts).

References are NiFi's syntax (``#{name}``; a run of ``#`` before ``{`` collapses in pairs, so
``##{name}`` is the literal text ``#{name}`` and ``###{name}`` is ``#`` and the value). They are
substituted when a property value is read, before Expression Language is evaluated: outside
``${...}`` by their value; inside an expression by a literal (``${#{abc}:toUpper()}``), as NiFi's
Expression Language reads a parameter there.

A sensitive parameter's value is never written in a flow: it names an environment variable
(``value_from_env``) or a file (``value_from_file``) and every process that reads the property
reads the value from there. The value read is a :class:`SensitiveText`: a ``str`` whose ``repr``
is ``********`` and whose pickled form names the source again instead of holding the secret, so
a processor that travels to a Spark executor carries no secret to any file.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from flowcore.errors import ConfigurationError

__all__ = [
    "MASK",
    "MIN_MASKED_LENGTH",
    "SENSITIVE_ALONE",
    "Parameter",
    "ParameterContext",
    "SensitiveText",
    "context_from_json",
    "is_valid_name",
    "layered",
    "load_parameters",
    "parameter_references",
    "redact",
    "reference_problem",
    "secrets_of",
    "sole_reference",
    "substitute_parameters",
]

#: What a sensitive value shows as, wherever it would be printed.
MASK = "********"
#: Secrets shorter than this are not masked in text: a password "a" would mask every "a" of
#: every log line and message (validation warns about them instead, see ``short_secrets``).
MIN_MASKED_LENGTH = 4
#: NiFi's parameter names: letters, digits, spaces, ``-``, ``_`` and ``.``.
_NAME = re.compile(r"[A-Za-z0-9 ._-]+")
#: One reference and nothing else: the name's grammar, so ``#{user}hunter2}`` is not one.
_SOLE_REFERENCE = re.compile(r"#\{" + _NAME.pattern + r"\}")


def is_valid_name(name: str) -> bool:
    """Whether *name* is a valid parameter name in NiFi's rules."""
    return _NAME.fullmatch(name) is not None


# --- parameters and contexts ----------------------------------------------------------------


@attrs.frozen(repr=False)
class Parameter:
    """One parameter: a name, its value (or where to read it), a description, sensitivity.

    Attributes:
        name: the name ``#{name}`` references.
        value: the value as written, or None when it is read from a source (or has none).
        description: what the parameter is for.
        sensitive: whether only sensitive properties may reference it and its value must never
            show (NiFi's sensitive parameters).
        value_from_env: the environment variable holding the value.
        value_from_file: the file holding the value (one trailing line break is dropped).

    Raises:
        ConfigurationError: the name is not a valid parameter name, or more than one of
            ``value``, ``value_from_env`` and ``value_from_file`` is given.
    """

    name: str
    value: str | None = None
    description: str = ""
    sensitive: bool = False
    value_from_env: str | None = None
    value_from_file: str | None = None

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.name, str) or not is_valid_name(self.name):
            msg = (
                f"{self.name!r} is not a valid parameter name; use letters, digits, spaces, "
                "'-', '_' and '.'"
            )
            raise ConfigurationError(msg)
        sources = (self.value, self.value_from_env, self.value_from_file)
        if sum(v is not None for v in sources) > 1:
            msg = (
                f"parameter {self.name!r} takes one of value, value_from_env and "
                "value_from_file, not several"
            )
            raise ConfigurationError(msg)

    @property
    def source(self) -> str:
        """Where the value comes from, as people read it (never the value)."""
        if self.value_from_env is not None:
            return f"environment variable {self.value_from_env}"
        if self.value_from_file is not None:
            return f"file {self.value_from_file}"
        return "no value" if self.value is None else "its value"

    @property
    def written_in_flow(self) -> bool:
        """Whether the value is written where the parameter is defined (not read from a source)."""
        return self.value is not None

    def read(self) -> str:
        """The value: as written, or read from its environment variable or file now.

        Raises:
            ConfigurationError: the parameter has no value, or its source cannot be read.
        """
        text = self._read()
        return SensitiveText(text, self) if self.sensitive else text

    def _read(self) -> str:
        if self.value is not None:
            return self.value
        if self.value_from_env is not None:
            found = os.environ.get(self.value_from_env)
            if found is None:
                msg = (
                    f"parameter {self.name!r} reads environment variable {self.value_from_env}, "
                    "which is not set; set it where flowcore (and each Spark executor) runs"
                )
                raise ConfigurationError(msg)
            return found
        if self.value_from_file is not None:
            try:
                text = Path(self.value_from_file).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                why = error.strerror if isinstance(error, OSError) else "it is not UTF-8 text"
                msg = (
                    f"parameter {self.name!r} reads file {self.value_from_file}, which cannot be "
                    f"read ({why}); put it where flowcore (and each Spark executor) can read it"
                )
                raise ConfigurationError(msg) from None
            return text.removesuffix("\n").removesuffix("\r")
        hint = f"--parameter-env {self.name}=ENVVAR" if self.sensitive else "--parameter"
        msg = f"parameter {self.name!r} has no value; give it one (e.g. with {hint})"
        raise ConfigurationError(msg)

    def __repr__(self) -> str:
        parts = [repr(self.name)]
        if self.value is not None:
            parts.append(f"value={MASK if self.sensitive else self.value!r}")
        if self.value_from_env is not None:
            parts.append(f"value_from_env={self.value_from_env!r}")
        if self.value_from_file is not None:
            parts.append(f"value_from_file={self.value_from_file!r}")
        if self.sensitive:
            parts.append("sensitive=True")
        return f"Parameter({', '.join(parts)})"


class SensitiveText(str):
    """A sensitive parameter's value: a ``str`` that never shows and never travels.

    ``repr`` gives ``********``, so a processor's ``repr``, a property value in a log line or an
    error message naming it with ``!r`` hides it. Pickling keeps only the :class:`Parameter`
    (its environment variable or file), and unpickling reads the value again where it lands,
    so a processor shipped to a Spark executor carries no secret through Spark's files.
    """

    __slots__ = ("parameter",)
    parameter: Parameter

    def __new__(cls, value: str, parameter: Parameter) -> SensitiveText:
        """The value *value* of *parameter*."""
        made = super().__new__(cls, value)
        made.parameter = parameter
        return made

    def __repr__(self) -> str:
        return repr(MASK)

    def __reduce__(self) -> tuple[Any, tuple[Parameter]]:
        return (_read_again, (self.parameter,))


def _read_again(parameter: Parameter) -> str:
    """Unpickle a :class:`SensitiveText`: read its parameter's value in this process."""
    return parameter.read()


def _parameters(
    values: Mapping[str, str | Parameter] | Iterable[Parameter],
) -> tuple[Parameter, ...]:
    if isinstance(values, Mapping):
        made = []
        for name, value in values.items():
            if isinstance(value, Parameter):
                made.append(value if value.name == name else attrs.evolve(value, name=name))
            else:
                made.append(Parameter(name, None if value is None else str(value)))
        return tuple(made)
    return tuple(values)


@attrs.frozen
class ParameterContext:
    """A named set of parameters, inheriting others (NiFi's Parameter Context).

    Attributes:
        name: the context's name.
        description: what it is for.
        parameters: its own parameters (a mapping of name to value, or Parameter values).
        inherited: contexts whose parameters apply where this one has none of that name, in
            order; each is searched depth first.

    Raises:
        ConfigurationError: two parameters of the context itself share a name.
    """

    name: str = ""
    description: str = ""
    parameters: tuple[Parameter, ...] = attrs.field(default=(), converter=_parameters)
    inherited: tuple[ParameterContext, ...] = attrs.field(default=(), converter=tuple)

    def __attrs_post_init__(self) -> None:
        seen: set[str] = set()
        for parameter in self.parameters:
            if parameter.name in seen:
                msg = f"parameter context {self.name!r} defines {parameter.name!r} twice"
                raise ConfigurationError(msg)
            seen.add(parameter.name)

    @classmethod
    def of(
        cls, value: ParameterContext | Mapping[str, str | Parameter] | None, name: str = ""
    ) -> ParameterContext:
        """A context from what ``Flow(parameters=...)`` takes: a context, a dict, or None."""
        if isinstance(value, ParameterContext):
            return value
        if value is None:
            return cls(name)
        if isinstance(value, Mapping):
            return cls(name, parameters=value)
        msg = (
            f"parameters must be a ParameterContext or a dict of name -> value, "
            f"not {type(value).__name__}"
        )
        raise ConfigurationError(msg)

    def _search(self) -> Iterator[ParameterContext]:
        """This context, then each inherited one depth first: NiFi's resolution order."""
        yield self
        for context in self.inherited:
            yield from context._search()

    def find(self, name: str) -> Parameter | None:
        """The parameter *name* resolves to, or None when no context in the order defines it."""
        for context in self._search():
            for parameter in context.parameters:
                if parameter.name == name:
                    return parameter
        return None

    def effective(self) -> dict[str, Parameter]:
        """Every name with the parameter it resolves to, sorted by name."""
        found: dict[str, Parameter] = {}
        for context in self._search():
            for parameter in context.parameters:
                found.setdefault(parameter.name, parameter)
        return dict(sorted(found.items()))

    def overridden_by(self, parameters: Iterable[Parameter], name: str = "") -> ParameterContext:
        """A context in which *parameters* win over this one's (command-line values, say)."""
        return ParameterContext(name or self.name, parameters=tuple(parameters), inherited=(self,))

    def values_for(self, names: Iterable[str]) -> dict[str, str | None]:
        """The values of *names* that are defined, read now; None for one that cannot be read.

        A sensitive value is a :class:`SensitiveText`. Names no context defines are left out.
        """
        values: dict[str, str | None] = {}
        for name in names:
            parameter = self.find(name)
            if parameter is None:
                continue
            try:
                values[name] = parameter.read()
            except ConfigurationError:
                values[name] = None
        return values


# --- files -----------------------------------------------------------------------------------


def _parameter_from_json(data: Any, where: str) -> Parameter:
    if not isinstance(data, Mapping) or not isinstance(data.get("name"), str):
        msg = f'{where}: each parameter must be an object with a "name", got {data!r}'
        raise ConfigurationError(msg)
    value = data.get("value")
    return Parameter(
        data["name"],
        None if value is None else str(value),
        description=str(data.get("description") or ""),
        sensitive=bool(data.get("sensitive", False)),
        value_from_env=data.get("value_from_env"),
        value_from_file=data.get("value_from_file"),
    )


def _context_from_json(data: Mapping[str, Any], named: Mapping[str, Any], where: str) -> Any:
    inherited = []
    for entry in data.get("inheritedParameterContexts") or ():
        if isinstance(entry, str):
            if entry not in named:
                msg = f"{where}: inherits parameter context {entry!r}, which the file lacks"
                raise ConfigurationError(msg)
            entry = named[entry]  # noqa: PLW2901 - a name stands for the context it names
        if not isinstance(entry, Mapping):
            msg = f"{where}: an inherited parameter context must be an object or a name"
            raise ConfigurationError(msg)
        inherited.append(_context_from_json(entry, named, where))
    return ParameterContext(
        str(data.get("name") or ""),
        str(data.get("description") or ""),
        parameters=[_parameter_from_json(p, where) for p in data.get("parameters") or ()],
        inherited=inherited,
    )


def context_from_json(data: Any, where: str = "parameters") -> ParameterContext:
    """A context from JSON data in NiFi's shape, or from a plain name -> value object.

    NiFi's shape is a parameter context export: ``{"name", "description", "parameters":
    [{"name", "value", "sensitive", "description"}], "inheritedParameterContexts": [...]}``,
    each inherited context an object of the same shape or the name of one in a top-level
    ``"parameterContexts"`` object (as in a NiFi flow definition, whose
    ``flowContents.parameterContextName`` then says which context to use). A parameter may
    name ``value_from_env`` or ``value_from_file`` instead of a value.

    Raises:
        ConfigurationError: the data has neither shape; the message says where.
    """
    if not isinstance(data, Mapping):
        msg = f"{where}: expected a JSON object, got {type(data).__name__}"
        raise ConfigurationError(msg)
    named = data.get("parameterContexts")
    if isinstance(named, Mapping):
        chosen = (data.get("flowContents") or {}).get("parameterContextName")
        if chosen is None and len(named) == 1:
            chosen = next(iter(named))
        if chosen not in named:
            msg = f"{where}: says no parameter context to use (flowContents.parameterContextName)"
            raise ConfigurationError(msg)
        return _context_from_json(named[chosen], named, where)
    if isinstance(data.get("parameters"), list):
        return _context_from_json(data, {}, where)
    plain = {}
    for name, value in data.items():
        if isinstance(value, Mapping):
            plain[name] = _parameter_from_json({"name": name, **value}, where)
        elif isinstance(value, str | int | float | bool):
            text = str(value).lower() if isinstance(value, bool) else str(value)
            plain[name] = Parameter(name, text)
        else:
            msg = f"{where}: parameter {name!r} has a {type(value).__name__} value; use text"
            raise ConfigurationError(msg)
    return ParameterContext(parameters=plain)


def load_parameters(path: str | os.PathLike[str]) -> ParameterContext:
    """Read a parameters file (JSON, see :func:`context_from_json`).

    Raises:
        ConfigurationError: the file cannot be read or is not such JSON; the message names it.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        msg = f"parameters file {path} cannot be read: {error.strerror}"
        raise ConfigurationError(msg) from None
    except ValueError as error:
        msg = f"parameters file {path} is not valid JSON: {error}"
        raise ConfigurationError(msg) from None
    return context_from_json(data, f"parameters file {path}")


def layered(
    base: ParameterContext,
    *,
    file: ParameterContext | None = None,
    values: Mapping[str, str] | None = None,
    from_env: Mapping[str, str] | None = None,
) -> ParameterContext:
    """*base* with a parameters file over it, and command-line values over both.

    The layers are inherited contexts in NiFi's order, so a name resolves in the command line
    first, then the file (and the contexts it inherits), then the flow's own context.

    Args:
        base: the flow's context.
        file: a parameters file's context.
        values: ``--parameter NAME=VALUE`` pairs.
        from_env: ``--parameter-env NAME=ENVVAR`` pairs; the parameter stays as sensitive as
            the layers below say, and is sensitive when they do not define it.

    Raises:
        ConfigurationError: a value is given for a sensitive parameter (secrets do not go on a
            command line, which other users can list), or a name is given twice.
    """
    below = base if file is None else ParameterContext(base.name, inherited=(file, base))
    values, from_env = values or {}, from_env or {}
    overrides = []
    for name in sorted(set(values) & set(from_env)):
        msg = f"parameter {name!r} is given both a value and an environment variable; pick one"
        raise ConfigurationError(msg)
    for name, value in values.items():
        current = below.find(name)
        if current is not None and current.sensitive:
            msg = (
                f"parameter {name!r} is sensitive: give it with --parameter-env {name}=ENVVAR "
                "(or value_from_file in a --parameters file), never its value on the command line"
            )
            raise ConfigurationError(msg)
        description = current.description if current is not None else ""
        overrides.append(Parameter(name, value, description=description))
    for name, variable in from_env.items():
        current = below.find(name)
        overrides.append(
            Parameter(
                name,
                description=current.description if current is not None else "",
                sensitive=current.sensitive if current is not None else True,
                value_from_env=variable,
            )
        )
    return below.overridden_by(overrides) if overrides else below


# --- references in property text -------------------------------------------------------------


@attrs.frozen
class _Reference:
    """``#{name}``: inside ``${...}`` when *in_expression*."""

    name: str
    in_expression: bool = False


class _ExpressionText(str):
    """Text inside ``${...}``, passed to the Expression Language as it is."""

    __slots__ = ()


_Token = str | _Reference


def _tokens(text: str, expressions: bool) -> Iterator[_Token]:
    """Literal text and references, in order, by NiFi's parameter parsers.

    With *expressions* (a property that evaluates Expression Language) the text inside
    ``${...}`` is passed through whole, except references there, which are yielded with
    ``in_expression`` set; literal text elsewhere comes back as NiFi's final text.
    """
    length, pos, start = len(text), 0, 0
    while pos < length:
        ch = text[pos]
        if ch == "$" and expressions:
            run = pos
            while run < length and text[run] == "$":
                run += 1
            if run < length and text[run] == "{" and (run - pos) % 2 == 1:
                yield text[start : run - 1]
                end = yield from _expression(text, run - 1)
                pos = start = end
                continue
            pos = run
        elif ch == "#":
            run = pos
            while run < length and text[run] == "#":
                run += 1
            close = text.find("}", run) if run < length and text[run] == "{" else -1
            if close < 0:
                pos = run
                continue
            count = run - pos
            yield text[start:pos] + "#" * (count // 2)
            name = text[run + 1 : close]
            if count % 2:
                yield _Reference(name)
            else:
                yield "{" + name + "}"
            pos = start = close + 1
        else:
            pos += 1
    yield text[start:]


def _expression(text: str, pos: int) -> Iterator[_Token]:
    """Yield the expression opening at *pos* (``${``); return where it ends.

    Braces nest and quoted strings are skipped, so ``'#{x}'`` in a string stays text.
    """
    start, depth, length = pos, 0, len(text)
    while pos < length:
        ch = text[pos]
        if ch in "'\"":
            pos += 1
            while pos < length and text[pos] != ch:
                pos += 2 if text[pos] == "\\" else 1
        elif ch == "#" and text.startswith("#{", pos) and text.find("}", pos) > 0:
            close = text.find("}", pos)
            yield _ExpressionText(text[start:pos])
            yield _Reference(text[pos + 2 : close], in_expression=True)
            pos = start = close + 1
            continue
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                yield _ExpressionText(text[start : pos + 1])
                return pos + 1
        pos += 1
    yield _ExpressionText(text[start:])
    return length


def parameter_references(text: str | None, *, expressions: bool = False) -> tuple[str, ...]:
    """The parameter names *text* references, in order, each once.

    Args:
        text: a property value as configured.
        expressions: whether the property evaluates Expression Language (then references
            inside ``${...}`` count too, and ``$`` escapes are read as the EL reads them).
    """
    if not text or "#" not in text:
        return ()
    names = (t.name for t in _tokens(text, expressions) if isinstance(t, _Reference))
    return tuple(dict.fromkeys(names))


def _in_expression(value: str) -> str:
    """*value* as an expression yielding it literally (to stand for ``#{name}`` inside EL)."""
    if any(c in value for c in "\\\r\n\t"):
        encoded = base64.b64encode(value.encode("utf-8")).decode("ascii")
        return f"${{literal('{encoded}'):base64Decode()}}"
    return "${literal('" + value.replace("'", "\\'") + "')}"


def substitute_parameters(
    text: str, values: Mapping[str, str | None], *, expressions: bool = False
) -> str:
    """*text* with each ``#{name}`` replaced by its value and ``##{`` escapes undone.

    A name without a value becomes empty text (validation reports it before anything runs).
    A value that is the whole text comes back as it is (a :class:`SensitiveText` stays one).

    Args:
        text: a property value as configured.
        values: parameter values by name.
        expressions: whether the property evaluates Expression Language: then the result is
            Expression Language text (a literal ``#{`` is written ``##{``, a reference inside
            ``${...}`` becomes ``${literal('value')}``), evaluated after this.
    """
    if "#" not in text:
        return text
    tokens = [t for t in _tokens(text, expressions) if t != ""]
    if len(tokens) == 1 and isinstance(tokens[0], _Reference) and not tokens[0].in_expression:
        value = values.get(tokens[0].name) or ""
        return value if isinstance(value, SensitiveText) else _literal(value, expressions)
    out: list[str] = []
    literal: list[str] = []  # final text since the last expression, escaped as one run
    for token in tokens:
        if isinstance(token, _ExpressionText) or (
            isinstance(token, _Reference) and token.in_expression
        ):
            out.append(_literal("".join(literal), expressions))
            literal = []
            is_text = isinstance(token, _ExpressionText)
            out.append(token if is_text else _in_expression(values.get(token.name) or ""))  # type: ignore[union-attr,arg-type]
        elif isinstance(token, _Reference):
            literal.append(values.get(token.name) or "")
        else:
            literal.append(token)
    out.append(_literal("".join(literal), expressions))
    return "".join(out)


def _literal(text: str, expressions: bool) -> str:
    """Final text as the Expression Language must be given it: a literal ``#{`` escaped."""
    return text.replace("#{", "##{") if expressions else text


def reference_problem(
    name: str, values: Mapping[str, str | None], *, sensitive_property: bool
) -> str | None:
    """Why a property may not reference parameter *name* (NiFi's rules), or None.

    Args:
        name: the name referenced.
        values: the values bound (None: defined, its source unreadable, reported elsewhere).
        sensitive_property: whether the referencing property is sensitive.
    """
    if not is_valid_name(name):
        return (
            f"#{{{name}}} is not a valid parameter reference; parameter names hold letters, "
            "digits, spaces, '-', '_' and '.'"
        )
    if name not in values:
        return (
            f"it references parameter {name!r}, which is not defined; define it in "
            f"Flow(..., parameters=...) or pass --parameter {name}=VALUE"
        )
    value = values[name]
    if value is None:
        return None  # defined, its source unreadable: the flow says why
    if isinstance(value, SensitiveText) and not sensitive_property:
        return (
            f"it references sensitive parameter {name!r}, but only a sensitive property may "
            "reference a sensitive parameter"
        )
    if sensitive_property and not isinstance(value, SensitiveText):
        return (
            f"it is a sensitive property and references parameter {name!r}, which is not "
            "sensitive; a sensitive property may only reference sensitive parameters"
        )
    return None


#: Why a sensitive property's value holds more than one reference (NiFi's rule).
SENSITIVE_ALONE = (
    "it is a sensitive property, which may hold a single parameter reference and nothing else"
)


def redact(text: str, secrets: Iterable[str]) -> str:
    """*text* with every occurrence of each secret replaced by :data:`MASK`.

    Secrets shorter than :data:`MIN_MASKED_LENGTH` are left: masking them everywhere would
    garble every message ("*" for each "a"), and validation warns that they are not masked.
    """
    kept = (s for s in secrets if len(s) >= MIN_MASKED_LENGTH)
    for secret in sorted(kept, key=len, reverse=True):
        text = text.replace(str.__str__(secret), MASK)
    return text


def sole_reference(value: str) -> bool:
    """Whether *value* is one parameter reference and nothing else (``#{name}``).

    The only form a sensitive property's value may be written in (NiFi's rule): an export or a
    flow file writes such a value, and leaves out any other, which would hold a secret in clear
    (``#{user}hunter2``).
    """
    return _SOLE_REFERENCE.fullmatch(value) is not None


def secrets_of(values: Mapping[str, object]) -> list[str]:
    """The sensitive values among parameter values bound to a processor, to redact with.

    A processor's own error messages (an ``on_scheduled`` that fails to log in) may hold a
    secret it read; bulletins and logs pass them through :func:`redact` first.
    """
    return [str.__str__(v) for v in values.values() if isinstance(v, SensitiveText)]
