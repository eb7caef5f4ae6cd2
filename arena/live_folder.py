"""The league home's live folder (`live/`): where `league watch` writes the game it plays, and the
dashboard's Live page reads it.

Each watched game is one replay file, named anew by `live_file_name` (UTC time, process id, sides),
rewritten as the game plays with the metadata key `live` true (arena.replay.is_live) and whole at
the end. A watch checks the folder is the home's own (`live_folder`) before it writes anything, and
keeps the KEEP_LIVE_FILES newest games of its own naming (`prune_live`), touching nothing else there.
"""

from __future__ import annotations

import os
import re
import stat
import time
from pathlib import Path

from arena.tournament_play import fitted_file_name
from league.errors import LeagueError, quoted

KEEP_LIVE_FILES = 20  # the newest watched games kept in live/; older ones are removed when a new one starts
LIVE_NAME = re.compile(r"[0-9]{8}-[0-9]{6}-[0-9]+-.+\.replay")  # live_file_name's names: all a prune removes


def live_file_name(blue: str, orange: str, now: float | None = None) -> str:
    """A new live replay's name: UTC time, process id (two watchers never share one), the sides (long
    ones cut to fit a file name, with a hash: arena.tournament_play.fitted_file_name)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))
    return fitted_file_name(f"{stamp}-{os.getpid()}-{blue}-vs-{orange}")


def live_folder(folder: Path) -> Path:
    """`folder` (a league home's live/), made if missing, when it is a folder of its own; else one sentence.
    A symbolic link (even to a folder), a file or a FIFO there is refused, never followed or replaced, so a
    watch writes and prunes only inside the home. Checked before anything is written."""
    try:
        folder.mkdir()
    except FileExistsError:  # a folder already, or something else at its name (a dangling link included)
        pass
    mode = folder.lstat().st_mode
    if not stat.S_ISDIR(mode):
        what = "a symbolic link" if stat.S_ISLNK(mode) else "a FIFO" if stat.S_ISFIFO(mode) else \
            "a file" if stat.S_ISREG(mode) else "not a plain folder"
        raise LeagueError(f"The league home's live folder {quoted(str(folder))} is not a folder but {what}: a watch "
                          "writes only inside the home, so move it aside and watch again.")
    return folder


def prune_live(folder: Path, keep: int = KEEP_LIVE_FILES) -> None:
    """Remove all but the `keep` newest watched games of the live folder: regular files named as
    live_file_name names them, looked at without following links. Anything else there (a link, dangling
    or not, a folder named *.replay, another file) is left alone; a `folder` that is itself a link is not
    entered; a file another watch removed a moment before is no error."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:  # missing, or not a folder of its own: nothing of ours to prune
        return
    try:
        found = []
        with os.scandir(fd) as entries:
            for entry in entries:
                if not LIVE_NAME.fullmatch(entry.name):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except FileNotFoundError:  # removed by another watch's prune
                    continue
                if stat.S_ISREG(st.st_mode):
                    found.append((st.st_mtime, entry.name))
        for _, name in sorted(found, reverse=True)[keep:]:
            try:
                os.unlink(name, dir_fd=fd)
            except FileNotFoundError:
                pass
    finally:
        os.close(fd)
