"""The replay's event times read the game clock the scoreboard shows (issue 60, item 5): counting down
from the game's length, then "+m:ss OT" in overtime; a replay that does not give its length counts up."""

from __future__ import annotations

from dashboard.replay_view import events_table, game_clock
from dashboard_fixture import synthetic_replay


def test_game_clock_counts_down_then_overtime_up():
    assert game_clock(0.0, 300.0) == "5:00"
    assert game_clock(7.5, 300.0) == "4:52"
    assert game_clock(300.0, 300.0) == "0:00"
    assert game_clock(312.0, 300.0) == "+0:12 OT"
    assert game_clock(75.0, None) == "1:15"  # no length given: time played


def test_events_table_times_are_the_game_clock():
    replay = synthetic_replay(11, "a", "b", 2, 2, 2, 120.0)
    events = events_table(replay)
    dt = replay.seconds_per_step()
    goal = events[events["kind"] == "goal"].iloc[0]
    assert goal["time"] == game_clock(goal["step"] * dt, 120.0)
    assert events.iloc[0]["time"] == "2:00"  # the first kick-off, at the start of a two-minute game
    del replay.meta["game_seconds"]
    assert events_table(replay).iloc[0]["time"] == "0:00"
