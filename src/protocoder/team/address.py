"""Where a running ``protocoder serve`` listens, so ``team add`` and ``team link`` print whole links for it.

The server writes ``.protocoder/serve-address.json`` (its base URL and process id) once it
listens, and deletes it when it stops; a file left by a server that was killed counts only
while its process is alive.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

ADDRESS_FILE = "serve-address.json"


def address_file(root: Path) -> Path:
    """Where the running server's address is recorded (the state folder, which git ignores)."""
    return root / ".protocoder" / ADDRESS_FILE


def record_address(root: Path, url: str) -> None:
    """Record that this process serves ``root`` at ``url`` (a base URL ending in ``/``)."""
    from ..storage.files import atomic_write_text

    path = address_file(root)
    path.parent.mkdir(exist_ok=True)
    atomic_write_text(path, json.dumps({"url": url, "pid": os.getpid()}) + "\n")


def clear_address(root: Path) -> None:
    """Forget the address, if this process recorded it (a second server's record stays)."""
    path = address_file(root)
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()


def served_at(root: Path) -> str | None:
    """The base URL of the server running for ``root`` now, or None."""
    try:
        data = json.loads(address_file(root).read_text(encoding="utf-8"))
        url, pid = str(data["url"]), int(data["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not url.startswith(("http://", "https://")):
        return None
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, under another user
    return url
