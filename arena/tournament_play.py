"""Playing a chunk of scheduled tournament games in one process, many at once.

A `GamePlayer` holds one in-process runner of M arenas. Each round it starts up to M games,
arena e's start state drawn from game e's own seed (arenas rebuilt), groups every car row by
the policy that drives it (one batched `act` per policy per step: arena.play, the one play
loop; a side is one agent driving all its cars, or a mixed team whose members drive one car
each, league.teams), records each game's replay
from the arena states, and when the game clock runs out writes the replay (atomically) and
yields the result. Network policies play their greedy action and the random bot draws from a
counter-based generator keyed by the game's seed, so every game replays exactly, whatever
other games share its batch: a resumed tournament reproduces an uninterrupted one.

A player built with `deterministic=False` (a match played --sampled) has network policies draw
their actions instead, each from its own generator seeded at every round by the round's game seeds:
the same games in the same rounds replay exactly, but a game's draws depend on the games that
share its round, so a resumed sampled match plays its missing games with draws of their own.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from agents import obs as raw  # the raw ball and car columns a game hands over (raw.CAR_POS, ...)
from agents.policy import Policy
from arena.engine.game import GameSpec
from arena.engine.placement import Placement
from arena.play import Driver, needs_game_state, play_steps
from arena.replay import EVENT_KINDS, Replay, car_angles, encode, write_replay
from arena.engine.vector import VecGame
from league.game_values import TICKS_PER_SECOND
from league.schedule import ScheduledGame
from league import teams

# A file named after its game's sides stays this short: 255 bytes (a file name's limit) less the atomic
# writer's temporary name around it (".NAME.<12 hex digits>.tmp"), with room to spare.
MAX_FILE_NAME_BYTES = 200
NAME_HASH_CHARS = 8  # hex digits of the whole name's sha256 that mark a name cut to fit


def fitted_file_name(stem: str, suffix: str = ".replay") -> str:
    """`stem + suffix` as a file name: whole when it fits MAX_FILE_NAME_BYTES, else the stem's start, '-'
    and the first NAME_HASH_CHARS hex digits of the whole stem's sha256 (sides of three 64-character members
    make a 400-character stem). The same stem always gives the same name (a resumed tournament finds its
    replays), and stems differing past the cut differ."""
    if len((stem + suffix).encode()) <= MAX_FILE_NAME_BYTES:
        return stem + suffix
    digest = hashlib.sha256(stem.encode()).hexdigest()[:NAME_HASH_CHARS]
    room = MAX_FILE_NAME_BYTES - len(suffix.encode()) - 1 - NAME_HASH_CHARS
    start = stem.encode()[:room].decode(errors="ignore")  # never half a character
    return f"{start}-{digest}{suffix}"


@dataclass(frozen=True)
class GameOutcome:
    game: ScheduledGame
    blue_goals: int
    orange_goals: int
    length_seconds: float
    replay_path: str  # relative to the league home
    replay_bytes: bytes | None = None  # the encoded replay, when the caller writes it (Ray backend)


def car_drivers(batch: list[ScheduledGame], arenas: int, team_size: int) -> np.ndarray:
    """The agent driving each runner row (arena e's cars: blue slots, then orange): arena e < len(batch)
    plays batch[e] (a side's car slots per league.teams.cars), the idle arenas after it batch[0]."""
    names = np.empty(arenas * 2 * team_size, dtype=object)
    for e in range(arenas):
        g = batch[e] if e < len(batch) else batch[0]
        names[e * 2 * team_size:(e + 1) * 2 * team_size] = teams.cars(g.blue, team_size) + teams.cars(g.orange,
                                                                                                      team_size)
    return names


class GamePlayer:
    def __init__(self, spec: GameSpec, policies: dict[str, Policy], home_root: Path, replay_dir: str,
                 arenas: int, meta: dict | None = None, write_replays: bool = True, deterministic: bool = True,
                 observer: Callable[[int, np.ndarray, np.ndarray, list], None] | None = None):
        """`write_replays=False` returns each replay encoded in its outcome instead of writing it;
        `deterministic=False`: network policies sample their actions (see the module's docstring).
        `observer(t, ball, cars, events)`, when given, sees each step's frame as it is recorded (a watched
        game: arena.watch): the round's buffers [steps + 1, arenas, ...] filled up to step t, and each
        arena's events so far."""
        self.observer = observer
        self.write_replays = write_replays
        self.deterministic = deterministic
        self.spec = spec
        self.policies = policies
        self.home_root = home_root
        self.replay_dir = replay_dir
        self.meta = meta or {}
        spec = replace(spec, game_state=needs_game_state(policies.values()))
        self.spec = spec
        self.games = VecGame(spec, workers=1, envs_per_worker=arenas, placement=Placement.IN_PROCESS, seed=0)
        self.worker = self.games.in_process_workers[0]

    def close(self) -> None:
        self.games.close()

    def play(self, scheduled: list[ScheduledGame]) -> Iterator[GameOutcome]:
        m = self.games.num_envs
        for lo in range(0, len(scheduled), m):
            yield from self._round(scheduled[lo:lo + m])

    def _round(self, batch: list[ScheduledGame]) -> Iterator[GameOutcome]:
        games, spec = self.games, self.spec
        m, n_cars, ts = games.num_envs, spec.n_cars, spec.team_size
        live = len(batch)
        seeds = np.array([g.seed for g in batch] + [0] * (m - live), dtype=np.int64)
        obs = games.reset_games(seeds.tolist())
        names = car_drivers(batch, m, ts)
        drivers = []
        order = list(dict.fromkeys(names.tolist()))
        # Sampling: each policy's draws follow from the round's games alone, whichever worker plays them.
        draws = None if self.deterministic else np.random.SeedSequence(seeds[:live].astype(np.uint64)).spawn(len(order))
        for k, name in enumerate(order):
            rows = np.flatnonzero(names == name)
            policy = self.policies[name]
            if draws is not None:
                policy.seed(int(draws[k].generate_state(1)[0]))
            drivers.append(Driver(policy, rows, policy.initial_state(len(rows))))

        steps = int(round(spec.game_seconds * TICKS_PER_SECOND / spec.tick_skip)) + 1
        ball = np.zeros((steps + 1, m, raw.BALL_RAW_DIM), np.float32)
        cars = np.zeros((steps + 1, m, n_cars, raw.CAR_RAW_DIM), np.float32)
        events: list[list[tuple[int, int, int, int]]] = [[(0, EVENT_KINDS["kickoff"], -1, -1)] for _ in range(m)]
        last_toucher = np.full(m, -1)
        self._snapshot(ball, cars, 0)
        if self.observer is not None:
            self.observer(0, ball, cars, events)
        # Network policies play their greedy action (or sample); the random bot is keyed by each game's seed.
        for t, info in enumerate(play_steps(games, drivers, obs, deterministic=self.deterministic, game_seeds=seeds),
                                 start=1):
            touched = info.touches > 0
            for e, c in zip(*np.nonzero(touched)):
                events[e].append((t, EVENT_KINDS["touch"], int(c), int(c >= ts)))
            has_touch = touched.any(axis=1)
            last_toucher = np.where(has_touch, touched.shape[1] - 1 - np.argmax(touched[:, ::-1], axis=1), last_toucher)
            for e, team in zip(*np.nonzero(info.goals)):
                events[e].append((t, EVENT_KINDS["goal"], int(last_toucher[e]), int(team)))
                if not info.done[e]:
                    events[e].append((t, EVENT_KINDS["kickoff"], -1, -1))
            if info.done.all() or t >= steps:
                break
            self._snapshot(ball, cars, t)
            if self.observer is not None:
                self.observer(t, ball, cars, events)
        final_score = info.episode_score.copy()
        length = info.episode_seconds.copy()
        for e in range(live):
            yield self._finish(batch[e], ball[:t, e], cars[:t, e], events[e], final_score[e], float(length[e]))

    def _snapshot(self, ball: np.ndarray, cars: np.ndarray, t: int) -> None:
        # After a step the worker has already read every arena (before restarting any after a
        # goal, so the replay shows the ball in the net); only the first frame needs a read.
        arrays = self.worker.read_arrays() if t == 0 else self.worker.last_arrays
        ball[t] = arrays.ball
        cars[t] = arrays.cars

    def replay_of(self, game: ScheduledGame, ball, cars, events, score, length) -> Replay:
        """Game `game` as a replay, from one arena's raw frames (ball [T, 9], cars [T, C, 18]) and events."""
        ev = np.array([(s, k, c) for s, k, c, _ in events], dtype=np.int32).reshape(-1, 3)
        teams = np.array([tm for *_, tm in events], dtype=np.int8)
        physics = np.concatenate([cars[..., raw.CAR_POS], car_angles(cars[..., raw.CAR_FWD], cars[..., raw.CAR_UP]),
                                  cars[..., raw.CAR_VEL], cars[..., raw.CAR_ANG_VEL]], axis=-1)
        meta = dict(self.meta, blue=game.blue, orange=game.orange, team_size=self.spec.team_size, seed=game.seed,
                    score=[int(score[0]), int(score[1])], length_seconds=length, tick_skip=self.spec.tick_skip,
                    game_seconds=self.spec.game_seconds, schedule_index=game.index,
                    car_teams=[0] * self.spec.team_size + [1] * self.spec.team_size)
        return Replay(meta, ball, physics, cars[..., raw.CAR_BOOST], cars[..., raw.CAR_ON_GROUND] > 0.5,
                      cars[..., raw.CAR_DEMOED] > 0.5, ev, teams)

    def _finish(self, game: ScheduledGame, ball, cars, events, score, length) -> GameOutcome:
        replay = self.replay_of(game, ball, cars, events, score, length)
        rel = f"{self.replay_dir}/{fitted_file_name(f'{game.index:05d}-{game.blue}-vs-{game.orange}')}"
        if not self.write_replays:
            return GameOutcome(game, int(score[0]), int(score[1]), length, rel, encode(replay))
        write_replay(self.home_root / rel, replay)
        return GameOutcome(game, int(score[0]), int(score[1]), length, rel)
