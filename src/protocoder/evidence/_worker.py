"""Child process of :func:`protocoder.evidence.extract.extract_bounded`.

Reads a document's bytes from standard input, limits its own CPU time and memory, extracts
the text and writes it to standard output as :func:`~.extract.bounded.write_result` says
(``{"error": ...}`` when the document cannot be read).
Usage: ``python -m protocoder.evidence._worker MEDIA_TYPE CPU_SECONDS``.
"""

from __future__ import annotations

import json
import sys


def _limit(cpu_seconds: int) -> None:
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX: the parent's timeout still applies
        return
    from .extract import EXTRACT_MEMORY

    for kind, value in ((resource.RLIMIT_CPU, cpu_seconds), (resource.RLIMIT_AS, EXTRACT_MEMORY)):
        try:
            soft, hard = resource.getrlimit(kind)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(kind, (value, hard))
        except (ValueError, OSError):
            pass
    # Deeply nested objects in a hostile PDF make pypdf recurse: a RecursionError is
    # reported as a broken file, never a crash of the interpreter.
    sys.setrecursionlimit(4000)


def main() -> int:
    """Extract standard input; always exit 0 with a result unless the process itself dies."""
    media_type, cpu_seconds = sys.argv[1], int(sys.argv[2])
    _limit(cpu_seconds)
    data = sys.stdin.buffer.read()
    from .extract import ExtractionError, extract
    from .extract.bounded import write_result

    try:
        extracted = extract(data, media_type)
        del data
        write_result(extracted, sys.stdout.buffer)
        return 0
    except ExtractionError as exc:
        result = {"error": str(exc)}
    except MemoryError:
        result = {"error": "text extraction ran out of the memory it may use; the file is too large or malformed"}
    except RecursionError:
        result = {"error": "the document nests too deeply to be read"}
    except Exception as exc:  # noqa: BLE001 - any failure of a library on a broken file is one line
        message = " ".join(str(exc).split())[:200] or type(exc).__name__
        result = {"error": f"the document cannot be read ({message})"}
    sys.stdout.write(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
