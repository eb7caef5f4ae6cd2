"""Fixture leagues for the dashboard tests and benchmark, built directly (no training, no sim).

- `build_fixture_league(root)`: a small league with lineage, statuses, two stages, a finished
  and a running tournament, evaluation games, replay files with synthetic but plausible motion,
  one game whose replay file is missing, two training runs' metrics, and a curriculum ("climb",
  see `add_climb`) whose versions' evaluation games against the baselines have fixed results, and
  three 3v3 matches with fixed results (`add_matches`: an SPRT that accepted H1 and promoted its
  agent, a fixed match, an interrupted SPRT with a half-recorded pair) and their promotions.
- `copy_fixture_league(league, root)`: a copy of a built one (tests/conftest.py builds one per session).
- `build_empty_league(root)`: a freshly initialised league (only the baselines).
- `write_distill_run(home)`: a run that distils a teacher, its metrics as training writes them.
- `build_scaled_league(root, agents=200, games=20000)`: the size the dashboard must stay
  responsive at, written with bulk inserts in one transaction (same rating math as the registry).
"""

from __future__ import annotations

import json
import math
import os
import shutil
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

from arena.replay import EVENT_KINDS, Replay, write_replay
from league import ratings as rating_math
from league.config import RatingsConfig
from league.home import LeagueHome
from league.registry import GameRecord, MatchSettings, MatchStats, Registry, utc_now
from league.sprt import SprtParams, elo_estimate, pair_score, sprt_result
from training.gates import Evidence, GateSpec, check_gate

TICK_SKIP = 8
START = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
KICKOFF_SPOTS = ((-2048.0, -2560.0), (2048.0, -2560.0), (0.0, -4608.0))  # blue; orange mirrored


# --------------------------------------------------------------------------- synthetic replays


def _waypoint_path(rng: np.random.Generator, start: np.ndarray, end: np.ndarray | None, steps: int,
                   dt: float) -> np.ndarray:
    """[steps, 2] ball x, y moving between random waypoints at 800-2400 uu/s, ending at `end`."""
    points, times = [start], [0.0]
    t = 0.0
    total = (steps - 1) * dt
    limit = np.array([3500.0, 4600.0])
    while True:
        hop = rng.uniform(1.0, 2.5)
        if t + hop >= total - (1.5 if end is not None else 0.0):
            break
        t += hop
        heading = rng.uniform(0, 2 * np.pi)
        step = np.array([np.cos(heading), np.sin(heading)]) * rng.uniform(800, 2200) * hop
        points.append(np.clip(points[-1] + step, -limit, limit))
        times.append(t)
    if end is not None:
        points.append(end)
        times.append(total)
    elif times[-1] < total:
        points.append(points[-1])
        times.append(total)
    pts, ts = np.array(points), np.array(times)
    grid = np.arange(steps) * dt
    raw = np.column_stack([np.interp(grid, ts, pts[:, 0]), np.interp(grid, ts, pts[:, 1])])
    # Smooth the corners (a ball curves, it does not turn on the spot) but keep the end point.
    width = max(1, int(0.6 / dt))
    kernel = np.ones(width) / width
    padded = np.pad(raw, ((width, width), (0, 0)), mode="edge")
    smooth = np.column_stack([np.convolve(padded[:, i], kernel, mode="same")[width:-width] for i in range(2)])
    if end is not None:
        blend = np.clip((grid - (total - 1.0)) / 1.0, 0, 1)[:, None]
        smooth = smooth * (1 - blend) + raw * blend
    return smooth


def synthetic_replay(seed: int, blue: str, orange: str, team_size: int, blue_goals: int, orange_goals: int,
                     length_seconds: float, tick_skip: int = TICK_SKIP) -> Replay:
    """A game whose ball and cars move plausibly: kick-offs, a ball travelling between waypoints
    into the scoring side's goal, cars chasing it (boost spent when fast, refilled on pads),
    touches where a car reaches the ball. Goal events add up to the score."""
    rng = np.random.default_rng(seed)
    dt = tick_skip / 120.0
    steps = int(round(length_seconds / dt)) + 1
    n_goals = blue_goals + orange_goals
    scorers = rng.permutation([0] * blue_goals + [1] * orange_goals)
    reset = int(round(3.0 / dt))  # a goal is followed by 3 s before the next kick-off
    min_gap = int(round(6.0 / dt)) + reset
    if n_goals:
        first, last = int(5.0 / dt), steps - int(3.0 / dt) - 1
        need = (n_goals - 1) * min_gap
        if last - first < need:
            raise ValueError(f"{length_seconds} s is too short for {n_goals} goals")
        slack = np.sort(rng.uniform(0, last - first - need, n_goals))
        goal_steps = [int(first + s + i * min_gap) for i, s in enumerate(slack)]
    else:
        goal_steps = []

    ball = np.zeros((steps, 2))
    kickoffs = [0]
    seg_start = 0
    for g, team in zip(goal_steps, scorers):
        end = np.array([rng.uniform(-600, 600), 5300.0 if team == 0 else -5300.0])
        ball[seg_start:g + 1] = _waypoint_path(rng, np.zeros(2), end, g + 1 - seg_start, dt)
        rest = min(g + reset, steps)
        ball[g + 1:rest] = end + [0.0, 200.0 if team == 0 else -200.0] * np.clip(
            (np.arange(g + 1, rest) - g) / 8.0, 0, 1)[:, None]
        seg_start = rest
        if rest < steps:
            kickoffs.append(rest)
    if seg_start < steps:
        ball[seg_start:] = _waypoint_path(rng, np.zeros(2), None, steps - seg_start, dt)
    t = np.arange(steps) * dt
    bounce = np.abs(np.sin(t * rng.uniform(0.4, 0.9) + rng.uniform(0, 3))) ** 3
    since_kickoff = t - np.array(kickoffs)[np.searchsorted(kickoffs, np.arange(steps), side="right") - 1] * dt
    height = 92.75 + bounce * rng.uniform(200, 700) * (0.5 + 0.5 * np.sin(t * 0.13) ** 2) * np.clip(
        since_kickoff - 1.0, 0, 1)  # the ball sits on the floor for a kick-off
    ball_pos = np.column_stack([ball, height])
    ball_vel = np.gradient(ball_pos, dt, axis=0)
    for k in kickoffs:  # the ball is placed, not moved, at a kick-off
        ball_vel[max(k - 1, 0):k + 1] = 0.0
    ball_vel *= np.minimum(1.0, 6000.0 / np.maximum(np.linalg.norm(ball_vel, axis=1), 1e-9))[:, None]
    ball_ang = np.column_stack([ball_vel[:, 1], -ball_vel[:, 0], np.zeros(steps)]) / 92.75

    car_teams = [0] * team_size + [1] * team_size
    n_cars = len(car_teams)
    cars = np.zeros((steps, n_cars, 12))
    boost = np.zeros((steps, n_cars))
    starts = set(kickoffs)
    pads = np.array([(-3072, -4096), (3072, -4096), (-3584, 0), (3584, 0), (-3072, 4096), (3072, 4096)], float)
    for c, team in enumerate(car_teams):
        sign = -1.0 if team == 0 else 1.0
        slot = c % team_size
        lag = int(round(rng.uniform(0.25, 1.2) / dt))
        lagged = np.vstack([np.repeat(ball[:1], lag, axis=0), ball[:-lag or None]])[:steps]
        phase = rng.uniform(0, 2 * np.pi)
        offset = np.column_stack([np.sin(t * 0.7 + phase) * rng.uniform(150, 500),
                                  sign * (150 + slot * 900 + np.abs(np.cos(t * 0.5 + phase)) * 400)])
        target = lagged + offset
        target[:, 0] = np.clip(target[:, 0], -3950, 3950)
        target[:, 1] = np.clip(target[:, 1], -4950, 4950)
        # Chase the target at no more than a car's top speed; kick-offs put the car on its spot.
        spot = np.array(KICKOFF_SPOTS[slot]) * (1.0 if team == 0 else -1.0)  # orange: mirrored
        top = 2300.0 * dt * rng.uniform(0.8, 1.0)
        pos = np.empty((steps, 2))
        for s in range(steps):
            if s in starts:
                pos[s] = spot
                continue
            gap = target[s] - pos[s - 1]
            dist_to = math.hypot(gap[0], gap[1])
            pos[s] = pos[s - 1] + (gap * min(1.0, top / dist_to) if dist_to > 0 else 0.0)
        near = np.hypot(*(pos - ball).T) < 400
        z = 17.0 + np.where(near, np.maximum(ball_pos[:, 2] - 150, 0) * 0.8, 0.0)
        xyz = np.column_stack([pos, z])
        vel = np.diff(xyz, axis=0, prepend=xyz[:1]) / dt
        for k in kickoffs:
            vel[k] = 0.0
        speed = np.hypot(vel[:, 0], vel[:, 1])
        yaw = np.unwrap(np.arctan2(vel[:, 1], vel[:, 0]))
        yaw = np.where(speed > 50, yaw, np.nan)
        yaw = _fill_nan(yaw, np.pi / 2 if team == 0 else -np.pi / 2)  # facing the other goal at kick-off
        yaw = (yaw + np.pi) % (2 * np.pi) - np.pi
        cars[:, c, 0:3] = xyz
        cars[:, c, 4] = yaw
        cars[:, c, 6:9] = vel
        cars[:, c, 11] = np.gradient(np.unwrap(yaw), dt)
        level, on_pad = 33.0, np.min(np.hypot(*(pos[:, None, :] - pads[None]).transpose(2, 0, 1)), axis=1) < 200
        for s in range(steps):
            if s in starts:
                level = 33.0
            if speed[s] > 1500:
                level -= 33.3 * dt
            if on_pad[s]:
                level = 100.0
            level = min(max(level, 0.0), 100.0)
            boost[s, c] = level
    cars[:, :, 11] = np.clip(cars[:, :, 11], -5.5, 5.5)
    on_ground = cars[:, :, 2] < 40
    demolished = np.zeros((steps, n_cars), bool)

    events, event_team = [], []
    for k in kickoffs:
        events.append((k, EVENT_KINDS["kickoff"], -1))
        event_team.append(-1)
    dist = np.linalg.norm(cars[:, :, 0:3] - ball_pos[:, None, :], axis=2)
    last_touch = np.full(n_cars, -10 ** 6)
    for s, c in zip(*np.nonzero(dist < 260)):
        if s - last_touch[c] > int(0.5 / dt):
            events.append((int(s), EVENT_KINDS["touch"], int(c)))
            event_team.append(car_teams[c])
        last_touch[c] = s
    for g, team in zip(goal_steps, scorers):
        mates = [c for c in range(n_cars) if car_teams[c] == team]
        window = slice(max(0, g - int(1.5 / dt)), g + 1)
        scorer = mates[int(np.argmin(dist[window][:, mates].min(axis=0)))]
        touch_step = max(0, g - int(1.0 / dt))
        events.append((touch_step, EVENT_KINDS["touch"], scorer))
        event_team.append(team)
        events.append((g, EVENT_KINDS["goal"], scorer))
        event_team.append(int(team))
    order = np.argsort([e[0] for e in events], kind="stable")
    events_arr = np.array([events[i] for i in order], np.int32).reshape(-1, 3)
    team_arr = np.array([event_team[i] for i in order], np.int8)
    meta = {"blue": blue, "orange": orange, "team_size": team_size, "car_teams": car_teams, "seed": seed,
            "score": [blue_goals, orange_goals], "length_seconds": length_seconds, "tick_skip": tick_skip,
            "game_seconds": length_seconds, "overtime": False}
    return Replay(meta=meta, ball=np.column_stack([ball_pos, ball_vel, ball_ang]).astype(np.float32),
                  cars=cars.astype(np.float32), boost=boost.astype(np.float32), on_ground=on_ground,
                  demolished=demolished, events=events_arr, event_team=team_arr)


def _fill_nan(values: np.ndarray, first: float) -> np.ndarray:
    """Carry the last defined value forward (a car standing still keeps its heading)."""
    out = values.copy()
    if np.isnan(out[0]):
        out[0] = first
    idx = np.where(~np.isnan(out), np.arange(len(out)), 0)
    np.maximum.accumulate(idx, out=idx)
    return out[idx]


# --------------------------------------------------------------------------- results


def play_result(rng: np.random.Generator, strength_a: float, strength_b: float) -> tuple[int, int]:
    """Goals for each side, Poisson with rates tilted towards the stronger side."""
    edge = strength_a - strength_b
    return int(rng.poisson(1.3 * math.exp(0.45 * edge))), int(rng.poisson(1.3 * math.exp(-0.45 * edge)))


def _spread_times(db, start: datetime, step: timedelta) -> None:
    """Give games (and their rating rows) distinct times `step` apart, as a real league has."""
    conn = db.conn
    rows = conn.execute("SELECT id FROM games ORDER BY id").fetchall()
    stamps = [((start + step * i).isoformat(timespec="milliseconds"), gid) for i, (gid,) in enumerate(rows)]
    conn.executemany("UPDATE games SET played = ? WHERE id = ?", stamps)
    agents = conn.execute("SELECT id FROM agents ORDER BY id").fetchall()
    conn.executemany("UPDATE agents SET created = ? WHERE id = ?",
                     [((start - timedelta(days=2) + timedelta(hours=4) * i).isoformat(timespec="milliseconds"), aid)
                      for i, (aid,) in enumerate(agents)])
    conn.execute("""UPDATE tournaments SET created = (SELECT MIN(played) FROM games g
                                                      WHERE g.tournament_id = tournaments.id)""")
    conn.execute("""UPDATE tournaments SET finished = (SELECT MAX(played) FROM games g
                                                       WHERE g.tournament_id = tournaments.id)
                    WHERE finished IS NOT NULL""")
    conn.execute("UPDATE rating_history SET played = (SELECT played FROM games g WHERE g.id = rating_history.game_id)")
    conn.execute("""UPDATE ratings SET last_played = (SELECT MAX(played) FROM rating_history h
                    WHERE h.agent_id = ratings.agent_id AND h.team_size = ratings.team_size)""")


# --------------------------------------------------------------------------- the small league


@dataclass
class FixtureLeague:
    home: LeagueHome
    agents: list[str]
    finished_tournament: int
    running_tournament: int
    replay_game: int  # a game with a replay file
    missing_replay_game: int  # a game whose replay file is recorded but absent
    no_replay_game: int  # an evaluation game that recorded no replay
    runs: list[str] = field(default_factory=list)
    curriculum: str = ""  # the curriculum with fixed results (add_climb)
    matches: dict[str, int] = field(default_factory=dict)  # "sprt", "fixed", "interrupted" -> match id (add_matches)


STRENGTH = {"random": -1.5, "rule": 0.0, "ppo-1v1-v1": 0.3, "ppo-1v1-v2": 0.8, "ppo-1v1-v3": 1.2,
            "ppo-1v1-v4": 1.8, "lstm-1v1-v1": 1.0, "ppo-2v2-v1": 0.9, "ppo-2v2-v2": 1.6, "ppo-3v3-v1": 1.2,
            "ppo-3v3-v2": 1.5}


def build_fixture_league(root: Path, seed: int = 7) -> FixtureLeague:
    rng = np.random.default_rng(seed)
    home = LeagueHome(Path(root))
    home.create_dirs()
    reg = Registry.create(home.db_path)
    try:
        reg.agent_store.add("ppo-1v1-v1", "mlp", 1, steps_trained=1_000_000, checkpoint_path="checkpoints/ppo-1v1-v1",
                      notes="first snapshot")
        reg.agent_store.add("ppo-1v1-v2", "mlp", 1, parent="ppo-1v1-v1", steps_trained=2_000_000)
        reg.agent_store.add("ppo-1v1-v3", "mlp", 1, parent="ppo-1v1-v2", steps_trained=3_000_000)
        reg.agent_store.add("ppo-1v1-v4", "mlp", 1, parent="ppo-1v1-v3", steps_trained=4_000_000)
        reg.agent_store.add("lstm-1v1-v1", "lstm", 1, parent="ppo-1v1-v2", steps_trained=2_500_000)
        reg.agent_store.add("ppo-2v2-v1", "mlp", 2, parent="ppo-1v1-v4", steps_trained=5_000_000)
        reg.agent_store.add("ppo-2v2-v2", "mlp", 2, parent="ppo-2v2-v1", steps_trained=6_000_000)

        def record(blue, orange, team_size, origin, tid=None, index=None, replay=True, write=True):
            bg, og = play_result(rng, STRENGTH[blue], STRENGTH[orange])
            bg, og = min(bg, 3), min(og, 3)
            length = 30.0 + 10.0 * (bg + og)
            game_seed = int(rng.integers(1 << 30))
            rel = f"replays/{'t' + str(tid) if tid else origin}/{game_seed}.replay" if replay else None
            if rel and write:
                write_replay(home.root / rel, synthetic_replay(game_seed, blue, orange, team_size, bg, og, length))
            return reg.game_store.record(GameRecord(blue=blue, orange=orange, team_size=team_size, seed=game_seed,
                                              blue_goals=bg, orange_goals=og, length_seconds=length, origin=origin,
                                              tournament_id=tid, schedule_index=index, replay_path=rel))

        # evaluation games during training (no replays), before the first version is retired
        no_replay = 0
        for a, b in [("ppo-1v1-v1", "rule"), ("ppo-1v1-v1", "random"), ("ppo-1v1-v2", "ppo-1v1-v1"),
                     ("rule", "ppo-1v1-v1"), ("ppo-1v1-v3", "ppo-1v1-v1"), ("ppo-1v1-v1", "rule")]:
            no_replay = record(a, b, 1, "evaluation", replay=False)
        reg.agent_store.set_status("ppo-1v1-v1", "retired")

        entrants = ["random", "rule", "ppo-1v1-v2", "ppo-1v1-v3", "ppo-1v1-v4", "lstm-1v1-v1"]
        pairs = [(a, b) for i, a in enumerate(entrants) for b in entrants[i + 1:]]
        finished = reg.tournament_store.create("round-robin-1v1", 1, seed, 2, 2 * len(pairs), entrants, {"games": 2})
        index = 0
        replay_game = 0
        for a, b in pairs:
            for blue, orange in ((a, b), (b, a)):
                gid = record(blue, orange, 1, "tournament", finished, index)
                if blue == "ppo-1v1-v4" and not replay_game:
                    replay_game = gid
                index += 1
        reg.tournament_store.set_status(finished, "finished")
        reg.agent_store.set_status("ppo-1v1-v4", "champion")

        entrants2 = ["random", "rule", "ppo-2v2-v1", "ppo-2v2-v2"]
        running = reg.tournament_store.create("round-robin-2v2", 2, seed + 1, 2, 12, entrants2, {"games": 2})
        schedule = [("ppo-2v2-v2", "rule"), ("ppo-2v2-v1", "random"), ("rule", "ppo-2v2-v1"),
                    ("random", "ppo-2v2-v2"), ("ppo-2v2-v2", "ppo-2v2-v1")]
        missing = 0
        for index, (blue, orange) in enumerate(schedule):
            gid = record(blue, orange, 2, "tournament", running, index, write=index != 2)
            if index == 2:
                missing = gid
        reg.agent_store.set_status("ppo-2v2-v2", "champion")
        add_climb(reg)
        matches = add_matches(reg, home)
        _spread_times(reg.db, START, timedelta(minutes=7))
        _climb_times(reg.db)
        _match_times(reg.db)
        reg.db.conn.commit()
    finally:
        reg.close()

    write_climb_runs(home)
    runs = write_training_runs(home)
    return FixtureLeague(home=home, agents=list(STRENGTH), finished_tournament=finished, running_tournament=running,
                         replay_game=replay_game, missing_replay_game=missing, no_replay_game=no_replay, runs=runs,
                         curriculum=CLIMB, matches=matches)


# --------------------------------------------------------------------------- the curriculum (fixed results)

CLIMB = "climb"
# Stage 1 (1v1, run climb-1v1): three versions, each checked against the gate after its evaluation
# games; v3 passes. Stage 2 (2v2, run climb-2v2) starts from climb-1v1-v3 and is still training
# (the curriculum was interrupted) after one failed check. Results per version and baseline, as
# (version's goals, opponent's goals), the version playing blue in the even games, orange in the odd:
CLIMB_GAMES = {
    ("climb-1v1-v1", "rule"): [(0, 1), (1, 1), (0, 2), (0, 1)],  # W0 D1 L3
    ("climb-1v1-v1", "random"): [(2, 0), (0, 1)],  # W1 L1
    ("climb-1v1-v2", "rule"): [(1, 0), (1, 2), (0, 0), (2, 0)],  # W2 D1 L1
    ("climb-1v1-v2", "random"): [(3, 0), (1, 0)],  # W2
    ("climb-1v1-v3", "rule"): [(2, 0), (1, 0), (3, 1), (1, 1)],  # W3 D1
    ("climb-1v1-v3", "random"): [(2, 1), (4, 0)],  # W2
    ("climb-1v1-v3", "atba"): [(1, 0), (0, 2)],  # W1 L1
    ("climb-2v2-v1", "rule"): [(0, 1), (2, 2)],  # L1 D1
}
# Games that are not the climb: against an agent that is no baseline, and a manual game.
CLIMB_OTHER_GAMES = [("climb-1v1-v3", "ppo-1v1-v4", 1, 1, "evaluation"), ("climb-1v1-v3", "rule", 2, 0, "manual")]
CLIMB_GATES = [GateSpec(min_games=4, win_rate_vs_rule=0.7, confidence=0.0),
               GateSpec(min_games=2, win_rate_vs_rule=0.5, confidence=0.0, min_elo=1450.0)]


def copy_fixture_league(league: FixtureLeague, root: Path) -> FixtureLeague:
    """A copy of a built fixture league at `root` (building one takes seconds; copying it, milliseconds)."""
    shutil.copytree(league.home.root, root, symlinks=True)
    return replace(league, home=LeagueHome(Path(root)))


def add_climb(reg: Registry) -> None:
    """The curriculum "climb" written through the registry as training.curriculum writes it: the
    stages, the versions (RUN-vN, parent chain through both stages), their evaluation games with
    CLIMB_GAMES' results, a gate check after each version's games and the stages' outcomes."""
    spec = {"name": CLIMB, "config": {}, "stages": [
        {"name": "1v1", "stage": "1v1", "min_steps": 500_000, "max_steps": 2_000_000, "eval_every_steps": 250_000,
         "on_gate_fail": "stop", "gate": vars(CLIMB_GATES[0]), "config": {}},
        {"name": "2v2", "stage": "2v2", "min_steps": 500_000, "max_steps": 2_000_000, "eval_every_steps": 250_000,
         "on_gate_fail": "stop", "gate": vars(CLIMB_GATES[1]), "config": {}}]}
    reg.curriculum_store.start(CLIMB, spec, "climb.yaml", [("1v1", 1, "climb-1v1"), ("2v2", 2, "climb-2v2")])
    seed = iter(range(900_000, 901_000))

    def play(version: str, opponent: str, team_size: int, results: list[tuple[int, int]], origin: str) -> float:
        """Record the games; the version's score (wins + draws / 2)."""
        score = 0.0
        for i, (mine, theirs) in enumerate(results):
            blue, orange, bg, og = (version, opponent, mine, theirs) if i % 2 == 0 else (opponent, version, theirs, mine)
            reg.game_store.record(GameRecord(blue=blue, orange=orange, team_size=team_size, seed=next(seed), blue_goals=bg,
                                       orange_goals=og, length_seconds=60.0, origin=origin))
            score += 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0
        return score

    def check(index: int, version: str, steps: int) -> bool:
        team_size = index + 1
        ev = {}
        for opponent in ("rule", "random", "atba"):
            results = CLIMB_GAMES.get((version, opponent))
            if results:
                score = play(version, opponent, team_size, results, "evaluation")
                if opponent in ("rule", "random"):
                    ev.update({f"{opponent}_score": score, f"{opponent}_games": len(results)})
        rating = reg.game_store.rating(version, team_size)
        result = check_gate(CLIMB_GATES[index], Evidence(**ev, elo=rating.elo if rating.games else None,
                                                         has_previous=index > 0))
        reg.curriculum_store.record_gate_check(CLIMB, index, version, steps, result.passed, result.to_json())
        return result.passed

    reg.curriculum_store.update_stage(CLIMB, 0, status="training", started=utc_now(), start_steps=0)
    parent = None
    for k in (1, 2, 3):
        version = f"climb-1v1-v{k}"
        reg.agent_store.add(version, "mlp", 1, parent=parent, steps_trained=250_000 * k,
                      checkpoint_path=f"checkpoints/{version}.safetensors")
        reg.curriculum_store.update_stage(CLIMB, 0, steps=250_000 * k)
        passed = check(0, version, 250_000 * k)
        parent = version
    assert passed
    for version, opponent, mine, theirs, origin in CLIMB_OTHER_GAMES:
        play(version, opponent, 1, [(mine, theirs)], origin)
    reg.curriculum_store.update_stage(CLIMB, 0, status="passed", final_agent="climb-1v1-v3", finished=utc_now())
    reg.curriculum_store.update(CLIMB, stage_index=1)
    reg.curriculum_store.update_stage(CLIMB, 1, status="training", started=utc_now(), start_agent="climb-1v1-v3",
                                start_steps=750_000)
    reg.agent_store.add("climb-2v2-v1", "mlp", 2, parent="climb-1v1-v3", steps_trained=1_000_000,
                  checkpoint_path="checkpoints/climb-2v2-v1.safetensors")
    reg.curriculum_store.update_stage(CLIMB, 1, steps=250_000)
    assert not check(1, "climb-2v2-v1", 250_000)
    reg.curriculum_store.update(CLIMB, status="interrupted", message="its time budget is spent; run the same command "
                                                               "again to continue")


def _climb_times(db) -> None:
    """Times that follow the games (after _spread_times): a check when its agent's last game ended,
    a stage started at its first check's first game and finished at its last passed check."""
    conn = db.conn
    conn.execute("""UPDATE gate_checks SET checked = (
                        SELECT MAX(played) FROM games g WHERE g.origin = 'evaluation'
                        AND gate_checks.agent_id IN (g.blue_agent_id, g.orange_agent_id))""")
    conn.execute("""UPDATE curriculum_stages SET started = (
                        SELECT MIN(g.played) FROM games g JOIN gate_checks c
                        ON c.agent_id IN (g.blue_agent_id, g.orange_agent_id)
                        WHERE c.curriculum = curriculum_stages.curriculum
                        AND c.stage_index = curriculum_stages.stage_index)""")
    conn.execute("""UPDATE curriculum_stages SET finished = (
                        SELECT MAX(checked) FROM gate_checks c WHERE c.curriculum = curriculum_stages.curriculum
                        AND c.stage_index = curriculum_stages.stage_index AND c.passed)
                    WHERE finished IS NOT NULL""")
    conn.execute("""UPDATE curricula SET started = (SELECT MIN(started) FROM curriculum_stages s
                                                    WHERE s.curriculum = curricula.name),
                                         updated = (SELECT MAX(checked) FROM gate_checks c
                                                    WHERE c.curriculum = curricula.name)""")


# --------------------------------------------------------------------------- matches (fixed results)

# Each pair: A's game on blue, then B's (the mirror), as (A's goals, B's goals). The SPRT match
# (elo0=0, elo1=100 normalized, 4 pairs a batch) crosses the upper bound at its 15th pair and is
# decided at the end of that batch, after 16 pairs (32 games): H1, and its A is promoted champion
# of 3v3 on it.
WW, WD, WL, DD, LD, LL = ((2, 0), (1, 0)), ((1, 0), (1, 1)), ((2, 1), (0, 1)), ((0, 0), (1, 1)), ((0, 1), (0, 0)), \
    ((0, 2), (1, 2))
SPRT_PAIRS = [WW, WL, WD, WW, LD, WW, LL, WW, WW, DD, WW, WW, WW, WW, WW, WD]
SPRT_PARAMS = SprtParams(elo0=0, elo1=100)
FIXED_PAIRS = [WW, WD, WL, WW]
INTERRUPTED_PAIRS = [WD, LL, WW]  # the third pair's mirror game was never played
INTERRUPTED_PARAMS = SprtParams(elo0=0, elo1=200, model="logistic")
MATCH_GAME_SECONDS = 40.0


def _match_stats(counts: list[int], params: SprtParams | None) -> MatchStats:
    """What arena.match.match_stats saves for these pentanomial counts (league.sprt's arithmetic)."""
    if params is not None:
        r = sprt_result(counts, params)
        return MatchStats(tuple(counts), r.games, r.llr, r.elo, *r.elo_95, r.nelo, *r.nelo_95, r.los)
    e = elo_estimate(counts)
    return MatchStats(tuple(counts), 2 * sum(counts), None, e.elo, *e.elo_95, e.nelo, *e.nelo_95, e.los)


def play_fixture_match(reg: Registry, home: LeagueHome, a: str, b: str, team_size: int, pairs: list,
                       params: SprtParams | None, max_games: int, batch_pairs: int, seed: int,
                       games: int | None = None) -> int:
    """A match written through the registry as arena.match writes it: the match and its tournament
    (MatchStore.open), each pair's two games with the same seed (A on blue, then B) and their
    replays, the statistics saved after each batch, and the match finished at a decision or the cap,
    or left interrupted after `games` games (recorded in schedule order)."""
    store = reg.match_store
    settings = MatchSettings(a, b, team_size, "sprt" if params else "fixed",
                             json.dumps(vars(params), sort_keys=True) if params else None, max_games,
                             MATCH_GAME_SECONDS, seed)
    m, _ = store.open(settings, batch_pairs, {"game": {"tick_skip": TICK_SKIP}})
    tid = m.tournament_id
    store.set_status(m.id, "running")
    schedule = [(2 * p + side, pair[side]) for p, pair in enumerate(pairs) for side in (0, 1)]
    if games is not None:
        schedule = schedule[:games]
    scores: dict[int, float] = {}
    counts = [0] * 5
    for index, (mine, theirs) in schedule:
        p = index // 2
        blue, orange, bg, og = (a, b, mine, theirs) if index % 2 == 0 else (b, a, theirs, mine)
        game_seed = seed * 1000 + p  # a pair's two games share their seed
        rel = f"replays/tournament-{tid}/{index:05d}-{game_seed}.replay"
        write_replay(home.root / rel, synthetic_replay(game_seed + index, blue, orange, team_size, bg, og,
                                                       MATCH_GAME_SECONDS))
        reg.game_store.record(GameRecord(blue=blue, orange=orange, team_size=team_size, seed=game_seed, blue_goals=bg,
                                   orange_goals=og, length_seconds=MATCH_GAME_SECONDS, origin="tournament",
                                   tournament_id=tid, schedule_index=index, replay_path=rel))
        scores[index] = 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0
        if index % 2 == 1:
            counts[pair_score(scores[index - 1], scores[index])] += 1
            if (p + 1) % batch_pairs == 0 or p + 1 == max_games // 2:  # the end of a batch: the runner checks
                stats = _match_stats(counts, params)
                store.save_stats(m.id, stats)
                decision = None if params is None else "H1" if stats.llr >= params.bounds[1] else \
                    "H0" if stats.llr <= params.bounds[0] else None
                if decision:
                    store.finish(m.id, decision, stats, f"SPRT accepted {decision} after {stats.games} games "
                                                           f"(LLR {stats.llr:.2f}).")
                    return m.id
    if games is not None:
        store.set_status(m.id, "interrupted")
        return m.id
    stats = _match_stats(counts, params)
    message = (f"SPRT inconclusive at the cap of {max_games} games (LLR {stats.llr:.2f})." if params
               else f"Fixed match of {max_games} games.")
    store.finish(m.id, "inconclusive" if params else None, stats, message)
    return m.id


def add_promotion(reg: Registry, agent: str, team_size: int, method: str, promoted: bool,
                  previous: str | None = None, match_id: int | None = None) -> None:
    """A row of `promotions` (migration 0008), as `league promote` records it; the table is created
    here when the schema does not have it yet (the dashboard reads it where it exists)."""
    db = reg.db
    if "promotions" not in db.table_names():
        db.execute("""CREATE TABLE promotions (
                          id INTEGER PRIMARY KEY, agent_id INTEGER NOT NULL REFERENCES agents(id),
                          team_size INTEGER NOT NULL, previous_champion_id INTEGER REFERENCES agents(id),
                          method TEXT NOT NULL, promoted INTEGER NOT NULL, match_id INTEGER REFERENCES matches(id),
                          decision TEXT, llr REAL, elo REAL, elo_lo REAL, elo_hi REAL, los REAL, games INTEGER,
                          created TEXT NOT NULL)""")
    m = reg.match_store.get(match_id) if match_id is not None else None
    results = [getattr(m, k) if m else None for k in ("decision", "llr", "elo", "elo_lo", "elo_hi", "los", "games")]
    db.execute("""INSERT INTO promotions (agent_id, team_size, previous_champion_id, method, promoted, match_id,
                      decision, llr, elo, elo_lo, elo_hi, los, games, created)
                  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
               [reg.agent_store.get(agent).id, team_size, reg.agent_store.get(previous).id if previous else None, method, int(promoted),
                match_id, *results, utc_now()])
    if promoted:
        if previous:
            reg.agent_store.set_status(previous, "active")
        reg.agent_store.set_status(agent, "champion")


def add_matches(reg: Registry, home: LeagueHome) -> dict[str, int]:
    """3v3: ppo-3v3-v1 promoted by hand, then ppo-3v3-v2 promoted on an SPRT match against it;
    a fixed match of ppo-3v3-v2 against rule; an interrupted SPRT of ppo-3v3-v1 against rule."""
    reg.agent_store.add("ppo-3v3-v1", "mlp", 3, parent="ppo-2v2-v2", steps_trained=7_000_000)
    reg.agent_store.add("ppo-3v3-v2", "mlp", 3, parent="ppo-3v3-v1", steps_trained=8_000_000)
    add_promotion(reg, "ppo-3v3-v1", 3, "manual", True)
    sprt = play_fixture_match(reg, home, "ppo-3v3-v2", "ppo-3v3-v1", 3, SPRT_PAIRS, SPRT_PARAMS, 40, 4, 31)
    add_promotion(reg, "ppo-3v3-v2", 3, "sprt", True, previous="ppo-3v3-v1", match_id=sprt)
    fixed = play_fixture_match(reg, home, "ppo-3v3-v2", "rule", 3, FIXED_PAIRS, None, 8, 4, 32)
    interrupted = play_fixture_match(reg, home, "ppo-3v3-v1", "rule", 3, INTERRUPTED_PAIRS, INTERRUPTED_PARAMS, 20,
                                     2, 33, games=5)
    return {"sprt": sprt, "fixed": fixed, "interrupted": interrupted}


def _match_times(db) -> None:
    """Times that follow the games (after _spread_times): a match created at its first game and
    finished at its last; an SPRT promotion when its match finished, a manual one before the stage's
    first game."""
    conn = db.conn
    conn.execute("""UPDATE matches SET created = (SELECT MIN(played) FROM games g
                                                  WHERE g.tournament_id = matches.tournament_id)""")
    conn.execute("""UPDATE matches SET finished = (SELECT MAX(played) FROM games g
                                                   WHERE g.tournament_id = matches.tournament_id)
                    WHERE finished IS NOT NULL""")
    conn.execute("""UPDATE promotions SET created = COALESCE(
                        (SELECT finished FROM matches m WHERE m.id = promotions.match_id),
                        (SELECT MIN(played) FROM games g WHERE g.team_size = promotions.team_size))""")


def write_climb_runs(home: LeagueHome) -> None:
    """The climb's runs' metrics (a few records each), written as older than the other runs."""
    for name, records in (("climb-1v1", 15), ("climb-2v2", 5)):
        run_dir = home.runs / name
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "run.json").write_text(json.dumps({"agent_prefix": name, "curriculum": CLIMB}))
        lines = [json.dumps({"step": (i + 1) * 50_000, "time": START.timestamp() - 86400 + i * 30.0,
                             "charts/episode_reward": round(0.1 * i, 3)}) for i in range(records)]
        (run_dir / "metrics.jsonl").write_text("\n".join(lines) + "\n")
        old = START.timestamp() - 86400
        os.utime(run_dir / "metrics.jsonl", (old, old))


def write_training_runs(home: LeagueHome, records: int = 60) -> list[str]:
    """Two runs' metrics.jsonl in the documented format (the second one mid-write: a partial line)."""
    names = []
    for r, (name, stage) in enumerate((("ppo-1v1", "1v1"), ("ppo-2v2", "2v2"))):
        run_dir = home.runs / name
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "run.json").write_text(json.dumps({"agent_prefix": name, "stage": stage, "seed": r}))
        t0 = START.timestamp() + r * 86400
        lines = []
        for i in range(records):
            step = (i + 1) * 50_000
            lines.append(json.dumps({
                "step": step, "time": t0 + i * 30.0,
                "charts/episode_reward": round(-1.0 + 2.5 * (1 - math.exp(-i / 20)) + 0.1 * math.sin(i), 4),
                "charts/steps_per_second": 1650.0 + 40 * math.sin(i / 3),
                "losses/policy_loss": round(0.05 * math.exp(-i / 30), 5),
                "losses/value_loss": round(0.8 * math.exp(-i / 25) + 0.05, 5),
                "losses/entropy": round(2.0 - i / records, 4),
                "eval/win_rate/rule": round(min(1.0, 0.2 + i / records), 3),
            }))
        text = "\n".join(lines) + "\n"
        if r == 1:
            text += '{"step": 3050000, "time": '  # a line being written right now
        (run_dir / "metrics.jsonl").write_text(text)
        names.append(name)
    return names


def write_distill_run(home: LeagueHome, name: str = "student-1v1", teacher: str = "necto", updates: int = 40,
                      distilling: int = 24, eval_every: int = 4, steps_per_update: int = 4096) -> list[dict]:
    """A run that distils `teacher` (league train --distill), its metrics.jsonl rows as training.selfplay writes
    them: `distilling` update rows with distill/phase 1 and the held-out figures, then PPO rows with phase 0 and
    the guide weight; every `eval_every` updates an evaluation row against the ladder and the teacher. Its run.json
    holds the config's training.distill section. The rows, as written."""
    run_dir = home.runs / name
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "run.json").write_text(json.dumps({
        "run": name, "stage": "1v1", "seed": 0,
        "config": {"training": {"distill": {"teacher": teacher, "guide_weight": 0.05, "weight": 1.0}}}}))
    t0, rows = START.timestamp() - 2 * 86400, []
    for i in range(updates):
        step, phase = (i + 1) * steps_per_update, float(i < distilling)
        row = {"step": step, "time": t0 + i * 10.0, "charts/episode_reward": round(0.02 * i, 4),
               "losses/value_loss": round(0.5 * math.exp(-i / 15), 5),
               "losses/kickstart": round(2.5 * math.exp(-i / 10), 4),
               "losses/teacher_agreement": round(min(0.95, 0.3 + 0.03 * i), 4),
               "distill/phase": phase, "charts/guide_weight": 1.0 if phase else 0.05}
        if phase:
            row |= {"distill/held_out_agreement": round(min(0.9, 0.2 + 0.03 * i), 4),
                    "distill/held_out_cross_entropy": round(2.0 * math.exp(-i / 12) + 0.4, 4)}
        rows.append(row)
        if (i + 1) % eval_every == 0:
            rows.append({"step": step, "time": t0 + i * 10.0 + 5.0,
                         "eval/win_rate/rule": round(min(1.0, 0.4 + i / 50), 3),
                         f"eval/win_rate/{teacher}": round(min(0.6, 0.01 * i), 3), "eval/elo": 1500.0 + 10 * i})
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    os.utime(run_dir / "metrics.jsonl", (t0, t0))  # older than the other runs: never the page's default
    return rows


def build_empty_league(root: Path) -> LeagueHome:
    home = LeagueHome(Path(root))
    home.create_dirs()
    Registry.create(home.db_path).close()
    return home


# --------------------------------------------------------------------------- the league at scale


@dataclass
class ScaledLeague:
    home: LeagueHome
    agents: int
    games: int
    replay_games: list[int]


def build_scaled_league(root: Path, n_agents: int = 200, n_games: int = 20_000, replay_files: int = 3,
                        replay_seconds: float = 300.0, seed: int = 1) -> ScaledLeague:
    """A big league written with bulk inserts (one transaction), rated with the registry's math.

    Stages get 65% / 20% / 15% of the agents (lines of versions with parents, early versions
    retired, one champion per stage) and of the games; 60% of the games belong to tournaments
    (with replay paths; `replay_files` of them get real five-minute replays), the rest are
    evaluation games.
    """
    rng = np.random.default_rng(seed)
    cfg = RatingsConfig()
    env = rating_math.trueskill_env(cfg.trueskill)
    home = LeagueHome(Path(root))
    home.create_dirs()
    reg = Registry.create(home.db_path)
    conn = reg.db.conn
    stamp = START.isoformat(timespec="milliseconds")
    trained = n_agents - 2
    shares = {1: 0.65, 2: 0.20, 3: 0.15}
    per_stage = {1: int(trained * shares[1]), 2: int(trained * shares[2])}
    per_stage[3] = trained - per_stage[1] - per_stage[2]

    conn.execute("BEGIN IMMEDIATE")
    ids: dict[str, int] = {r[1]: r[0] for r in conn.execute("SELECT id, name FROM agents")}
    strength = {"random": -1.5, "rule": 0.0}
    stage_agents: dict[int, list[str]] = {s: ["random", "rule"] for s in (1, 2, 3)}
    next_id = max(ids.values()) + 1
    rows = []
    for size, count in per_stage.items():
        lines = max(1, count // 13)
        for i in range(count):
            line, version = i % lines, i // lines + 1
            name = f"ppo-{size}v{size}-l{line}-v{version}"
            parent = f"ppo-{size}v{size}-l{line}-v{version - 1}" if version > 1 else None
            status = "retired" if version <= 3 and count > 20 else "active"
            rows.append((next_id, name, "mlp" if line % 3 else "lstm", size, status,
                         ids[parent] if parent else None, stamp, version * 250_000))
            ids[name] = next_id
            next_id += 1
            strength[name] = 0.1 * version + rng.normal(0, 0.3)
            stage_agents[size].append(name)
    conn.executemany("""INSERT INTO agents (id, name, kind, team_size, status, parent_id, created, steps_trained)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?)""", rows)
    for size in (1, 2, 3):
        best = max(stage_agents[size][2:], key=strength.get)
        conn.execute("UPDATE agents SET status = 'champion' WHERE id = ?", [ids[best]])

    ratings: dict[tuple[int, int], dict] = {}
    games, history = [], []
    tournaments = []
    tid = 0
    game_id = 0
    for size in (1, 2, 3):
        stage_games = int(n_games * shares[size]) if size < 3 else n_games - game_id
        in_tournaments = int(stage_games * 0.6)
        n_tournaments = 6 if size == 1 else 2
        per_t = in_tournaments // n_tournaments
        names = stage_agents[size]
        for k in range(stage_games):
            t_index = k // per_t if k < per_t * n_tournaments else None
            if t_index is not None and k % per_t == 0:
                tid += 1
                running = (size, t_index) == (1, n_tournaments - 1)  # the newest 1v1 one is still going
                tournaments.append((tid, f"round-robin-{size}v{size}-{t_index + 1}", size,
                                    "running" if running else "finished", int(seed + tid), 2,
                                    per_t + (40 if running else 0), per_t, json.dumps(names), "{}", stamp, None))
            a, b = rng.choice(len(names), 2, replace=False)
            blue, orange = names[a], names[b]
            bg, og = play_result(rng, strength[blue], strength[orange])
            game_id += 1
            played = (START + timedelta(seconds=45 * game_id)).isoformat(timespec="milliseconds")
            origin = "tournament" if t_index is not None else "evaluation"
            replay = f"replays/t{tid}/{game_id}.replay" if t_index is not None else None
            result = "blue" if bg > og else "orange" if og > bg else "draw"
            games.append((game_id, origin, tid if t_index is not None else None,
                          (k % per_t) if t_index is not None else None, size, ids[blue], ids[orange],
                          int(rng.integers(1 << 30)), bg, og, result, 300.0, replay, played))
            score = rating_math.score_from_goals(bg, og)
            before = [ratings.setdefault((ids[n], size), {"elo": cfg.elo.initial, "mu": cfg.trueskill.mu,
                                                        "sigma": cfg.trueskill.sigma, "games": 0, "wins": 0,
                                                        "draws": 0, "losses": 0, "gf": 0, "ga": 0})
                      for n in (blue, orange)]
            expected = rating_math.elo_expected(before[0]["elo"], before[1]["elo"], cfg.elo.scale)
            delta = cfg.elo.k_factor * (score - expected)
            (tb,), (to,) = rating_math.trueskill_update(env, [(before[0]["mu"], before[0]["sigma"])],
                                                        [(before[1]["mu"], before[1]["sigma"])], score)
            for name, r, elo, (mu, sigma), s, gf, ga in ((blue, before[0], before[0]["elo"] + delta, tb, score, bg, og),
                                                         (orange, before[1], before[1]["elo"] - delta, to, 1 - score,
                                                          og, bg)):
                history.append((game_id, ids[name], size, r["elo"], elo, r["mu"], mu, r["sigma"], sigma, played))
                r.update(elo=elo, mu=mu, sigma=sigma, games=r["games"] + 1, wins=r["wins"] + (s == 1.0),
                         draws=r["draws"] + (s == 0.5), losses=r["losses"] + (s == 0.0), gf=r["gf"] + gf,
                         ga=r["ga"] + ga, last=played)
    conn.executemany("""INSERT INTO tournaments (id, name, team_size, status, seed, games_per_pair, planned_games,
                            finished_games, entrants_json, config_json, created, finished)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""", tournaments)
    conn.executemany("""INSERT INTO games (id, origin, tournament_id, schedule_index, team_size, blue_agent_id,
                            orange_agent_id, seed, blue_goals, orange_goals, result, length_seconds, replay_path,
                            played)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""", games)
    conn.executemany("""INSERT INTO rating_history (game_id, agent_id, team_size, elo_before, elo_after, mu_before,
                            mu_after, sigma_before, sigma_after, played) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                     history)
    conn.executemany("""INSERT INTO ratings (agent_id, team_size, elo, mu, sigma, games, wins, draws, losses,
                            goals_for, goals_against, last_played) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                     [(a, s, r["elo"], r["mu"], r["sigma"], r["games"], r["wins"], r["draws"], r["losses"], r["gf"],
                       r["ga"], r["last"]) for (a, s), r in ratings.items()])
    conn.commit()
    by_id = {v: k for k, v in ids.items()}
    written = []
    for g in reversed(games):
        if len(written) >= replay_files:
            break
        if g[12] and g[4] == 1:
            replay = synthetic_replay(g[7] % 100_000, by_id[g[5]], by_id[g[6]], 1, g[8], g[9],
                                      replay_seconds)
            write_replay(home.root / g[12], replay)
            written.append(g[0])
    reg.close()
    write_training_runs(home, records=2000)
    return ScaledLeague(home=home, agents=len(ids), games=len(games), replay_games=written)
