"""Shared fixtures: real league homes in temporary folders."""

from __future__ import annotations

import pytest

from league.home import LeagueHome
from league.registry import GameRecord, Registry


@pytest.fixture
def home(tmp_path) -> LeagueHome:
    h = LeagueHome(tmp_path / "league")
    h.create_dirs()
    Registry.create(h.db_path).close()
    return h


@pytest.fixture
def registry(home):
    reg = Registry.open(home.db_path)
    yield reg
    reg.close()


def play(reg: Registry, blue: str, orange: str, blue_goals: int, orange_goals: int, team_size: int = 1, **kw) -> int:
    """Record one game between two registered agents."""
    return reg.record_game(GameRecord(blue=blue, orange=orange, team_size=team_size, seed=kw.pop("seed", 0),
                                      blue_goals=blue_goals, orange_goals=orange_goals,
                                      length_seconds=kw.pop("length_seconds", 300.0), **kw))
