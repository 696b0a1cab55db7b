"""Sign-in secrets of a team, kept hashed in ``.protocoder/team-secrets.json`` (never committed).

``team add`` issues a one-time sign-in token per member; the server exchanges it, once, for
a session token it sets as a cookie. Only hashes are stored: the sign-in token's with
scrypt and a random salt (it travels in a link, which may be read over a shoulder or out of
a chat log, so it is made slow to guess from a stolen file), the session token's with
SHA-256 (32 random bytes: nothing to guess, and checked on every request). Revoking a
member deletes their entries, so their link and sessions stop working at once.

A session ends at a fixed time after sign-in (``session_hours`` in ``team.yaml``): the absolute
expiry is stored beside its hash when the session is made, so shortening ``session_hours``
later does not cut short the sessions already given, and using a session does not extend it
(a stolen cookie stops working at the same time as the member's own). The member then needs
a new link (``protocoder team link NAME``).

Sign-in tokens read ``NAME.SECRET``: the server looks the member up by name and runs one
scrypt, never one per member. A token that is not of that form (a 43-character secret) is
refused without any hash; a well-formed one costs one scrypt whether or not the name has an
unused link (a stand-in hash is computed when it has none), so the answer's timing does not
tell which names have one. The server limits the attempts per client and per name first.

Links and sessions carry the member's ``record`` (team.yaml) from when they were made: a member
deleted and added again has a new record, and what was issued to the old one no longer counts.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from .members import DEFAULT_SESSION_HOURS

SECRETS_FILE = "team-secrets.json"
SECRET_BYTES = 32
SECRET_LENGTH = 43
"""Characters of ``secrets.token_urlsafe(SECRET_BYTES)``: any other length is not a link of ours."""
_URLSAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
_STAND_IN = {"salt": secrets.token_bytes(16).hex(), "scrypt": ""}
"""Hashed against when a name has no unused link, so both answers cost the same scrypt."""
_SCRYPT = {"n": 2**14, "r": 8, "p": 1, "maxmem": 64 * 1024 * 1024, "dklen": 32}
"""scrypt's cost (the interactive-login parameters of its paper): about 50 ms a try."""


def secrets_file(root: Path) -> Path:
    """Where the hashed secrets live: the workspace's state folder, which git ignores."""
    return root / ".protocoder" / SECRETS_FILE


def _scrypt(token: str, salt: bytes) -> str:
    return hashlib.scrypt(token.encode(), salt=salt, **_SCRYPT).hex()


def _session_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


_STAMP = "%Y-%m-%dT%H:%M:%SZ"


def _now() -> str:
    return _stamp(datetime.now(UTC))


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(_STAMP)


def _expiry(record: Any) -> datetime | None:
    """When a stored session ends; None when its record cannot tell (it then counts as ended).

    A record from before sessions expired (``created`` only) ends the default lifetime after
    its creation."""
    if not isinstance(record, dict):
        return None
    try:
        if "expires" in record:
            return datetime.strptime(str(record["expires"]), _STAMP).replace(tzinfo=UTC)
        created = datetime.strptime(str(record["created"]), _STAMP).replace(tzinfo=UTC)
    except (KeyError, ValueError):
        return None
    return created + timedelta(hours=DEFAULT_SESSION_HOURS)


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[dict[str, Any]]:
    """The secrets, read and written back under the team lock (CLI and server may both write)."""
    from ..storage.files import atomic_write_text, exclusive_lock

    path = secrets_file(root)
    path.parent.mkdir(exist_ok=True)
    with exclusive_lock(path.parent / "team.lock", timeout=30.0, what="the team's secrets"):
        data = _read(path)
        yield data
        atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
        with contextlib.suppress(OSError):
            os.chmod(path, 0o600)


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"members": {}}
    except (OSError, ValueError):
        from ..errors import ProtocoderError

        raise ProtocoderError(f"{path.name} in .protocoder/ cannot be read; delete it and issue new sign-in "
                              "links with `protocoder team link NAME`") from None
    if not isinstance(data, dict) or not isinstance(data.get("members"), dict):
        return {"members": {}}
    return data


def well_formed(token: str) -> bool:
    """True when ``token`` has the form of a sign-in token (``NAME.SECRET``): a cheap check that
    needs no file and no hash, so a request that fails it costs nothing."""
    name, dot, secret = token.partition(".")
    return bool(name) and bool(dot) and len(name) <= 100 and len(secret) == SECRET_LENGTH \
        and set(secret) <= _URLSAFE


def issue_signin(root: Path, name: str, record: str = "") -> str:
    """A new one-time sign-in token for ``name`` (replacing any unused one); returns ``NAME.SECRET``.

    ``record``: the member's current record (team.yaml); the link works only while it is the same."""
    secret = secrets.token_urlsafe(SECRET_BYTES)
    token = f"{name}.{secret}"
    salt = secrets.token_bytes(16)
    with _locked(root) as data:
        entry = data["members"].setdefault(name, {"sessions": {}})
        entry["signin"] = {"salt": salt.hex(), "scrypt": _scrypt(secret, salt), "issued": _now(), "record": record}
    return token


def forget(root: Path, name: str) -> int:
    """Delete ``name``'s sign-in token and sessions; return how many sessions were open."""
    with _locked(root) as data:
        entry = data["members"].pop(name, None)
    return len(entry.get("sessions", {})) if isinstance(entry, dict) else 0


def redeem(root: Path, token: str, *, hours: float | None = None,
           record: str | None = None) -> tuple[str, str] | None:
    """Exchange a one-time sign-in token for a session: ``(member name, session token)``, or
    None when the token is wrong, used or revoked. The sign-in token cannot be used again.

    The session ends ``hours`` after now (default: :data:`~protocoder.team.members.DEFAULT_SESSION_HOURS`).
    ``record``: the member's current record in team.yaml (the server passes it; None: not checked),
    which the link must have been issued under; the session is made under it."""
    lifetime = timedelta(hours=DEFAULT_SESSION_HOURS if hours is None else hours)
    if not well_formed(token):
        return None  # refused before any hash
    name, _, secret = token.partition(".")
    # scrypt runs outside the lock (it is slow on purpose): many members signing in at once
    # then wait for each other only to write the file.
    entry = _read(secrets_file(root))["members"].get(name)
    signin = entry.get("signin") if isinstance(entry, dict) else None
    usable = isinstance(signin, dict) and (record is None or str(signin.get("record", "")) == record)
    against = signin if usable and isinstance(signin, dict) else _STAND_IN
    try:
        salt = bytes.fromhex(str(against["salt"]))
    except (KeyError, ValueError):
        salt, usable = bytes.fromhex(_STAND_IN["salt"]), False
    computed = _scrypt(secret, salt)  # the same cost with or without a link: timing tells nothing
    if not usable or not hmac.compare_digest(computed, str(against.get("scrypt", ""))):
        return None
    with _locked(root) as data:
        entry = data["members"].get(name)
        current = entry.get("signin") if isinstance(entry, dict) else None
        # Still the same link (not used, replaced or revoked meanwhile): spend it.
        if not isinstance(current, dict) or not hmac.compare_digest(str(current.get("scrypt", "")), computed):
            return None
        del entry["signin"]  # one time only
        session = secrets.token_urlsafe(SECRET_BYTES)
        now = datetime.now(UTC)
        sessions = entry.setdefault("sessions", {})
        for digest in [d for d, record in sessions.items() if (_expiry(record) or now) <= now]:
            del sessions[digest]  # ended ones are of no use: the file does not grow with each sign-in
        sessions[_session_hash(session)] = {"created": _stamp(now), "expires": _stamp(now + lifetime),
                                            "record": str(current.get("record", ""))}
    return name, session


@dataclass(frozen=True)
class Session:
    """A stored session: whose it is and when it ends."""

    member: str
    expires: datetime | None
    """None: the record could not tell, so the session counts as ended (fail closed)."""
    record: str = ""
    """The member's record (team.yaml) the session was made under."""

    def ended(self, now: datetime | None = None) -> bool:
        """True once the session's lifetime is over."""
        return self.expires is None or (now or datetime.now(UTC)) >= self.expires


def _record_of(stored: Any) -> str:
    return str(stored.get("record", "")) if isinstance(stored, dict) else ""


@dataclass
class SessionTable:
    """The sessions on disk, re-read when the file changes (a `team revoke` from another
    process then counts at the next request)."""

    root: Path
    _stamp: tuple[int, int, int] | None = None
    _sessions: dict[str, Session] | None = None

    def find(self, session: str) -> Session | None:
        """The stored session ``session``, ended or not; None when unknown (or revoked)."""
        if not session or len(session) > 200:
            return None
        return self._load().get(_session_hash(session))

    def member_of(self, session: str, now: datetime | None = None) -> str | None:
        """The member whose session ``session`` is, or None (unknown, revoked or ended)."""
        found = self.find(session)
        return found.member if found is not None and not found.ended(now) else None

    def _load(self) -> dict[str, Session]:
        path = secrets_file(self.root)
        try:
            info = path.stat()
            stamp = (info.st_ino, info.st_mtime_ns, info.st_size)
        except FileNotFoundError:
            stamp = None
        if self._sessions is None or stamp != self._stamp:
            from ..errors import ProtocoderError

            try:
                data = _read(path) if stamp is not None else {"members": {}}
            except ProtocoderError:
                data = {"members": {}}  # a damaged file: nobody's session counts (fail closed)
            self._sessions = {digest: Session(name, _expiry(record), _record_of(record))
                              for name, entry in data["members"].items() if isinstance(entry, dict)
                              for digest, record in (entry.get("sessions") or {}).items()}
            self._stamp = stamp
        return self._sessions
