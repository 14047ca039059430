"""PutEmail: an e-mail for each FlowFile, sent over SMTP, as NiFi's PutEmail."""

from __future__ import annotations

import re
import smtplib
import time
from collections.abc import Mapping
from functools import partial
from typing import ClassVar

from flowcore.flowfile import FlowFile
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    BOOLEAN_VALIDATOR,
    CHARACTER_SET_VALIDATOR,
    NON_EMPTY_VALIDATOR,
    PORT_VALIDATOR,
    REGULAR_EXPRESSION_VALIDATOR,
    ValidationResult,
    Validator,
)
from processors._mail import (
    AddressError,
    MailAddress,
    SmtpSettings,
    build_message,
    parse_addresses,
    send_message,
)

__all__ = ["PutEmail"]

_EL = ExpressionLanguageScope.FLOWFILE_ATTRIBUTES
_MAIL_PROPERTY = re.compile(r"mail\.smtps?\.([a-z0-9.]+)")
# The JavaMail properties NiFi sets from its own properties: a dynamic one may not override them.
_MAPPED = frozenset(
    {
        "mail.smtp.host",
        "mail.smtp.port",
        "mail.smtp.socketFactory.port",
        "mail.smtp.socketFactory.class",
        "mail.smtp.auth",
        "mail.smtp.starttls.enable",
        "mail.smtp.user",
        "mail.smtp.password",
    }
)
BODY_SEPARATOR = "\n\n--------------------------------------------------\n"
DEFAULT_TIMEOUT = 60.0  # seconds; JavaMail waits forever by default, which can stall a flow

PASSWORD_MODE = AllowableValue("password-based-authorization-mode", "Use Password", "Use password")
OAUTH_MODE = AllowableValue(
    "oauth-based-authorization-mode", "Use OAuth2", "Use OAuth2 to acquire access token"
)
REL_SUCCESS = Relationship(
    "success", "FlowFiles that are successfully sent will be routed to this relationship"
)
REL_FAILURE = Relationship(
    "failure", "FlowFiles that fail to send will be routed to this relationship"
)


def _mail_property(name: str, _value: str) -> str | None:
    """Why dynamic property *name* is no JavaMail property PutEmail may set, or None."""
    if not _MAIL_PROPERTY.fullmatch(name):
        return f"[{name}] does not start with mail.smtp"
    if name in _MAPPED:
        return f"[{name}] overwrites standard properties"
    return None


def _descriptor(display_name: str, description: str, **kwargs: object) -> PropertyDescriptor:
    return PropertyDescriptor(display_name, description=description, **kwargs)  # type: ignore[arg-type]


class PutEmail(Processor):
    """Sends an e-mail to the configured recipients for each FlowFile (NiFi's PutEmail).

    The message's From, To, CC, BCC, Reply-To, Subject and text (Message, or the content with
    FlowFile Content as Message, plus every attribute with Include All Attributes In Message)
    are evaluated against the FlowFile; attributes whose names match Attributes to Send as
    Headers Regular Expression become headers; Attach File adds the content as an attachment
    named by ``filename``, typed by ``mime.type``. Each message goes over a connection of its
    own (see :mod:`processors._mail` for TLS and authentication), and the FlowFile goes to
    ``success`` with a SEND event to ``mailto:<first recipient>``, or to ``failure`` (the
    processor yields) when the message cannot be built or sent.

    Delivery is at least once: a message sent in a session that is then rolled back (a crash
    before the commit) is sent again, as in NiFi. Differences from NiFi: OAuth2 needs an
    OAuth2AccessTokenProvider service, which flowcore lacks (Use OAuth2 is invalid); of the
    JavaMail dynamic properties, ``mail.smtp.timeout`` and ``mail.smtp.connectiontimeout``
    (ms), ``mail.smtp.ssl.enable`` and ``mail.smtp.ssl.trust`` are honoured, others accepted
    and ignored; timeouts default to 60 s, not forever; a server certificate that fails
    verification is an error, never a fallback to a plain connection.
    """

    SMTP_HOSTNAME = _descriptor(
        "SMTP Hostname",
        "The hostname of the SMTP host",
        required=True,
        el_scope=_EL,
        validators=(NON_EMPTY_VALIDATOR,),
    )
    SMTP_PORT = _descriptor(
        "SMTP Port",
        "The Port used for SMTP communications",
        required=True,
        default="25",
        el_scope=_EL,
        validators=(PORT_VALIDATOR,),
    )
    AUTHORIZATION_MODE = _descriptor(
        "Authorization Mode",
        "How to authorize sending email on the user's behalf.",
        required=True,
        default=PASSWORD_MODE.value,
        allowable_values=(PASSWORD_MODE, OAUTH_MODE),
        aliases=("authorization-mode",),
    )
    OAUTH2_ACCESS_TOKEN_PROVIDER = _descriptor(
        "OAuth2 Access Token Provider",
        "OAuth2 service that can provide access tokens.",
        required=True,
        dependencies=[("Authorization Mode", OAUTH_MODE.value)],
        aliases=("oauth2-access-token-provider",),
    )
    SMTP_USERNAME = _descriptor(
        "SMTP Username",
        "Username for the SMTP account",
        el_scope=_EL,
        validators=(NON_EMPTY_VALIDATOR,),
    )
    SMTP_PASSWORD = _descriptor(
        "SMTP Password",
        "Password for the SMTP account",
        el_scope=_EL,
        validators=(NON_EMPTY_VALIDATOR,),
        sensitive=True,
        dependencies=[("Authorization Mode", PASSWORD_MODE.value)],
    )
    SMTP_AUTH = _descriptor(
        "SMTP Auth",
        "Flag indicating whether authentication should be used",
        required=True,
        default="true",
        el_scope=_EL,
        validators=(BOOLEAN_VALIDATOR,),
    )
    SMTP_TLS = _descriptor(
        "SMTP START TLS",
        "Flag indicating whether Opportunistic TLS should be enabled using STARTTLS command",
        required=True,
        default="false",
        el_scope=_EL,
        validators=(BOOLEAN_VALIDATOR,),
        aliases=("SMTP TLS",),
    )
    SMTP_SOCKET_FACTORY = _descriptor(
        "SMTP Socket Factory",
        "Socket Factory to use for SMTP Connection",
        required=True,
        default="javax.net.ssl.SSLSocketFactory",
        el_scope=_EL,
        validators=(NON_EMPTY_VALIDATOR,),
    )
    HEADER_XMAILER = _descriptor(
        "SMTP X-Mailer Header",
        "X-Mailer used in the header of the outgoing email",
        required=True,
        default="NiFi",
        el_scope=_EL,
        validators=(NON_EMPTY_VALIDATOR,),
    )
    ATTRIBUTE_NAME_REGEX = _descriptor(
        "Attributes to Send as Headers Regular Expression",
        "A Regular Expression that is matched against all FlowFile attribute names. Any "
        "attribute whose name matches the regex will be added to the Email messages as a Header. "
        "If not specified, no FlowFile attributes will be added as headers.",
        validators=(REGULAR_EXPRESSION_VALIDATOR,),
        aliases=("attribute-name-regex",),
    )
    CONTENT_TYPE = _descriptor(
        "Content Type",
        "Mime Type used to interpret the contents of the email, such as text/plain or text/html",
        required=True,
        default="text/plain",
        el_scope=_EL,
        validators=(NON_EMPTY_VALIDATOR,),
    )
    FROM = _descriptor(
        "From",
        "Specifies the Email address to use as the sender. Comma separated sequence of addresses "
        "following RFC822 syntax.",
        required=True,
        el_scope=_EL,
        validators=(NON_EMPTY_VALIDATOR,),
    )
    TO = _descriptor(
        "To",
        "The recipients to include in the To-Line of the email. Comma separated sequence of "
        "addresses following RFC822 syntax.",
        el_scope=_EL,
        validators=(NON_EMPTY_VALIDATOR,),
    )
    CC = _descriptor(
        "CC",
        "The recipients to include in the CC-Line of the email. Comma separated sequence of "
        "addresses following RFC822 syntax.",
        el_scope=_EL,
        validators=(NON_EMPTY_VALIDATOR,),
    )
    BCC = _descriptor(
        "BCC",
        "The recipients to include in the BCC-Line of the email. Comma separated sequence of "
        "addresses following RFC822 syntax.",
        el_scope=_EL,
        validators=(NON_EMPTY_VALIDATOR,),
    )
    REPLY_TO = _descriptor(
        "Reply-To",
        "The recipients that will receive the reply instead of the from (see RFC2822 §3.6.2)."
        "This feature is useful, for example, when the email is sent by a no-reply account. This "
        "field is optional.Comma separated sequence of addresses following RFC822 syntax.",
        el_scope=_EL,
        validators=(NON_EMPTY_VALIDATOR,),
    )
    SUBJECT = _descriptor(
        "Subject",
        "The email subject",
        required=True,
        default="Message from NiFi",
        el_scope=_EL,
        validators=(NON_EMPTY_VALIDATOR,),
    )
    MESSAGE = _descriptor(
        "Message",
        "The body of the email message",
        el_scope=_EL,
        validators=(NON_EMPTY_VALIDATOR,),
    )
    CONTENT_AS_MESSAGE = _descriptor(
        "FlowFile Content as Message",
        "Specifies whether or not the FlowFile content should be the message of the email. If "
        "true, the 'Message' property is ignored.",
        required=True,
        default="false",
        el_scope=_EL,
        validators=(BOOLEAN_VALIDATOR,),
        aliases=("email-ff-content-as-message",),
    )
    INPUT_CHARACTER_SET = _descriptor(
        "Input Character Set",
        "Specifies the character set of the FlowFile contents for reading input FlowFile "
        "contents to generate the message body or as an attachment to the message. If not set, "
        "UTF-8 will be the default value.",
        required=True,
        default="UTF-8",
        validators=(CHARACTER_SET_VALIDATOR,),
        aliases=("input-character-set",),
    )
    ATTACH_FILE = _descriptor(
        "Attach File",
        "Specifies whether or not the FlowFile content should be attached to the email",
        required=True,
        default="false",
        allowable_values=("true", "false"),
    )
    INCLUDE_ALL_ATTRIBUTES = _descriptor(
        "Include All Attributes In Message",
        "Specifies whether or not all FlowFile attributes should be recorded in the body of the "
        "email message",
        required=True,
        default="false",
        allowable_values=("true", "false"),
    )
    property_descriptors: ClassVar = (
        SMTP_HOSTNAME,
        SMTP_PORT,
        AUTHORIZATION_MODE,
        OAUTH2_ACCESS_TOKEN_PROVIDER,
        SMTP_USERNAME,
        SMTP_PASSWORD,
        SMTP_AUTH,
        SMTP_TLS,
        SMTP_SOCKET_FACTORY,
        HEADER_XMAILER,
        ATTRIBUTE_NAME_REGEX,
        CONTENT_TYPE,
        FROM,
        TO,
        CC,
        BCC,
        REPLY_TO,
        SUBJECT,
        MESSAGE,
        CONTENT_AS_MESSAGE,
        INPUT_CHARACTER_SET,
        ATTACH_FILE,
        INCLUDE_ALL_ATTRIBUTES,
    )
    relationships: ClassVar = (REL_SUCCESS, REL_FAILURE)
    supports_batching: ClassVar = True
    supports_dynamic_properties: ClassVar = True
    tags: ClassVar = ("email", "put", "notify", "smtp")

    def get_dynamic_property_descriptor(self, name: str) -> PropertyDescriptor:
        """A JavaMail session property (``mail.smtp.*``)."""
        return PropertyDescriptor(
            name,
            description="SMTP property passed to the Mail Session",
            el_scope=_EL,
            validators=(Validator("DynamicMailPropertyValidator", partial(_mail_property, name)),),
            dynamic=True,
        )

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """At least one of To, CC and BCC; OAuth2 needs a service flowcore does not have."""
        problems = []
        if all(values.get(d.name) is None for d in (self.TO, self.CC, self.BCC)):
            why = "Must specify at least one To/CC/BCC address"
            problems.append(ValidationResult("To, CC, BCC", None, False, why))
        if values.get(self.AUTHORIZATION_MODE.name) == OAUTH_MODE.value:
            why = (
                "Use OAuth2 needs an OAuth2AccessTokenProvider controller service, which flowcore "
                "does not have yet; use 'Use Password' (password-based-authorization-mode)"
            )
            problems.append(
                ValidationResult(self.AUTHORIZATION_MODE.name, OAUTH_MODE.value, False, why)
            )
        return problems

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Send one FlowFile's e-mail."""
        flowfile = session.get()
        if flowfile is None:
            return
        began = time.monotonic()
        try:
            recipient = self._send(context, session, flowfile)
        except (AddressError, smtplib.SMTPException, OSError, LookupError, ValueError) as ex:
            context.yield_()
            context.logger.error(
                "Failed to send email for %s: %s; routing to failure", flowfile, ex
            )
            session.transfer(flowfile, REL_FAILURE)
            return
        duration = int((time.monotonic() - began) * 1000)
        session.provenance.send(flowfile, f"mailto:{recipient}", duration_ms=duration)
        session.transfer(flowfile, REL_SUCCESS)
        context.logger.debug("Sent email as a result of receiving %s", flowfile)

    def _value(
        self, context: ProcessContext, descriptor: PropertyDescriptor, flowfile: FlowFile
    ) -> str | None:
        return context.get_property(descriptor).evaluate_attribute_expressions(flowfile).value

    def _addresses(
        self, context: ProcessContext, descriptor: PropertyDescriptor, flowfile: FlowFile
    ) -> list[MailAddress]:
        value = self._value(context, descriptor, flowfile)
        if not value:
            if descriptor.required:
                msg = f"Required property '{descriptor.display_name}' evaluates to an empty string."
                raise AddressError(msg)
            return []
        try:
            return parse_addresses(value)
        except AddressError:
            msg = (
                f"Unable to parse a valid address for property '{descriptor.display_name}' "
                f"with value '{value}'"
            )
            raise AddressError(msg) from None

    def _send(self, context: ProcessContext, session: ProcessSession, flowfile: FlowFile) -> str:
        """Build and send the e-mail; the first recipient, for the transit URI."""
        sender = self._addresses(context, self.FROM, flowfile)
        to = self._addresses(context, self.TO, flowfile)
        cc = self._addresses(context, self.CC, flowfile)
        bcc = self._addresses(context, self.BCC, flowfile)
        reply_to = self._addresses(context, self.REPLY_TO, flowfile)
        recipients = [*to, *cc, *bcc]
        if not recipients:
            msg = "no recipient: To, CC and BCC all evaluate to empty strings"
            raise AddressError(msg)
        headers: dict[str, str] = {}
        regex = context.get_property(self.ATTRIBUTE_NAME_REGEX).value
        if regex:
            pattern = re.compile(regex)
            headers = {k: v for k, v in flowfile.attributes.items() if pattern.fullmatch(k)}
        headers["X-Mailer"] = self._value(context, self.HEADER_XMAILER, flowfile) or "NiFi"
        charset = context.get_property(self.INPUT_CHARACTER_SET).value or "UTF-8"
        content: bytes | None = None
        if (
            context.get_property(self.CONTENT_AS_MESSAGE)
            .evaluate_attribute_expressions(flowfile)
            .as_boolean()
        ):
            content = session.read_bytes(flowfile)
            text = content.decode(charset, "replace")
        else:
            text = self._value(context, self.MESSAGE, flowfile) or ""
        if context.get_property(self.INCLUDE_ALL_ATTRIBUTES).as_boolean():
            text = _with_attributes(flowfile, text)
        attachment = None
        if context.get_property(self.ATTACH_FILE).as_boolean():
            data = content if content is not None else session.read_bytes(flowfile)
            mime_type = flowfile.attributes.get("mime.type") or "application/octet-stream"
            attachment = (data, mime_type, flowfile.attributes.get("filename", ""))
        message = build_message(
            from_=sender,
            to=to,
            cc=cc,
            reply_to=reply_to,
            subject=self._value(context, self.SUBJECT, flowfile) or "",
            headers=headers,
            text=text,
            content_type=self._value(context, self.CONTENT_TYPE, flowfile) or "text/plain",
            charset=charset,
            attachment=attachment,
        )
        send_message(
            self._settings(context, flowfile),
            sender[0].address,
            [a.address for a in recipients],
            message.as_bytes(),
        )
        return recipients[0].formatted()

    def _settings(self, context: ProcessContext, flowfile: FlowFile) -> SmtpSettings:
        """The SMTP connection's settings for *flowfile*."""
        dynamic = {
            name: context.get_property(name).evaluate_attribute_expressions(flowfile).value
            for name in self.dynamic_properties
        }
        timeout = DEFAULT_TIMEOUT
        for key in ("mail.smtp.timeout", "mail.smtp.connectiontimeout"):
            if dynamic.get(key):
                timeout = min(timeout, int(dynamic[key] or 0) / 1000) or timeout
        host = self._value(context, self.SMTP_HOSTNAME, flowfile) or ""
        trust = (dynamic.get("mail.smtp.ssl.trust") or "").split()
        port_text = self._value(context, self.SMTP_PORT, flowfile) or "25"
        factory = self._value(context, self.SMTP_SOCKET_FACTORY, flowfile) or ""
        return SmtpSettings(
            host=host,
            port=int(port_text),
            implicit_tls="SSL" in factory,
            require_implicit_tls=(dynamic.get("mail.smtp.ssl.enable") or "").lower() == "true",
            starttls=(self._value(context, self.SMTP_TLS, flowfile) or "").lower() == "true",
            auth=(self._value(context, self.SMTP_AUTH, flowfile) or "").lower() == "true",
            username=self._value(context, self.SMTP_USERNAME, flowfile),
            password=self._value(context, self.SMTP_PASSWORD, flowfile),
            timeout=timeout,
            verify=not ("*" in trust or host in trust),
        )


def _with_attributes(flowfile: FlowFile, text: str) -> str:
    """*text* followed by the FlowFile's metadata and attributes, in NiFi's layout."""
    entry = time.strftime("%a %b %d %H:%M:%S %Z %Y", time.localtime(flowfile.entry_date / 1000))
    lines = [
        text + BODY_SEPARATOR,
        "\nStandard FlowFile Metadata:",
        f"\n\tid = '{flowfile.uuid}'",
        f"\n\tentryDate = '{entry}'",
        f"\n\tfileSize = '{flowfile.size}'",
        "\nFlowFile Attributes:",
    ]
    lines.extend(f"\n\t{key} = '{value}'" for key, value in flowfile.attributes.items())
    lines.append("\n")
    return "".join(lines)
