"""Where `league export` may write, and what `--force` may replace.

An export writes beside the user's own files, so what it may replace is proven, never assumed:
`--force` replaces only what an earlier export wrote (a folder holding manifest.json and
exactly the unchanged files it lists, or a zip holding exactly those), and never, forced or
not, the league home, anything in it or above it, the current folder, the user's home folder
or /. Places are compared after resolving symlinks; a DIR that is itself a symlink is refused.
What is replaced is set aside, checked again there, and removed file by file by name.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import stat
import zipfile
from pathlib import Path
from typing import BinaryIO, Callable

from league.errors import LeagueError
from league.files import file_kind, open_regular, printable, read_regular
from league.home import LeagueHome

MAX_MANIFEST_BYTES = 1 << 20  # an export's manifest.json is a few KiB
MAX_EXPORTED_FILE_BYTES = 1 << 30  # the largest network's actor weights are 200 MB
EMPTY, EARLIER_EXPORT, CHANGED, FOREIGN = "empty", "earlier export", "changed", "foreign"


def shown_path(path: Path) -> str:
    return printable(str(path))


def _resolved(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symlink loop, a folder that cannot be read
        return None


def _protected_places(home: LeagueHome, *, rlbot: bool) -> list[tuple[Path, str, bool]]:
    """(resolved place, its name in a sentence, whether what is inside it is refused too)."""
    places = [(Path(os.sep), "the root folder", False)] if rlbot else []
    places.append((home.root, "the league home", True))
    if rlbot:
        for where, words in ((Path.cwd, "the current folder"), (Path.home, "your home folder")):
            try:
                places.append((where(), words, False))
            except (OSError, RuntimeError, KeyError):  # a deleted cwd; no home folder known
                pass
    return [(real, words, inside) for place, words, inside in places if (real := _resolved(place)) is not None]


def check_place(path: Path, home: LeagueHome, *, rlbot: bool, what: str) -> None:
    """Refuse (one LeagueError) a `path` that is a protected place, holds one, or lies inside the league home.

    The RLBot export (`rlbot`) protects the root folder, the league home, the current folder and
    the user's home folder; the checkpoint export, which never replaces a file, the league home.
    """
    shown = shown_path(path)
    real = _resolved(path)
    if real is None:
        raise LeagueError(f"{shown} cannot be resolved (a symbolic link loop?); give another folder for the {what}.")
    never = f"an export never writes there, so give another folder for the {what}."
    for place, words, inside in _protected_places(home, rlbot=rlbot):
        named = f"{words} ({shown_path(place)})"
        if real == place:
            raise LeagueError(f"{shown} is {words if place == Path(os.sep) else named}; {never}")
        if inside and place in real.parents:
            raise LeagueError(f"{shown} is inside {named}; {never}")
        if real in place.parents:
            raise LeagueError(f"{shown} holds {named}; {never}")


def _kind(mode: int) -> str:
    return "a file" if stat.S_ISREG(mode) else file_kind(mode)


def check_folder_path(folder: Path, what: str, *, links_ok: bool = False) -> os.stat_result | None:
    """`folder`'s lstat if it exists as a real folder, None if it does not exist yet (and can be made);
    one sentence for a symlink (unless `links_ok`: then what it points at counts), a file, a device,
    or a file where a parent folder should be."""
    try:
        info = os.stat(folder) if links_ok else os.lstat(folder)
    except FileNotFoundError:
        if folder.is_symlink():
            raise LeagueError(f"{shown_path(folder)} is a symbolic link to nothing; give a folder for the "
                              f"{what}.") from None
        info = None
    except NotADirectoryError:
        info = None  # a parent is not a folder: named below
    except OSError as exc:
        raise LeagueError(f"Cannot look at {shown_path(folder)}: {exc.strerror or exc}.") from None
    if info is not None:
        if stat.S_ISLNK(info.st_mode):
            raise LeagueError(f"{shown_path(folder)} is a symbolic link; give the folder itself for the {what}, not a "
                              "link to it.")
        if not stat.S_ISDIR(info.st_mode):
            raise LeagueError(f"{shown_path(folder)} is {_kind(info.st_mode)}, not a folder; give a folder for the {what}.")
        return info
    for parent in folder.parents:
        try:
            mode = os.stat(parent).st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            break  # not ours to judge here: the write says why it fails
        if not stat.S_ISDIR(mode):
            raise LeagueError(f"{shown_path(parent)} is {_kind(mode)}, not a folder, so {shown_path(folder)} cannot be "
                              f"made; give a folder for the {what}.")
        break
    return None


def _manifest_files(data: bytes) -> dict[str, str] | None:
    """The manifest's {file name: sha256} if `data` is an rl-league RLBot export's manifest.json, else None."""
    from agents.rlbot_export import FORMAT_NAME, MANIFEST

    try:
        manifest = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        return None
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        return None
    for name, sha in files.items():
        if (not isinstance(sha, str) or not isinstance(name, str) or name in ("", ".", "..", MANIFEST)
                or "/" in name or "\\" in name or "\0" in name):
            return None
    return files


def _sha256_stream(fh: BinaryIO, limit: int) -> str | None:
    """The hex sha256 of what `fh` holds, or None past `limit` bytes."""
    digest, total = hashlib.sha256(), 0
    while chunk := fh.read(1 << 20):
        total += len(chunk)
        if total > limit:
            return None
        digest.update(chunk)
    return digest.hexdigest()


def _folder_holds(folder: Path) -> tuple[str, list[str]]:
    """What `folder` (a real folder) holds: (EMPTY, []), (EARLIER_EXPORT, the names it holds),
    (CHANGED, ...) for an earlier export whose files no longer match its manifest, or (FOREIGN, [])."""
    from agents.rlbot_export import MANIFEST

    try:
        with os.scandir(folder) as entries:
            found = {e.name: e.is_file(follow_symlinks=False) for e in entries}
    except OSError as exc:
        raise LeagueError(f"Cannot look into {shown_path(folder)}: {exc.strerror or exc}.") from None
    if not found:
        return EMPTY, []
    if not all(found.values()) or MANIFEST not in found:  # a subfolder, a link, a FIFO: not ours
        return FOREIGN, []
    try:
        files = _manifest_files(read_regular(folder / MANIFEST, MAX_MANIFEST_BYTES, "manifest"))
    except LeagueError:
        return FOREIGN, []
    if files is None or set(found) != {*files, MANIFEST}:
        return FOREIGN, []
    for name, sha in files.items():
        try:
            with open_regular(folder / name, MAX_EXPORTED_FILE_BYTES, "file") as fh:
                if _sha256_stream(fh, MAX_EXPORTED_FILE_BYTES) != sha:
                    return CHANGED, []
        except LeagueError:
            return FOREIGN, []
    return EARLIER_EXPORT, sorted(found)


def _zip_holds(archive: Path, root: str) -> str:
    """EARLIER_EXPORT if `archive` is a zip an export of a folder named `root` wrote (exactly
    root/manifest.json and the unchanged files it lists), CHANGED if its files no longer match, else FOREIGN."""
    from agents.rlbot_export import MANIFEST

    try:
        with open_regular(archive, MAX_EXPORTED_FILE_BYTES, "zip") as fh, zipfile.ZipFile(fh) as z:
            infos = z.infolist()
            names = [i.filename for i in infos]
            manifest_name = f"{root}/{MANIFEST}"
            if len(set(names)) != len(names) or manifest_name not in names:
                return FOREIGN
            info = z.getinfo(manifest_name)
            if info.file_size > MAX_MANIFEST_BYTES:
                return FOREIGN
            files = _manifest_files(z.read(info))
            if files is None or set(names) != {manifest_name, *(f"{root}/{name}" for name in files)}:
                return FOREIGN
            for name, sha in files.items():
                info = z.getinfo(f"{root}/{name}")
                if info.file_size > MAX_EXPORTED_FILE_BYTES:
                    return FOREIGN
                with z.open(info) as member:
                    if _sha256_stream(member, MAX_EXPORTED_FILE_BYTES) != sha:
                        return CHANGED
    except (LeagueError, OSError, zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError,
            NotImplementedError, RuntimeError):
        return FOREIGN
    return EARLIER_EXPORT


def _refusal(path: Path, holds: str, force: bool) -> LeagueError | None:
    """The sentence for what `path` holds, or None if the export may go there."""
    shown = shown_path(path)
    if holds == FOREIGN:
        return LeagueError(f"{shown} holds files that are not an rl-league export; remove them yourself or give "
                           "another folder.")
    if holds == CHANGED:
        return LeagueError(f"{shown} was changed since it was exported; remove it yourself or pick another folder.")
    if holds == EARLIER_EXPORT and not force:
        return LeagueError(f"{shown} holds an earlier rl-league export; pass --force to replace it, or give another "
                           "folder.")
    return None


def _check_zip_path(archive: Path, root: str, force: bool) -> bool:
    """Whether `archive` exists (then it is an earlier export's zip and `force` is given); a LeagueError otherwise."""
    shown = shown_path(archive)
    try:
        info = os.lstat(archive)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise LeagueError(f"Cannot look at {shown}: {exc.strerror or exc}.") from None
    if stat.S_ISLNK(info.st_mode):
        raise LeagueError(f"{shown} is a symbolic link; an export never replaces a link, so remove it yourself or "
                          "give another folder.")
    if not stat.S_ISREG(info.st_mode):
        raise LeagueError(f"{shown} is {_kind(info.st_mode)}, not a zip an export wrote; remove it yourself or give "
                          "another folder.")
    holds = _zip_holds(archive, root)
    if holds == FOREIGN:
        raise LeagueError(f"{shown} already exists and is not a zip an rl-league export wrote; remove it yourself "
                          "or give another folder.")
    if (refusal := _refusal(archive, holds, force)) is not None:
        raise refusal
    return True


def check_destination(home: LeagueHome, folder: Path, zip_path: Path | None, force: bool) -> None:
    """Refuse (one LeagueError, nothing touched) a destination this export may not write or replace."""
    check_place(folder, home, rlbot=True, what="bot")
    if zip_path is not None:
        check_place(zip_path, home, rlbot=True, what="bot")
    if check_folder_path(folder, "bot") is not None:
        if (refusal := _refusal(folder, _folder_holds(folder)[0], force)) is not None:
            raise refusal
    if zip_path is not None:
        _check_zip_path(zip_path, folder.name, force)


def _set_aside(dest: Path) -> Path | None:
    """Rename `dest` to a random hidden name beside it (where no other command looks); None if it is gone."""
    aside = dest.with_name(f".{dest.name}.{secrets.token_hex(6)}.old")
    try:
        os.rename(dest, aside)
    except FileNotFoundError:
        return None
    return aside


def _put_back(aside: Path, dest: Path) -> None:
    """Return what was set aside to its name; if something took the name meanwhile, say where it is kept."""
    try:
        if aside.is_dir() and not aside.is_symlink():
            os.rename(aside, dest)  # fails unless `dest` is absent or an empty folder
        else:
            os.link(aside, dest, follow_symlinks=False)  # never replaces a file that appeared
            aside.unlink()
    except OSError:
        raise LeagueError(f"{shown_path(dest)} changed while the bot was exported; the earlier one is kept as "
                          f"{shown_path(aside)}.") from None


def swap_in(new: Path, dest: Path, force: bool, holds: Callable[[Path], tuple[str, list[Path]]]) -> None:
    """Put `new` (a finished temp folder or file beside `dest`) at `dest`.

    What is at `dest` is first set aside and checked again there (`holds(aside)` returns what it
    holds and the names it may remove), so what gets removed is exactly what was checked, even if
    `dest` changed since the export began; anything refused is put back untouched.
    """
    aside = _set_aside(dest)
    doomed: list[Path] = []
    if aside is not None:
        try:
            if aside.is_symlink():
                raise LeagueError(f"{shown_path(dest)} is a symbolic link; give the folder itself, not a link to it.")
            what, doomed = holds(aside)
            if (refusal := _refusal(dest, what, force)) is not None:
                raise refusal
        except BaseException:
            _put_back(aside, dest)
            raise
    try:
        if new.is_dir():
            os.rename(new, dest)  # fails if a non-empty folder took the name meanwhile
        else:
            os.link(new, dest)  # fails if a file took the name meanwhile
            new.unlink()
    except OSError:
        if aside is not None:
            _put_back(aside, dest)
        raise
    if aside is not None:  # provably only what an earlier export wrote (or nothing): removed by name
        try:
            for path in doomed:
                path.unlink()
            if aside.is_dir():
                aside.rmdir()
        except OSError:
            pass  # something new inside it: left as it is


def folder_doomed(aside: Path) -> tuple[str, list[Path]]:
    """What a folder set aside holds, and the files of it that may be removed."""
    if not aside.is_dir():
        return FOREIGN, []
    what, names = _folder_holds(aside)
    return what, [aside / name for name in names]


def zip_doomed(root: str) -> Callable[[Path], tuple[str, list[Path]]]:
    """What a zip set aside holds (an export of a folder named `root`?), and the file that may be removed."""

    def holds(aside: Path) -> tuple[str, list[Path]]:
        if not stat.S_ISREG(os.lstat(aside).st_mode):
            return FOREIGN, []
        return _zip_holds(aside, root), [aside]
    return holds
