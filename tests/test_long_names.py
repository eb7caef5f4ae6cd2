"""Valid long names make valid file names (issue 56, item 5): a replay named after two sides of three
64-character members each is cut to fit, with a short hash of the whole name, the same every time (so a
resumed tournament finds its files), for tournaments, matches and watched games."""

from __future__ import annotations

import os

import pytest
from typer.testing import CliRunner

from arena.tournament_play import MAX_FILE_NAME_BYTES, fitted_file_name
from league.cli import app
from league.files import write_file_atomic
from league.registry import Registry

runner = CliRunner()
LONG = [c * 64 for c in "BCDEFG"]  # six members of the longest name allowed (league.names)
BLUE, ORANGE = "+".join(LONG[:3]), "+".join(LONG[3:])


def cli(home, *args):
    return runner.invoke(app, [*map(str, args), "--home", str(home.root)])


@pytest.fixture
def long_home(home):
    reg = Registry.open(home.db_path)
    try:
        for name, kind in zip(LONG, ("rule", "atba", "random") * 2):
            reg.agent_store.add(name, kind, None)
    finally:
        reg.close()
    return home


def test_a_name_too_long_for_a_file_is_cut_with_a_hash_of_the_whole(tmp_path):
    short = fitted_file_name("00001-rule-vs-atba")
    assert short == "00001-rule-vs-atba.replay"
    stem = f"00001-{BLUE}-vs-{ORANGE}"
    name = fitted_file_name(stem)
    assert len(name.encode()) <= MAX_FILE_NAME_BYTES and name.endswith(".replay") and name.startswith("00001-BBBB")
    assert fitted_file_name(stem) == name  # the same names, the same file
    assert fitted_file_name(stem[:-1] + "H") != name  # names differing only past the cut differ
    write_file_atomic(tmp_path / name, b"x")  # and it can be written, its temporary name with it
    assert (tmp_path / name).read_bytes() == b"x"


def test_a_tournament_of_long_named_teams_plays_and_resumes(long_home):
    done = cli(long_home, "tournament", "--stage", "3v3", "--teams", f"{BLUE},{ORANGE}", "--games", "2",
               "--game-seconds", "1", "--workers", "1")
    assert done.exit_code == 0, done.output
    replays = list((long_home.root / "replays").rglob("*.replay"))
    assert len(replays) == 2 and all(len(p.name.encode()) <= MAX_FILE_NAME_BYTES for p in replays)
    reg = Registry.open(long_home.db_path)
    try:
        games = reg.game_store.games(3)
        assert len(games) == 2 and {g.blue for g in games} == {BLUE, ORANGE}
        assert sorted(os.path.basename(g.replay_path) for g in games) == sorted(p.name for p in replays)
    finally:
        reg.close()


def test_a_match_and_a_watch_of_long_named_teams(long_home):
    done = cli(long_home, "match", BLUE, ORANGE, "--stage", "3v3", "--max-games", "2", "--game-seconds", "1",
               "--workers", "1")
    assert done.exit_code == 0, done.output
    done = cli(long_home, "watch", BLUE, ORANGE, "--stage", "3v3", "--speed", "0", "--game-seconds", "1")
    assert done.exit_code == 0, done.output
    (live,) = list(long_home.live.iterdir())
    assert len(live.name.encode()) <= MAX_FILE_NAME_BYTES
