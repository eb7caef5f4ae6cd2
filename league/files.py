"""Files in and out: writing so that a reader never sees half of one and a crash leaves no debris;
reading only regular files of a bounded size; printing names and paths without control characters.

A file is written to a temporary name beside its destination (unique per writer: a random
token), flushed to disk, then renamed over the destination, or, when it must never replace
anything, published with a hard link, which fails if the name exists.
"""

from __future__ import annotations

import os
import re
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

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


@contextmanager
def all_or_nothing(failure: str) -> Iterator[list[Path]]:
    """For a block that writes files beside a database change: each file written is appended to the
    list it gives, and all of them are removed if the block fails; an OSError ends as one sentence,
    `failure` (e.g. "Cannot copy a into b") followed by the system's reason."""
    written: list[Path] = []
    try:
        yield written
    except OSError as exc:
        _remove(written)
        raise LeagueError(f"{failure}: {exc.strerror or exc}.") from None
    except BaseException:
        _remove(written)
        raise


def _remove(paths: list[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


# --------------------------------------------------------------------------- reading

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link"))


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words ('a folder', 'a named pipe (FIFO)', ...)."""
    return next((words for test, words in _KINDS if test(mode)), "not a regular file")


class FileRefused(LeagueError):
    """A file the league will not read: missing, not a regular file, or larger than `limit`."""


def not_a_file(path: Path, mode: int, what: str) -> FileRefused:
    """The sentence for `path`, of `mode` (stat's), that is not a regular file: "The {what} ... is a named pipe
    (FIFO), not a file." """
    return FileRefused(f"The {what} {printable(str(path))} is {file_kind(mode)}, not a file.")


def open_regular(path: Path, limit: int, what: str) -> BinaryIO:
    """Open `path` for reading only if it is a regular file of at most `limit` bytes (one FileRefused otherwise).

    The file is opened without blocking and checked on the open descriptor (fstat), so a FIFO, a
    device such as /dev/zero or a folder is refused at once, never read from, and a file swapped
    in between the check and the read cannot slip through. Symlinks are followed: what they point
    at is checked. `what` names the file in the sentence ("config file", "checkpoint").
    """
    shown = printable(str(path))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise FileRefused(f"The {what} {shown} does not exist.") from None
    except OSError as exc:
        raise FileRefused(f"The {what} {shown} cannot be read: {exc.strerror}.") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise not_a_file(path, info.st_mode, what)
        if info.st_size > limit:
            raise FileRefused(f"The {what} {shown} is {info.st_size:,} bytes, more than a {what} can be "
                              f"({limit:,}).")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path, limit: int, what: str) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (the rule of `open_regular`); a file that
    grew past `limit` since it was checked is refused too."""
    with open_regular(path, limit, what) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise FileRefused(f"The {what} {printable(str(path))} is larger than a {what} can be ({limit:,} bytes).")
    return data


# --------------------------------------------------------------------------- printing

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_CONTROL_BUT_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escaped(match: re.Match) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def printable(text: str, *, keep_lines: bool = False) -> str:
    """`text` with control characters (escape sequences, carriage returns, bidi overrides) shown as
    escapes (\\x1b, \\r, \\u202e), so a name or path handed in can never drive the terminal it is
    printed on. Newlines and tabs are escaped too, unless `keep_lines` (for whole blocks of output)."""
    return (_CONTROL_BUT_LINES if keep_lines else _CONTROL).sub(_escaped, text)
