"""The 3D replay view's data: boost pad states worked out from a replay, the cars' axes, the payload
and page both views share, and the Replays page's choice of view.

The pads and axes are checked against a real league game: the game player (arena.tournament_play)
plays rule against atba in RocketSim and writes its replay as always, while this test also keeps
what RocketSim itself said at each recorded step (the pads' states, the cars' forward and up
vectors), which the replay file does not hold.
"""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pytest

from agents.loading import load_policy
from agents.obs import CAR_FWD, CAR_UP
from arena.engine.game import GameSpec
from arena.replay import car_angles, car_rotations, read_replay
from arena.tournament_play import GamePlayer
from dashboard.boost_pads import PAD_IS_BIG, pad_downtimes, pad_states, pickups, reset_steps
from dashboard.replay_view import CAR_FIELDS, UNIT_SCALE, player_html, player_payload
from dashboard_fixture import synthetic_replay
from league.game_values import BOOST_PADS

GAME_SECONDS = 40.0


class TruthKeepingPlayer(GamePlayer):
    """The league's game player, also keeping RocketSim's pad states and car axes at each frame it records."""

    def _round(self, batch):
        self.pads, self.axes = {}, {}
        yield from super()._round(batch)

    def _snapshot(self, ball, cars, t):
        super()._snapshot(ball, cars, t)
        arrays = self.worker.read_arrays() if t == 0 else self.worker.last_arrays
        self.pads[t] = arrays.pads[0] > 0.5
        self.axes[t] = (arrays.cars[0][..., CAR_FWD].copy(), arrays.cars[0][..., CAR_UP].copy())


@pytest.fixture(scope="module")
def game(tmp_path_factory):
    """(replay, RocketSim's pads [T, 34] bool, forward [T, C, 3], up [T, C, 3]) of a 2v2 rule vs atba game."""
    from league.schedule import ScheduledGame

    home = tmp_path_factory.mktemp("pads")
    spec = GameSpec(team_size=2, tick_skip=8, mode="timed", game_seconds=GAME_SECONDS)
    player = TruthKeepingPlayer(spec, {n: load_policy(n) for n in ("rule", "atba")}, home, "games", arenas=1)
    try:
        outcome = next(player.play([ScheduledGame(0, "rule", "atba", 7)]))
    finally:
        player.close()
    replay = read_replay(home / outcome.replay_path)
    frames = range(replay.steps)
    return (replay, np.array([player.pads[t] for t in frames]),
            np.array([player.axes[t][0] for t in frames]), np.array([player.axes[t][1] for t in frames]))


def test_pad_states_match_rocketsim(game):
    replay, truth, _, _ = game
    found = pickups(replay)
    assert len(found) >= 15  # the game took pads, big and small: there is something to get right
    assert {bool(PAD_IS_BIG[pad]) for _, _, pad in found} == {True, False}
    inferred = pad_states(replay)
    assert inferred.shape == truth.shape == (replay.steps, len(BOOST_PADS))
    assert (inferred == truth).mean() > 0.99
    # every time RocketSim took a pad down, the inference took the same pad down within a step
    taken = np.argwhere(truth[1:] < truth[:-1]) + [1, 0]
    inferred_taken = {(int(f), int(p)) for f, p in np.argwhere(inferred[1:] < inferred[:-1]) + [1, 0]}
    missed = [(f, p) for f, p in taken if not {(f - 1, p), (f, p), (f + 1, p)} & inferred_taken]
    assert len(missed) <= len(taken) * 0.05, missed


def test_a_kickoff_puts_every_pad_back(game):
    replay, truth, _, _ = game
    later = [r for r in reset_steps(replay) if r > 0]
    assert later  # rule scored against atba: there were kick-offs after goals
    inferred = pad_states(replay)
    for frame in later:
        assert truth[frame].all() and inferred[frame].all()
    # the intervals are sorted, disjoint and inside the game
    for downs in pad_downtimes(replay):
        assert all(0 < a < b <= replay.steps for a, b in downs)
        assert all(b1 <= a2 for (_, b1), (a2, _) in zip(downs, downs[1:]))


def axes(angles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rot = car_rotations(angles)
    return rot[..., 0], rot[..., 2]


def test_car_axes_are_rocketsims(game):
    """The replay stores (pitch, yaw, roll); the 3D view draws forward and up vectors rebuilt from
    them, which must be the vectors RocketSim gave the game player."""
    replay, _, forward, up = game
    rot = car_rotations(replay.cars[:, :, 3:6])
    fwd, left, upv = rot[..., 0], rot[..., 1], rot[..., 2]
    assert np.abs(fwd - forward).max() < 2e-3 and np.abs(upv - up).max() < 2e-3
    assert np.abs(left - np.cross(up, forward)).max() < 4e-3  # RLGym's columns: forward, left, up
    assert np.abs(np.linalg.norm(fwd, axis=-1) - 1).max() < 1e-6


def test_every_reader_of_a_replays_angles_sees_rocketsims_axes(game):
    """One reading of a replay's (pitch, yaw, roll) (arena.replay.car_rotations) serves the dashboard's player,
    RocketSimVis' packets and RLViser's car states: each gives, for real cars of a real game, the forward and
    up vectors RocketSim gave the game player."""
    from arena.viewers.frame import replay_frames
    from arena.viewers.rlviser import car_states
    from arena.viewers.rocketsimvis import message

    replay, _, forward, up = game
    steps = [0, replay.steps // 3, replay.steps // 2, replay.steps - 1]
    payload = player_payload(replay)
    cars = np.frombuffer(base64.b64decode(payload["carData"]), "<i2").reshape(payload["steps"], payload["cars"],
                                                                                 len(CAR_FIELDS))
    frames = list(replay_frames(replay))
    for t in steps:
        f = t // payload["stride"]
        shown = {"dashboard": (cars[f, :, 3:6] / UNIT_SCALE, cars[f, :, 6:9] / UNIT_SCALE)}
        sent = message(frames[t])["cars"]
        shown["rocketsimvis"] = (np.array([c["phys"]["forward"] for c in sent]), np.array([c["phys"]["up"] for c in sent]))
        mats = [state.rot_mat for *_, state in car_states(frames[t])]
        shown["rlviser"] = (np.array([m.forward for m in mats]), np.array([m.up for m in mats]))
        for reader, (fwd, upv) in shown.items():
            assert np.abs(fwd - forward[t]).max() < 3e-3 and np.abs(upv - up[t]).max() < 3e-3, (reader, t)


def test_car_axes_invert_the_writers_angles_in_every_attitude():
    rng = np.random.default_rng(3)
    fwd = rng.normal(size=(500, 3))
    fwd /= np.linalg.norm(fwd, axis=1, keepdims=True)
    up = np.cross(fwd, rng.normal(size=(500, 3)))  # any vector square to forward: upside down, on a wall
    up /= np.linalg.norm(up, axis=1, keepdims=True)
    back_fwd, back_up = axes(car_angles(fwd, up))
    assert np.abs(back_fwd - fwd).max() < 1e-9 and np.abs(back_up - up).max() < 1e-9


def test_payload_carries_the_3d_state(game):
    replay = game[0]
    payload = player_payload(replay)
    assert payload["padDowns"] == pad_downtimes(replay)
    cars = np.frombuffer(base64.b64decode(payload["carData"]), "<i2").reshape(replay.steps, payload["cars"],
                                                                                 len(CAR_FIELDS))
    fwd, up = axes(replay.cars[:, :, 3:6])
    assert np.abs(cars[:, :, 3:6] / UNIT_SCALE - fwd).max() <= 1 / UNIT_SCALE
    assert np.abs(cars[:, :, 6:9] / UNIT_SCALE - up).max() <= 1 / UNIT_SCALE
    assert np.abs(cars[:, :, 2] - replay.cars[:, :, 2]).max() <= 0.5
    # goals carry the score after them, for the timeline's marks
    assert [g["score"] for g in payload["goals"]] == [f"{sum(h['team'] == 0 for h in payload['goals'][:k + 1])}-"
                                                      f"{sum(h['team'] == 1 for h in payload['goals'][:k + 1])}"
                                                      for k in range(len(payload["goals"]))]
    assert payload["goals"]  # rule scored


def test_both_views_are_one_page_apart_from_the_view():
    payload = player_payload(synthetic_replay(2, "blue-bot", "orange-bot", 1, 1, 0, 20.0))
    three, two = player_html(payload, view="3d"), player_html(payload, view="2d")
    assert 'data-view="3d"' in three and 'getContext("webgl"' in three and '<select id="camera"' in three
    assert 'data-view="2d"' in two and 'getContext("webgl"' not in two and 'id="camera"' not in two
    for html in (three, two):
        assert html.count("function createView(") == 1 and 'id="scrub"' in html and 'id="timeline"' in html
        assert not re.search(r"/\*[A-Z_]+\*/", html)  # every slot filled
        assert not re.search(r"https?:|src=|href=|import\(", html)  # nothing to fetch: it plays offline
    with pytest.raises(ValueError):
        player_html(payload, view="4d")


@pytest.mark.parametrize("view", ["3d", "2d"])
@pytest.mark.parametrize("name", ["/*VIEW_JS*/", "/*FIELD_JS*/", "/*PAYLOAD*/", "</script>/*GEOMETRY*/"])
def test_a_replays_names_are_never_read_as_page_slots(view, name):
    """The page is filled slot by slot; a name in the replay file that looks like a slot stays a name.
    (Before, the drawing code was substituted after the payload, so a team named /*FIELD_JS*/ put
    the whole script inside a JSON string.)"""
    payload = player_payload(synthetic_replay(2, name, "o", 1, 0, 0, 20.0))
    html = player_html(payload, view=view)
    assert html.count("function createView(") == 1
    data = html.split("const D = ", 1)[1].split(";\n", 1)[0]
    assert json.loads(data)["blue"] == name


def test_fixture_replays_keep_pads_with_their_own_rule():
    """Synthetic replays (the dashboard fixture) fill boost on big pads only: every pickup found is a big pad's."""
    replay = synthetic_replay(4, "a", "b", 1, 1, 1, 60.0)
    assert all(PAD_IS_BIG[pad] for _, _, pad in pickups(replay))



def test_the_replays_page_shows_3d_first_and_2d_on_request(monkeypatch, tmp_path):
    from arena.replay import write_replay
    from test_dashboard import league_with_game, page

    home = league_with_game(tmp_path, "replays/one.replay")
    write_replay(home.replays / "one.replay", synthetic_replay(1, "rule", "random", 1, 1, 0, 20.0))
    at = page(monkeypatch, home.root, "replays", game=1)
    assert not at.exception and not at.error
    assert at.radio(key="replay_view").value == "3d" and "view" not in at.query_params
    assert 'data-view="3d"' in at.get("iframe")[0].proto.srcdoc
    at.radio(key="replay_view").set_value("2d").run()
    assert 'data-view="2d"' in at.get("iframe")[0].proto.srcdoc and at.query_params["view"] == "2d"
    # a link with the view opens it
    at = page(monkeypatch, home.root, "replays", game=1, view="2d")
    assert at.radio(key="replay_view").value == "2d" and 'data-view="2d"' in at.get("iframe")[0].proto.srcdoc
