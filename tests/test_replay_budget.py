"""The dashboard's replay budget (issue 56, item 2): a valid replay at the reader's bounds (3v3, tick
skip 1, the most steps arena/replay.py takes, constant data: about 75 KB) cost the Live and Replays
pages 1.3-1.9 GB and an 88 MB page. Each page is measured in a process of its own
(tests/replay_budget_probe.py: Streamlit's AppTest, ru_maxrss); what is asserted is the bounded
behaviour (refused in one sentence, frames within the budget), not timings."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("streamlit")

from arena.replay import MAX_STEPS, read_replay, write_replay  # noqa: E402
from dashboard.replay_view import MAX_FRAMES, player_html, player_payload  # noqa: E402
from dashboard_fixture import build_empty_league, synthetic_replay  # noqa: E402
from league.registry import GameRecord, Registry  # noqa: E402
from replay_bounds import write_bound_replay  # noqa: E402

PROBE = str(Path(__file__).with_name("replay_budget_probe.py"))
PEAK_MB_BOUND = 600  # the page at the reader's bounds peaked at 1,255 MB before; a streamlit process is ~200 MB


@pytest.fixture(scope="module")
def bound_home(tmp_path_factory):
    """A league with one game whose replay is at the reader's bounds, and the same file in live/."""
    home = build_empty_league(tmp_path_factory.mktemp("budget") / "league")
    path = write_bound_replay(home.replays / "bound.replay")
    assert path.stat().st_size < 100_000
    home.live.mkdir(exist_ok=True)
    shutil.copy(path, home.live / "20260101-000000-1-rule-vs-atba.replay")
    reg = Registry.open(home.db_path)
    reg.game_store.record(GameRecord(blue="rule", orange="atba", team_size=3, seed=1, blue_goals=0, orange_goals=0,
                                     length_seconds=MAX_STEPS / 120, replay_path="replays/bound.replay"))
    reg.close()
    return home


def probe(home, page: str, game: str = "", views: int = 1) -> dict:
    done = subprocess.run([sys.executable, PROBE, str(home.root), page, game, str(views)], capture_output=True,
                          text=True, timeout=300, cwd=Path(__file__).parents[1])
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def one_sentence_refusal(found: dict) -> str:
    assert not found["exceptions"], found["exceptions"]
    assert found["iframes"] == 0 and found["page_bytes"] == 0, found
    [error] = found["errors"]
    assert "\n" not in error and error.endswith(".") and "432,000 steps" in error, error
    return error


@pytest.mark.parametrize("page, game", [("replays", "1"), ("live", "")])
def test_a_replay_over_the_dashboard_s_budget_is_refused_before_it_is_decoded(bound_home, page, game):
    # Before: drawn at every one of its 432,000 steps (an 87.6 MB page, a 1.3 GB peak, 5-6 s).
    found = probe(bound_home, page, game)
    print(page, found)  # the figures for the record: seconds, page_bytes, peak_mb
    one_sentence_refusal(found)
    assert found["peak_mb"] < PEAK_MB_BOUND, found


def test_the_replay_cache_is_keyed_by_path_not_by_mtime(home):
    # Before: each touch of a live file (rewritten twice a second) added a cache entry of its own.
    home.live.mkdir(exist_ok=True)
    path = home.live / "20260101-000000-1-rule-vs-atba.replay"
    write_replay(path, synthetic_replay(3, "rule", "atba", 1, 1, 0, 20.0))
    once, five = probe(home, "live"), probe(home, "live", views=5)
    assert not once["errors"] and not five["errors"] and once["iframes"] == 1
    assert 0 < five["replay_cache_bytes"] < 1.5 * once["replay_cache_bytes"], (once, five)


def test_the_player_embeds_at_most_the_frame_budget_keeping_goals(tmp_path):
    # A 10-minute 3v3 game at tick skip 1 (72,001 steps) with goals: embedded evenly at most MAX_FRAMES
    # frames, each goal at the frame that holds its step.
    replay = synthetic_replay(5, "rule", "atba", 3, 2, 1, 600.0, tick_skip=1)
    write_replay(tmp_path / "long.replay", replay)
    replay = read_replay(tmp_path / "long.replay")
    payload = player_payload(replay)
    frames, stride = payload["steps"], payload["stride"]
    assert frames <= MAX_FRAMES and frames == -(-replay.steps // stride)
    assert payload["dt"] == pytest.approx(stride / 120)
    bytes_per_frame = 4 * 2 + 6 * 12 * 2  # the ball's and the cars' int16 fields
    assert len(payload["carData"]) + len(payload["ball"]) <= 4 / 3 * bytes_per_frame * MAX_FRAMES + 8
    for goal, step in zip(payload["goals"], [g["step"] for g in replay.goals()]):
        assert goal["step"] == step // stride
    html = player_html(payload, start_step=replay.goals()[0]["step"])
    assert f"const START_FRAME = {replay.goals()[0]['step'] // stride}," in html
    assert len(html.encode()) < 4_000_000


def test_a_game_within_the_frame_budget_is_embedded_whole():
    replay = synthetic_replay(5, "rule", "atba", 1, 1, 0, 60.0)  # tick skip 8: 451 steps
    payload = player_payload(replay)
    assert payload["steps"] == replay.steps and payload["stride"] == 1
