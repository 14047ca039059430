"""FetchDistributedMapCache: look cache keys up and put their values in content or attributes."""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from typing import ClassVar

from flowcore.expression import contains_expression
from flowcore.expression._nodes import ResultType
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    CHARACTER_SET_VALIDATOR,
    NON_EMPTY_VALIDATOR,
    POSITIVE_INTEGER_VALIDATOR,
    ValidationResult,
)
from processors._cache_values import to_bytes

__all__ = ["FetchDistributedMapCache"]

REL_SUCCESS = Relationship(
    "success",
    "If the cache was successfully communicated with it will be routed to this relationship",
)
REL_NOT_FOUND = Relationship(
    "not-found",
    "If a FlowFile's Cache Entry Identifier was not found in the cache, it will be routed to "
    "this relationship",
)
REL_FAILURE = Relationship(
    "failure",
    "If unable to communicate with the cache or if the cache entry is evaluated to be blank, "
    "the FlowFile will be penalized and routed to this relationship",
)


class FetchDistributedMapCache(Processor):
    """Fetches the cache value of each FlowFile's key(s) into its content or attributes.

    NiFi's FetchDistributedMapCache over the flow's :class:`~flowcore.services.MapCacheService`.
    One key replaces the content with the cached bytes, or with ``Put Cache Value In
    Attribute`` puts it (decoded with ``Character Set``, cut to ``Max Length To Put In
    Attribute`` characters) in that attribute. A comma-separated list of keys needs the
    attribute: each value goes to ``<attribute>.<key>``. A key not cached sends the FlowFile to
    ``not-found`` (the values found before it are kept); a blank key to ``failure``, penalized.
    """

    CACHE_ENTRY_IDENTIFIER = PropertyDescriptor(
        "Cache Entry Identifier",
        description="A comma-delimited list of FlowFile attributes, or the results of Attribute "
        "Expression Language statements, which will be evaluated against a FlowFile in order to "
        "determine the value(s) used to identify duplicates; it is these values that are cached. "
        "NOTE: Only a single Cache Entry Identifier is allowed unless Put Cache Value In "
        "Attribute is specified. Multiple cache lookups are only supported when the destination "
        "is a set of attributes (see the documentation for 'Put Cache Value In Attribute' for "
        "more details including naming convention.",
        required=True,
        default="${hash.value}",
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        expected_type=ResultType.STRING,
    )
    DISTRIBUTED_CACHE_SERVICE = PropertyDescriptor(
        "Distributed Cache Service",
        description="The Controller Service that is used to get the cached values (a "
        "MapCacheService the flow declares, by name).",
        required=True,
        validators=(NON_EMPTY_VALIDATOR,),
        identifies_service=True,
    )
    PUT_CACHE_VALUE_IN_ATTRIBUTE = PropertyDescriptor(
        "Put Cache Value In Attribute",
        description="If set, the cache value received will be put into an attribute of the "
        "FlowFile instead of a the content of theFlowFile. The attribute key to put to is "
        "determined by evaluating value of this property. If multiple Cache Entry Identifiers "
        "are selected, multiple attributes will be written, using the evaluated value of this "
        "property, appended by a period (.) and the name of the cache entry identifier.",
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        expected_type=ResultType.STRING,
    )
    PUT_ATTRIBUTE_MAX_LENGTH = PropertyDescriptor(
        "Max Length To Put In Attribute",
        description="If routing the cache value to an attribute of the FlowFile (by setting the "
        '"Put Cache Value in attribute" property), the number of characters put to the '
        "attribute value will be at most this amount. This is important because attributes are "
        "held in memory and large attributes will quickly cause out of memory issues. If the "
        "output goes longer than this value, it will be truncated to fit. Consider making this "
        "smaller if able.",
        default="256",
        validators=(POSITIVE_INTEGER_VALIDATOR,),
    )
    CHARACTER_SET = PropertyDescriptor(
        "Character Set",
        description="The Character Set in which the cached value is encoded. This will only be "
        "used when routing to an attribute.",
        default="UTF-8",
        validators=(CHARACTER_SET_VALIDATOR,),
    )
    property_descriptors: ClassVar = (
        CACHE_ENTRY_IDENTIFIER,
        DISTRIBUTED_CACHE_SERVICE,
        PUT_CACHE_VALUE_IN_ATTRIBUTE,
        PUT_ATTRIBUTE_MAX_LENGTH,
        CHARACTER_SET,
    )
    relationships: ClassVar = (REL_SUCCESS, REL_NOT_FOUND, REL_FAILURE)
    supports_batching: ClassVar = True
    tags: ClassVar = ("map", "cache", "fetch", "distributed")
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "user-defined": "If the 'Put Cache Value In Attribute' property is set then whatever it "
        "is set to will become the attribute key and the value would be whatever the response "
        "was from the Map Cache. If multiple cache entry identifiers are selected, multiple "
        "attributes will be written, using the evaluated value of this property, appended by a "
        "period (.) and the name of the cache entry identifier."
    }

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """Several literal keys need Put Cache Value In Attribute (NiFi's customValidate)."""
        identifier = values.get(self.CACHE_ENTRY_IDENTIFIER.name) or ""
        if contains_expression(identifier):
            return []
        if not values.get(self.PUT_CACHE_VALUE_IN_ATTRIBUTE.name) and "," in identifier:
            why = (
                "Multiple Cache Entry Identifiers specified without Put Cache Value In "
                "Attribute set"
            )
            return [
                ValidationResult(self.CACHE_ENTRY_IDENTIFIER.display_name, identifier, False, why)
            ]
        return []

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Fetch one FlowFile's key(s) and route it."""
        flowfile = session.get()
        if flowfile is None:
            return
        identifier = (
            context.get_property(self.CACHE_ENTRY_IDENTIFIER)
            .evaluate_attribute_expressions(flowfile)
            .value
            or ""
        )
        if not identifier.strip():
            context.logger.error(
                "FlowFile %s has no attribute for given Cache Entry Identifier", flowfile
            )
            session.transfer(session.penalize(flowfile), REL_FAILURE.name)
            return
        keys = [k.strip() for k in identifier.split(",") if k]
        for position, key in enumerate(keys):
            if not key:
                context.logger.error(
                    "FlowFile %s has no attribute for Cache Entry Identifier in position %d",
                    flowfile,
                    position,
                )
                session.transfer(session.penalize(flowfile), REL_FAILURE.name)
                return
        single = len(keys) == 1
        attribute = context.get_property(self.PUT_CACHE_VALUE_IN_ATTRIBUTE)
        if not single and not attribute.is_set():
            context.logger.error(
                "Multiple Cache Value Identifiers specified without Put Cache Value In "
                "Attribute set; routing %s to failure",
                flowfile,
            )
            session.transfer(session.penalize(flowfile), REL_FAILURE.name)
            return
        cache = session.map_cache(context.get_property(self.DISTRIBUTED_CACHE_SERVICE).value)
        charset = context.get_property(self.CHARACTER_SET).value or "UTF-8"
        max_length = context.get_property(self.PUT_ATTRIBUTE_MAX_LENGTH).as_integer() or 256
        for key in [identifier] if single else keys:
            found = cache.get(key)
            if not found:  # NiFi's deserializer reads an empty value as none
                context.logger.info(
                    "Could not find an entry in cache for %s; routing to not-found", flowfile
                )
                session.transfer(flowfile, REL_NOT_FOUND.name)
                return
            data = to_bytes(found)
            if attribute.is_set():
                name = attribute.evaluate_attribute_expressions(flowfile).value or ""
                if not single:
                    name += "." + key
                text = data.decode(codecs.lookup(charset).name, "replace")[:max_length]
                flowfile = session.put_attribute(flowfile, name, text)
            else:
                flowfile = session.write(flowfile, data)
        session.transfer(flowfile, REL_SUCCESS.name)
