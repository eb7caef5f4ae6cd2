"""league/game_values.py is the one home of soccar's constants: it matches RocketSim and RLGym, and
the copies that cannot import it (the standalone RLBot bot folder, agents/obs.py) equal it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import agents.obs
from league import game_values as gv

BOT_DIR = Path(__file__).resolve().parents[1] / "agents" / "rlbot_bot"


def _bot_module(name: str, monkeypatch: pytest.MonkeyPatch):
    """A module of the bot folder, loaded as an export runs it: beside `league_obs`, the verbatim
    copy of agents/obs.py that the exporter writes next to it."""
    monkeypatch.setitem(sys.modules, "league_obs", agents.obs)
    spec = importlib.util.spec_from_file_location(f"rlbot_bot_{name}", BOT_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bot_folder_copies_equal_the_game_values(monkeypatch):
    packet = _bot_module("league_packet", monkeypatch)
    np.testing.assert_array_equal(packet.LEAGUE_PAD_POSITIONS, np.array(gv.BOOST_PADS))
    net = _bot_module("league_net", monkeypatch)
    assert net.GOAL_Y == gv.BACK_WALL_Y * agents.obs.POS_COEF
    assert net.GOAL_Z == gv.GOAL_CENTER_Z * agents.obs.POS_COEF


def test_pad_block_has_a_place_for_every_pad():
    assert agents.obs.N_BOOST_PADS == len(gv.BOOST_PADS) == 34


def test_boost_pads_are_rocketsims():
    from arena.engine.sim import new_arena

    arena, _ = new_arena(1)
    positions = np.array([pad.get_pos().as_numpy() for pad in arena.get_boost_pads()])
    np.testing.assert_array_equal(positions, np.array(gv.BOOST_PADS))
    assert [i for i, pad in enumerate(arena.get_boost_pads()) if pad.is_big] == list(gv.BIG_PADS)


def test_pads_are_point_symmetric_as_the_orange_observation_reads_them():
    pads = np.array(gv.BOOST_PADS)
    np.testing.assert_array_equal(pads[::-1], pads * [-1, -1, 1])
    assert len(gv.BIG_PADS) == 6


def test_values_match_rlgym():
    common = pytest.importorskip("rlgym.rocket_league.common_values")
    for name in ("SIDE_WALL_X", "BACK_WALL_Y", "BACK_NET_Y", "CEILING_Z", "GOAL_HEIGHT", "GOAL_THRESHOLD",
                 "BALL_RADIUS", "BALL_RESTING_HEIGHT", "CAR_MAX_SPEED", "BALL_MAX_SPEED", "TICKS_PER_SECOND"):
        assert getattr(gv, name) == getattr(common, name), name
    assert gv.CORNER_CUT == common.CORNER_CATHETUS_LENGTH
    assert gv.GOAL_HALF_WIDTH == common.GOAL_CENTER_TO_POST
    assert gv.SUPERSONIC_SPEED == common.SUPERSONIC_THRESHOLD
    assert gv.GOAL_CENTER_Z == int(common.GOAL_HEIGHT / 2)
    # RLGym lists one pad 2 uu off RocketSim (y 3310 instead of 3308); the rest agree exactly.
    ours, theirs = np.array(gv.BOOST_PADS), np.array(common.BOOST_LOCATIONS)
    assert np.abs(ours - theirs).max() <= 2.0 and (ours != theirs).any(axis=1).sum() == 1
