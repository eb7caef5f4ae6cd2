"""The live folder (`<home>/live`, issue 56, items 1 and 6): `league watch` writes and prunes only inside
the home, only its own regular files, and oddities there (a symlink, a dangling link, a folder named
x.replay, another watch pruning at the same moment, `live` itself a link, a file or a FIFO) are skipped
or refused in one sentence, never followed. Real watches (RocketSim games of a second) on real files."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.live_folder import KEEP_LIVE_FILES, live_file_name, prune_live
from league.cli import app

runner = CliRunner()


def watch(home, *args):
    return runner.invoke(app, ["watch", "rule", "atba", "--speed", "0", "--game-seconds", "1", "--seed", "1",
                               *map(str, args), "--home", str(home.root)])


def old_watch_files(folder: Path, n: int, start: float = 1_000_000_000.0) -> list[Path]:
    """`n` files named as watches name theirs, oldest first (mtimes a minute apart, long ago)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        path = folder / live_file_name("rule", f"atba{i}", now=start + 60 * i)
        path.write_bytes(b"old")
        os.utime(path, (start + 60 * i, start + 60 * i))
        paths.append(path)
    return paths


def one_sentence(result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    return lines[0]


def test_a_symlinked_live_folder_is_refused_and_nothing_outside_is_touched(home, tmp_path):
    outside = tmp_path / "elsewhere"
    files = old_watch_files(outside, 25)
    if home.live.exists():
        home.live.rmdir()
    home.live.symlink_to(outside, target_is_directory=True)
    line = one_sentence(watch(home))
    assert "live" in line and "not a folder" in line, line
    assert sorted(outside.iterdir()) == sorted(files)  # nothing written there, nothing pruned
    assert all(p.read_bytes() == b"old" for p in files)


@pytest.mark.parametrize("kind", ["file", "fifo", "dangling link"])
def test_live_as_a_file_a_fifo_or_a_dangling_link_is_one_sentence(home, tmp_path, kind):
    if home.live.exists():
        home.live.rmdir()
    if kind == "file":
        home.live.write_text("not a folder")
    elif kind == "fifo":
        os.mkfifo(home.live)
    else:
        home.live.symlink_to(tmp_path / "nowhere")
    line = one_sentence(watch(home))
    assert "live" in line and "not a folder" in line, line
    assert home.live.is_symlink() if kind == "dangling link" else home.live.exists()  # left as it was
    assert not (tmp_path / "nowhere").exists()


def test_pruning_keeps_to_the_watch_own_regular_files(home, tmp_path):
    """Links (dangling or not), folders named *.replay and files of other names in live/ are skipped:
    never followed, never removed, never a traceback; the watch's own old files are pruned."""
    olds = old_watch_files(home.live, 25)
    target = tmp_path / "precious.replay"
    target.write_bytes(b"keep me")
    linked = home.live / live_file_name("rule", "link", now=900_000_000.0)
    linked.symlink_to(target)
    dangling = home.live / live_file_name("rule", "dangling", now=900_000_000.0)
    dangling.symlink_to(tmp_path / "gone.replay")
    (home.live / "x.replay").mkdir()
    named_dir = home.live / live_file_name("rule", "dir", now=900_000_000.0)
    named_dir.mkdir()
    other = home.live / "notes.replay"
    other.write_bytes(b"not a watch's")
    os.utime(other, (0, 0))
    result = watch(home)
    assert result.exit_code == 0, result.output
    assert target.read_bytes() == b"keep me" and linked.is_symlink() and dangling.is_symlink()
    assert (home.live / "x.replay").is_dir() and named_dir.is_dir() and other.read_bytes() == b"not a watch's"
    kept = [p for p in olds if p.exists()]
    assert kept == olds[-KEEP_LIVE_FILES:]  # pruned as the watch starts: the newest old ones, then the new game
    result = watch(home)  # and a later watch too
    assert result.exit_code == 0, result.output


def test_two_prunes_at_once_never_fail(tmp_path):
    """Each prune removes what the other may have removed a moment before: a file gone is not an error."""
    folder = tmp_path / "live"
    for round_ in range(4):
        old_watch_files(folder, 400, start=1_000_000_000.0 + round_ * 100_000)
        barrier, errors = threading.Barrier(2), []

        def prune():
            barrier.wait()
            try:
                prune_live(folder, keep=0)
            except Exception as exc:  # noqa: BLE001 (the test reports whatever a prune raises)
                errors.append(exc)

        threads = [threading.Thread(target=prune) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == [] and list(folder.iterdir()) == []
