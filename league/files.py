"""Writing files so that a reader never sees half of one and a crash leaves no debris.

A file is written to a temporary name beside its destination (unique per writer: a random
token), flushed to disk, then renamed over the destination, or, when it must never replace
anything, published with a hard link, which fails if the name exists.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from league.errors import LeagueError


def already_exists(path: Path) -> LeagueError:
    return LeagueError(f"{path} already exists, and this write never replaces a file.")


def write_file_atomic(path: Path, data: bytes, *, exclusive: bool = False) -> None:
    """Write to a temporary file in the same folder, flush it to disk, then rename over `path`.

    With `exclusive`, an existing `path` is never replaced: the temporary file is published with
    a hard link, which fails if the name exists (so of two writers racing for one name, exactly
    one wins), and an existing file is refused with a LeagueError. The temporary file is
    opened like any new file (mode 0666 less the umask), so the result has the permissions a
    plain write would give it; it is removed whatever happens.
    """
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        with open(tmp, "xb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if not exclusive:
            os.replace(tmp, path)
            return
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise already_exists(path) from None
    finally:
        tmp.unlink(missing_ok=True)
