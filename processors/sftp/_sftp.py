"""What the SFTP processors share: NiFi's connection properties and the connection.

Every connection is bounded by Connection Timeout (TCP connect, SSH handshake and
authentication) and Data Timeout (each read or write on the channel). Host keys are checked
against Host Key File (an OpenSSH known_hosts file) when given; Strict Host Key Checking
refuses a host not in it. Passwords and key passphrases are sensitive properties. Ciphers, Key
Algorithms, Key Exchange Algorithms and Message Authentication Codes Allowed narrow what
paramiko offers (its ``disabled_algorithms``: the offered names not listed); Proxy Type SOCKS
or HTTP tunnels the connection through Proxy Host and Proxy Port (processors.sftp._proxy).
"""

from __future__ import annotations

import contextlib
import posixpath
import re
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from flowcore.errors import ConfigurationError, ProcessException
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.validators import (
    FILE_EXISTS_VALIDATOR,
    NON_EMPTY_VALIDATOR,
    NON_NEGATIVE_INTEGER_VALIDATOR,
    PORT_VALIDATOR,
    TIME_PERIOD_VALIDATOR,
    Validator,
)
from processors.sftp import _proxy

__all__ = [
    "CONNECTION",
    "HOSTNAME",
    "PORT",
    "Address",
    "Walk",
    "address",
    "complete_remotely",
    "connect",
    "make_dirs",
    "transit_uri",
    "walk",
    "walk_of",
]  # fmt: skip

_FLOWFILE = ExpressionLanguageScope.FLOWFILE_ATTRIBUTES
_ENV = ExpressionLanguageScope.ENVIRONMENT

HOSTNAME = PropertyDescriptor(
    "Hostname", description="The fully qualified hostname or IP address of the remote system",
    required=True, validators=(NON_EMPTY_VALIDATOR,), el_scope=_FLOWFILE,
)  # fmt: skip
PORT = PropertyDescriptor(
    "Port", description="The port that the remote system is listening on for file transfers",
    required=True, default="22", validators=(PORT_VALIDATOR,), el_scope=_FLOWFILE,
)  # fmt: skip
USERNAME = PropertyDescriptor(
    "Username", description="Username", required=True, validators=(NON_EMPTY_VALIDATOR,),
    el_scope=_FLOWFILE,
)  # fmt: skip
PASSWORD = PropertyDescriptor(
    "Password", description="Password for the user account", sensitive=True,
    el_scope=_FLOWFILE,
)  # fmt: skip
PRIVATE_KEY_PATH = PropertyDescriptor(
    "Private Key Path", description="The fully qualified path to the Private Key file",
    validators=(FILE_EXISTS_VALIDATOR,), el_scope=_FLOWFILE,
)  # fmt: skip
PRIVATE_KEY_PASSPHRASE = PropertyDescriptor(
    "Private Key Passphrase", description="Password for the private key", sensitive=True,
    el_scope=_FLOWFILE,
)  # fmt: skip
HOST_KEY_FILE = PropertyDescriptor(
    "Host Key File", description="If supplied, the given file will be used as the Host Key; "
    "otherwise, if 'Strict Host Key Checking' property is applied (set to true) then uses the "
    "'known_hosts' and 'known_hosts2' files from ~/.ssh directory else no host key file will "
    "be used", validators=(FILE_EXISTS_VALIDATOR,),
)  # fmt: skip
STRICT_HOST_KEY_CHECKING = PropertyDescriptor(
    "Strict Host Key Checking", description="Indicates whether or not strict enforcement of "
    "hosts keys should be applied", required=True, default="false",
    allowable_values=("true", "false"),
)  # fmt: skip
CONNECTION_TIMEOUT = PropertyDescriptor(
    "Connection Timeout", description="Amount of time to wait before timing out while creating "
    "a connection", required=True, default="30 sec", validators=(TIME_PERIOD_VALIDATOR,),
)  # fmt: skip
DATA_TIMEOUT = PropertyDescriptor(
    "Data Timeout", description="When transferring a file between the local and remote system, "
    "this value specifies how long is allowed to elapse without any data being transferred "
    "between systems", required=True, default="30 sec", validators=(TIME_PERIOD_VALIDATOR,),
)  # fmt: skip
KEEP_ALIVE = PropertyDescriptor(
    "Send Keep Alive On Timeout", description="Send a Keep Alive message every 5 seconds up to "
    "5 times for an overall timeout of 25 seconds.", required=True, default="true",
    allowable_values=("true", "false"),
)  # fmt: skip
COMPRESSION = PropertyDescriptor(
    "Use Compression", description="Indicates whether or not ZLIB compression should be used "
    "when transferring files", required=True, default="false",
    allowable_values=("true", "false"),
)  # fmt: skip

PROXY_TYPE = PropertyDescriptor(
    "Proxy Type", description="Proxy type used for file transfers", default=_proxy.DIRECT,
    allowable_values=(_proxy.DIRECT, _proxy.HTTP, _proxy.SOCKS),
)  # fmt: skip
PROXY_HOST = PropertyDescriptor(
    "Proxy Host", description="The fully qualified hostname or IP address of the proxy server",
    el_scope=_ENV,
)  # fmt: skip
PROXY_PORT = PropertyDescriptor(
    "Proxy Port", description="The port of the proxy server", validators=(PORT_VALIDATOR,),
    el_scope=_ENV,
)  # fmt: skip
PROXY_USERNAME = PropertyDescriptor(
    "Http Proxy Username", description="Http Proxy Username", el_scope=_ENV,
)  # fmt: skip
PROXY_PASSWORD = PropertyDescriptor(
    "Http Proxy Password", description="Http Proxy Password", sensitive=True, el_scope=_ENV,
)  # fmt: skip
#: The proxy properties (FTPTransfer's, which NiFi's SFTP processors list).
PROXY = (PROXY_TYPE, PROXY_HOST, PROXY_PORT, PROXY_USERNAME, PROXY_PASSWORD)

#: Each algorithm property: paramiko's Transport list of what it offers, and the keys of
#: ``disabled_algorithms`` it narrows (Key Algorithms: host keys and public key authentication).
_OFFERED = {
    "Ciphers Allowed": ("_preferred_ciphers", ("ciphers",)),
    "Key Algorithms Allowed": ("_preferred_keys", ("keys", "pubkeys")),
    "Key Exchange Algorithms Allowed": ("_preferred_kex", ("kex",)),
    "Message Authentication Codes Allowed": ("_preferred_macs", ("macs",)),
}


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def _offered(prop: str) -> tuple[str, ...]:
    """What paramiko offers for *prop* (empty without paramiko: checked when it connects)."""
    try:
        import paramiko  # noqa: PLC0415 (optional dependency, imported on use)
    except ImportError:
        return ()
    return tuple(getattr(paramiko.Transport, _OFFERED[prop][0]))


def _algorithm(prop: str, what: str) -> PropertyDescriptor:
    return PropertyDescriptor(
        prop, description=f"A comma-separated list of {what} allowed for SFTP connections. "
        "Leave unset to allow all.", el_scope=_ENV,
        validators=(NON_EMPTY_VALIDATOR, Validator("ALGORITHM_VALIDATOR", _Unsupported(prop))),
    )  # fmt: skip


@attrs.frozen
class _Unsupported:
    """The check of algorithm property *prop*: picklable, and equal to itself unpickled.

    (A ``functools.partial`` pickles too, but compares by identity, so a descriptor holding one
    would not equal itself after a round trip.)
    """

    prop: str

    def __call__(self, value: str) -> str | None:
        return _unsupported(self.prop, value)


def _unsupported(prop: str, value: str) -> str | None:
    """Why *value* of algorithm property *prop* cannot connect (None: some name is offered)."""
    offered = _offered(prop)
    if not offered or set(_names(value)) & set(offered):
        return None
    return f"none of {value!r} is supported here: the SFTP client offers {', '.join(offered)}"


CIPHERS_ALLOWED = _algorithm("Ciphers Allowed", "Ciphers")
KEY_ALGORITHMS_ALLOWED = _algorithm("Key Algorithms Allowed", "Key Algorithms")
KEY_EXCHANGE_ALGORITHMS_ALLOWED = _algorithm(
    "Key Exchange Algorithms Allowed", "Key Exchange Algorithms"
)
MACS_ALLOWED = _algorithm("Message Authentication Codes Allowed", "Message Authentication Codes")
#: The algorithm properties, in NiFi's order (last in each SFTP processor).
ALGORITHMS = (CIPHERS_ALLOWED, KEY_ALGORITHMS_ALLOWED, KEY_EXCHANGE_ALGORITHMS_ALLOWED,
              MACS_ALLOWED)  # fmt: skip

FOLLOW_SYMLINK = PropertyDescriptor(
    "Follow symlink", description="If true, will pull even symbolic files and also nested "
    "symbolic subdirectories; otherwise, will not read symbolic files and will not traverse "
    "symbolic link subdirectories", required=True, default="false",
    allowable_values=("true", "false"),
)  # fmt: skip
REMOTE_POLL_BATCH_SIZE = PropertyDescriptor(
    "Remote Poll Batch Size", description="The value specifies how many file paths to find in "
    "a given directory on the remote system when doing a file listing. This value in general "
    "should not need to be modified but when polling against a remote system with a tremendous "
    "number of files this value can be critical.  Setting this value too high can result very "
    "poor performance and setting it too low can cause the flow to be slower than normal.",
    required=True, default="5000", validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
)  # fmt: skip
#: The connection properties, in NiFi's order (after each processor's Hostname ... Password).
CONNECTION = (
    HOSTNAME, PORT, USERNAME, PASSWORD, PRIVATE_KEY_PATH, PRIVATE_KEY_PASSPHRASE,
)  # fmt: skip


def require_paramiko() -> Any:
    """The paramiko module, or one clear error naming the extra to install."""
    try:
        import paramiko  # noqa: PLC0415 (optional dependency, imported on use)
    except ImportError:
        msg = "the SFTP processors need paramiko: pip install 'flowcore[sftp]'"
        raise ConfigurationError(msg) from None
    return paramiko


def transit_uri(host: str, port: int | str, path: str) -> str:
    """NiFi's transit URI of a remote file (``sftp://host:port/path``)."""
    return f"sftp://{host}:{port}/{path.lstrip('/')}"


class Connection:
    """An open SSH transport and its SFTP client; closed with ``close`` or ``with``."""

    def __init__(self, ssh: Any, sftp: Any, host: str, port: int, user: str) -> None:
        self.ssh, self.sftp, self.host, self.port, self.user = ssh, sftp, host, port, user

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the SFTP channel and the SSH connection."""
        try:
            self.sftp.close()
        finally:
            self.ssh.close()


@attrs.frozen
class Address:
    """Where a connection goes and as whom, without its secrets (an after-commit action keeps it).

    Attributes:
        host, port, user: the evaluated Hostname, Port and Username.
        key_path: the evaluated Private Key Path ('' for none).
        attributes: the FlowFile attributes the Password and Private Key Passphrase are
            evaluated against on the driver (only when one of them uses Expression Language).
    """

    host: str
    port: int
    user: str
    key_path: str = ""
    attributes: Mapping[str, str] = attrs.field(factory=dict)

    def payload(self) -> dict[str, Any]:
        """As JSON values."""
        return {"host": self.host, "port": self.port, "user": self.user,
                "key_path": self.key_path, "attributes": dict(self.attributes)}  # fmt: skip

    @classmethod
    def of(cls, payload: Mapping[str, Any]) -> Address:
        """From :meth:`payload`."""
        return cls(payload["host"], int(payload["port"]), payload["user"],
                   payload.get("key_path") or "", payload.get("attributes") or {})  # fmt: skip


def address(context: Any, flowfile: Any = None) -> Address:
    """The connection's address for *flowfile* (its attributes kept only if secrets need them)."""
    value = lambda d: context.get_property(d).evaluate_attribute_expressions(flowfile).value  # noqa: E731
    secrets = (
        context.get_property(PASSWORD).value,
        context.get_property(PRIVATE_KEY_PASSPHRASE).value,
    )
    uses_attributes = flowfile is not None and any(s and "${" in str(s) for s in secrets)
    attributes = getattr(flowfile, "attributes", flowfile) if uses_attributes else {}
    return Address(
        value(HOSTNAME) or "", int(value(PORT) or 22), value(USERNAME) or "",
        value(PRIVATE_KEY_PATH) or "", dict(attributes or {}),
    )  # fmt: skip


def connect(context: Any, flowfile: Any = None, *, to: Address | None = None) -> Connection:
    """Connect and authenticate with the processor's properties (evaluated for *flowfile*).

    *to* gives the address instead (an after-commit action on the driver, where the
    FlowFile is gone): the secrets are evaluated against its attributes.

    Raises:
        OSError, paramiko.SSHException: unreachable host, refused credentials, a host key
            that does not match (the callers route them to failure with the cause).
    """
    paramiko = require_paramiko()
    if to is None:
        to = address(context, flowfile)
    secret = lambda d: context.get_property(d).evaluate_attribute_expressions(to.attributes).value  # noqa: E731
    host, port, user = to.host, to.port, to.user
    connect_timeout = context.get_property(CONNECTION_TIMEOUT).as_time_period("s") or 30
    data_timeout = context.get_property(DATA_TIMEOUT).as_time_period("s") or 30
    ssh = paramiko.SSHClient()
    host_keys = context.get_property(HOST_KEY_FILE).value
    strict = bool(context.get_property(STRICT_HOST_KEY_CHECKING).as_boolean())
    if host_keys:
        ssh.load_host_keys(host_keys)
    elif strict:
        ssh.load_system_host_keys()
    ssh.set_missing_host_key_policy(paramiko.RejectPolicy() if strict else paramiko.AutoAddPolicy())
    sock = _tunnel(context, host, port, connect_timeout)
    try:
        ssh.connect(
            host, port=port, username=user, password=secret(PASSWORD) or None,
            key_filename=to.key_path or None, passphrase=secret(PRIVATE_KEY_PASSPHRASE) or None,
            timeout=connect_timeout, banner_timeout=connect_timeout,
            auth_timeout=connect_timeout, channel_timeout=connect_timeout, look_for_keys=False,
            allow_agent=False, compress=bool(context.get_property(COMPRESSION).as_boolean()),
            disabled_algorithms=disabled_algorithms(context) or None, sock=sock,
        )  # fmt: skip
    except BaseException:
        ssh.close()
        if sock is not None:
            sock.close()
        raise
    if context.get_property(KEEP_ALIVE).as_boolean():
        ssh.get_transport().set_keepalive(5)
    sftp = ssh.open_sftp()
    sftp.get_channel().settimeout(data_timeout)
    return Connection(ssh, sftp, host, port, user)


def disabled_algorithms(context: Any) -> dict[str, list[str]]:
    """Paramiko's ``disabled_algorithms`` for the four Allowed properties (NiFi's lists).

    Each set property keeps only the names it lists of what paramiko offers, in paramiko's
    order of preference; names paramiko lacks are ignored, as NiFi ignores unknown names.

    Raises:
        ConfigurationError: a property names nothing paramiko offers (no connection could
            agree on one), naming the property and what is offered.
    """
    disabled: dict[str, list[str]] = {}
    for descriptor in ALGORITHMS:
        value = context.get_property(descriptor).evaluate_attribute_expressions().value
        if not value:
            continue
        why = _unsupported(descriptor.name, value)
        if why:
            msg = f"{descriptor.name}: {why}"
            raise ConfigurationError(msg)
        allowed = set(_names(value))
        offered = _offered(descriptor.name)
        for key in _OFFERED[descriptor.name][1]:
            disabled[key] = [n for n in offered if n not in allowed]
    return disabled


def _tunnel(context: Any, host: str, port: int, timeout: float) -> Any:
    """The socket through the configured proxy, or None for a direct connection.

    Raises:
        ConfigurationError: Proxy Type is HTTP or SOCKS without Proxy Host and Proxy Port.
        OSError: the proxy is unreachable or refuses the tunnel (routed as network errors).
    """
    kind = context.get_property(PROXY_TYPE).value or _proxy.DIRECT
    if kind == _proxy.DIRECT:
        return None
    value = lambda d: context.get_property(d).evaluate_attribute_expressions().value  # noqa: E731
    proxy_host, proxy_port = value(PROXY_HOST), value(PROXY_PORT)
    if not proxy_host or not proxy_port:
        msg = (f"Proxy Type {kind} needs Proxy Host and Proxy Port: set them, or set Proxy "
               "Type to DIRECT")  # fmt: skip
        raise ConfigurationError(msg)
    return _proxy.open_tunnel(
        kind, (proxy_host, int(proxy_port)), (host, port), timeout,
        value(PROXY_USERNAME) or None, value(PROXY_PASSWORD) or None,
    )  # fmt: skip


#: NiFi's SFTPTransfer stops descending at this depth (to bound memory).
MAX_DEPTH = 100


@attrs.frozen
class Walk:
    """What NiFi's ``SFTPTransfer.getListing`` selects (its FileTransfer properties).

    Attributes:
        recursive: Search Recursively.
        follow: Follow symlink: links are listed as what they point to (a dangling one is
            skipped); otherwise they are not listed at all.
        dotted: Ignore Dotted Files.
        file_filter: File Filter Regex (whole name), or None.
        path_filter: Path Filter Regex, matched against each directory's path relative to
            the root: files are listed only from the directories it matches (the root always),
            while the walk goes on through every directory, as NiFi's.
        limit: Remote Poll Batch Size: the walk stops after this many files (0: none listed).
    """

    recursive: bool = False
    follow: bool = False
    dotted: bool = True
    file_filter: str | None = None
    path_filter: str | None = None
    limit: int | None = None


def walk_of(context: Any, *, file_filter: Any, path_filter: Any, dotted: Any,
            recursive: Any) -> Walk:  # fmt: skip
    """The :class:`Walk` a processor's properties configure (its own filter descriptors)."""
    flag = lambda d: bool(context.get_property(d).as_boolean())  # noqa: E731
    limit = context.get_property(REMOTE_POLL_BATCH_SIZE)
    return Walk(
        recursive=flag(recursive), follow=flag(FOLLOW_SYMLINK), dotted=flag(dotted),
        file_filter=context.get_property(file_filter).value or None,
        path_filter=context.get_property(path_filter).value or None,
        limit=limit.as_integer() if limit.value is not None else None,
    )  # fmt: skip


def walk(sftp: Any, root: str, how: Walk) -> Iterator[tuple[str, Any]]:
    """``(directory, attributes)`` of the files under *root* that *how* selects, NiFi's order.

    A directory's files come before its subdirectories' (depth first, as NiFi's); a
    subdirectory that cannot be read is skipped (NiFi logs it and goes on), the root raises.
    Only regular files are listed (with Follow symlink, links to them): a FIFO, device or
    socket cannot be fetched. Following links, a directory whose real path (the server's
    ``normalize``) is one of its own ancestors is not entered again, as a link back up
    (``loop -> .``) would otherwise list the same files under ever longer paths; at most
    :data:`MAX_LISTINGS` directories are listed, as links between siblings still multiply.
    """
    budget = [how.limit if how.limit is not None else -1]
    if budget[0] == 0:
        return
    listings = [0]
    yield from _walk(sftp, root, root, how, 0, (budget, listings, frozenset()))


#: The most directories one walk lists (links can make a small tree walk without end).
MAX_LISTINGS = 10_000


def _walk(  # noqa: PLR0917 (the walk's parts)
    sftp: Any, root: str, directory: str, how: Walk, depth: int,
    counts: tuple[list[int], list[int], frozenset[str]],
) -> Iterator[tuple[str, Any]]:  # fmt: skip
    budget, listings, ancestors = counts
    if depth >= MAX_DEPTH:
        return
    if how.follow:  # only links make a tree walk without end: a plain tree has no bound
        real = sftp.normalize(directory)
        if real in ancestors:
            return  # a link back to a directory being walked: a loop
        ancestors |= {real}
        listings[0] += 1
        if listings[0] > MAX_LISTINGS:
            msg = (
                f"the walk under {root!r} listed more than {MAX_LISTINGS} directories (at "
                f"{directory!r}) following links: links between directories multiply it; "
                "set Follow symlink to false or point Remote Path below the links"
            )
            raise ProcessException(msg)
    relative = posixpath.relpath(directory, root)
    listed = how.path_filter is None or relative == "." or bool(
        re.fullmatch(how.path_filter, relative)
    )  # fmt: skip
    subdirectories = []
    for attr in sftp.listdir_attr(directory):
        name = attr.filename
        if name in {".", ".."} or (how.dotted and name.startswith(".")):
            continue
        full = posixpath.join(directory, name)
        mode = attr.st_mode
        if mode is not None and stat.S_ISLNK(mode):
            if not how.follow:
                continue
            try:
                attr = sftp.stat(full)  # noqa: PLW2901 (the link's target)
            except FileNotFoundError:
                continue  # a dangling link
            attr.filename = name
            mode = attr.st_mode
        if mode is not None and stat.S_ISDIR(mode):
            if how.recursive:
                subdirectories.append(full)
            continue
        if mode is not None and not stat.S_ISREG(mode):
            continue  # a FIFO, device or socket: nothing to fetch (GetSFTP's S_ISREG)
        if not listed or (how.file_filter and not re.fullmatch(how.file_filter, name)):
            continue
        yield directory, attr
        budget[0] -= 1
        if budget[0] == 0:
            return
    for sub in subdirectories:
        try:
            yield from _walk(sftp, root, sub, how, depth + 1, (budget, listings, ancestors))
        except OSError:
            continue  # NiFi's "Unable to get listing from ...; skipping"
        if budget[0] == 0:
            return


def is_sftp_error(error: BaseException) -> bool:
    """Paramiko's and the network's errors (not flowcore's)."""
    module = type(error).__module__ or ""
    return module.startswith("paramiko") or isinstance(error, (OSError, EOFError))


def is_dir(mode: int | None) -> bool:
    """Whether an SFTP attribute's mode is a directory's."""
    return mode is not None and stat.S_ISDIR(mode)


def complete_remotely(
    context: Any,
    actions: Sequence[Mapping[str, Any]],
    warn: Callable[[Any, Mapping[str, Any], BaseException], None],
) -> None:
    """Carry out recorded remote deletes and moves, one connection per address.

    Each action is an :meth:`Address.payload` plus ``remote`` (the file) and, for a move,
    ``move_to`` (its new path), ``create`` (make the directory) and ``blind`` (make it
    without looking: Disable Directory Listing). Idempotent, as a start-up
    may do it again: a file already deleted, or already at its target, is done. *warn* is
    called with ``(context, action, error)`` for one that fails (NiFi's wording differs
    between FetchSFTP's Completion Strategy and GetSFTP's Delete Original).
    """
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for action in actions:
        key = repr(sorted(Address.of(action).payload().items()))
        groups.setdefault(key, []).append(action)
    for group in groups.values():
        to = Address.of(group[0])
        try:
            connection = connect(context, to=to)
        except Exception as error:
            if not is_sftp_error(error):
                raise
            for action in group:
                warn(context, action, error)
            continue
        with connection:
            for action in group:
                try:
                    _complete_one(connection.sftp, action)
                except Exception as error:
                    if not is_sftp_error(error):
                        raise
                    warn(context, action, error)


def _complete_one(sftp: Any, action: Mapping[str, Any]) -> None:
    """Delete or move one remote file; one already gone (or already moved) is done."""
    remote = action["remote"]
    target = action.get("move_to")
    if target is None:
        with contextlib.suppress(FileNotFoundError):  # deleted before a crash: done
            sftp.remove(remote)
        return
    if posixpath.normpath(remote) == posixpath.normpath(target):
        return  # moved onto itself: nothing to move (REPLACE would remove the only copy)
    if action.get("create"):
        make_dirs(sftp, posixpath.dirname(target), blind=bool(action.get("blind")))
    if action.get("replace") and _exists(sftp, remote) and _exists(sftp, target):
        sftp.remove(target)  # Move Conflict Resolution REPLACE (SFTP v3 rename cannot)
    try:
        sftp.rename(remote, target)
    except OSError:
        if _exists(sftp, remote) or not _exists(sftp, target):
            raise
        # moved before a crash: done


def _exists(sftp: Any, path: str) -> bool:
    """Whether *path* exists on the server."""
    try:
        sftp.stat(path)
    except FileNotFoundError:
        return False
    return True


def make_dirs(sftp: Any, directory: str, *, blind: bool = False) -> None:
    """Mkdir -p over SFTP.

    *blind* (PutSFTP's Disable Directory Listing) makes each directory without looking
    first, taking a plain failure for "already there" (NiFi's), for servers that refuse to
    stat or list a directory one may write to.
    """
    if blind:
        _mkdir_blind(sftp, directory)
        return
    parts, current = (
        [p for p in directory.split("/") if p],
        "/" if directory.startswith("/") else "",
    )
    for part in parts:
        current = posixpath.join(current, part) if current else part
        try:
            sftp.stat(current)
        except FileNotFoundError:
            sftp.mkdir(current)


def _mkdir_blind(sftp: Any, directory: str) -> None:
    """Make *directory*, its parents first when missing, without stat (NiFi's blind mkdir)."""
    try:
        sftp.mkdir(directory)
    except FileNotFoundError:
        pass  # its parent is missing: made below
    except PermissionError:
        raise
    except OSError:
        return  # SSH_FX_FAILURE: there already (NiFi's reading)
    else:
        return
    parent = posixpath.dirname(directory.rstrip("/"))
    if parent and parent not in {"/", directory}:
        _mkdir_blind(sftp, parent)
    sftp.mkdir(directory)
