"""Who may reach a ``protocoder serve`` without a team: this machine only, or whoever holds the access token."""

from __future__ import annotations

import ipaddress

from ...errors import UsageError

TOKEN_BYTES = 24
"""Random bytes in a generated token (32 URL-safe characters)."""

MIN_TOKEN_LENGTH = 16
"""A token given with ``--token`` must be at least this long."""

_LOOPBACK_NAMES = {"localhost", "localhost.", "ip6-localhost"}
_TOKEN_ALPHABET = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~")


def is_loopback(host: str) -> bool:
    """True when ``host`` (a name or an address, IPv6 with or without brackets) is this machine only."""
    host = host.strip().lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def generate_token() -> str:
    """A fresh, unguessable access token that needs no escaping in a URL or a cookie."""
    import secrets

    return secrets.token_urlsafe(TOKEN_BYTES)


def check_token(token: str) -> str:
    """Return ``token`` if it can be used as an access token; raise :class:`UsageError` saying why not."""
    if len(token) < MIN_TOKEN_LENGTH:
        raise UsageError(f"--token must be at least {MIN_TOKEN_LENGTH} characters long "
                         "(leave it out and serve generates one)")
    if not set(token) <= _TOKEN_ALPHABET:
        raise UsageError("--token may use only letters, digits and - _ . ~ (it travels in a URL)")
    return token


def host_of(netloc: str) -> str:
    """The host part of ``host:port`` (IPv6 in brackets or not)."""
    if netloc.startswith("["):
        return netloc[1:].split("]", 1)[0]
    return netloc.rsplit(":", 1)[0] if netloc.count(":") == 1 else netloc


def url_host(host: str) -> str:
    """``host`` as it appears in a URL: IPv6 addresses in brackets."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host

