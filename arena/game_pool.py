"""Scheduled games played by workers (arena.engine.pool): how tournaments and matches use many cores.

    with GamePool(agents, spec, home.root, "replays/tournament-3", {"tournament_id": 3}, workers=2,
                  arenas=8, resume_hint="run the same command again to resume tournament 3") as pool:
        for outcome in pool.play(games): record(outcome)        # a tournament: one call
        for outcome in pool.play(more_games): record(outcome)   # a match: one call per batch

Each worker hosts a GameService: it loads the policies and builds its runner of `arenas` games
once, then plays every chunk of games it is handed. Chunks of `arenas` games go to whichever
worker is free, so a slow worker never holds the others back. Local workers write each replay
themselves (atomically); Ray workers, whose disk may be another node's, hand it back encoded and
the driver writes it (the league home must still be on a path every node can read, for the
checkpoints). Only the driver writes the database. Every game replays exactly from its seed, so
both placements give the same results. A worker that dies, or stops on a bad file or a full disk,
ends `play` with one LeagueError sentence ending in `resume_hint`; the pool is then closed. So does a
local worker that answers nothing for `stall_seconds` (a hang: every worker's stacks and the driver's
are written to standard error first; arena.engine.pool).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from pathlib import Path

from arena.engine.game import GameSpec
from arena.engine.placement import RENAMED, Placement, as_placement
from arena.engine.pool import open_pool
from arena.engine.procs import WorkerError
from arena.replay import write_replay
from arena.tournament_play import GameOutcome, GamePlayer
from league.errors import LeagueError
from league.registry import Agent
from league.schedule import ScheduledGame

# Where a contest's workers may run (league tournament --placement); `local`, their old name for
# processes, still parses (arena.engine.placement).
PLACEMENTS = (Placement.PROCESSES, Placement.RAY)
# A chunk of games with no answer for this long is a hang: a worker's start on a slow, busy host, plus per game-minute
# of the chunk about 50 times what one costs here (400 2v2 one-minute games took 54 s on 2 workers: 0.27 s a game-minute).
STALL_START_SECONDS = 600.0
STALL_SECONDS_PER_GAME_MINUTE = 15.0


def stall_seconds(spec: GameSpec, arenas: int) -> float:
    """How long a worker playing chunks of `arenas` games of `spec` may answer nothing before it is taken to hang."""
    return STALL_START_SECONDS + arenas * spec.clock_seconds / 60.0 * STALL_SECONDS_PER_GAME_MINUTE


def contest_placement(placement: str | Placement) -> Placement:
    """The placement `league tournament --placement` (or a match) names; one LeagueError sentence for any other."""
    if placement not in PLACEMENTS and RENAMED.get(placement) not in PLACEMENTS:
        raise LeagueError(f"Unknown placement {placement!r}; expected {' or '.join(PLACEMENTS)}.")
    return as_placement(placement, "--placement")


class GameService:
    """One worker's policies and runner of `arenas` games, built once, playing chunk after chunk."""

    def __init__(self, agents: dict[str, Agent], spec: GameSpec, home_root: str, replay_dir: str, arenas: int,
                 meta: dict, write_replays: bool, deterministic: bool = True):
        import torch

        from agents.loading import load_policy

        torch.set_num_threads(1)  # one worker per core: tiny per-step batches gain nothing from more
        policies = {name: load_policy(agent, home_root=Path(home_root)) for name, agent in agents.items()}
        self.player = GamePlayer(spec, policies, Path(home_root), replay_dir, arenas, meta,
                                 write_replays=write_replays, deterministic=deterministic)

    def play(self, games: list[ScheduledGame]) -> list[GameOutcome]:
        return list(self.player.play(games))

    def close(self) -> None:
        self.player.close()


class GamePool:
    """`workers` workers placed at `placement` (Placement.PROCESSES or RAY, at `address`), each playing up to `arenas`
    games at once. `resume_hint` ends the sentence of a failure. `deterministic=False`: network
    policies sample their actions (arena.tournament_play) instead of playing the most likely one."""

    def __init__(self, agents: dict[str, Agent], spec: GameSpec, home_root: Path, replay_dir: str, meta: dict,
                 workers: int, arenas: int, resume_hint: str, placement: str | Placement = Placement.PROCESSES,
                 address: str | None = None, deterministic: bool = True):
        placement = contest_placement(placement)
        self.home_root, self.arenas, self.resume_hint = home_root, arenas, resume_hint
        here = placement is Placement.PROCESSES  # workers on this machine write their replays themselves
        args = [(agents, spec, str(home_root), replay_dir, arenas, meta, here, deterministic)] * max(1, workers)
        self._opened = open_pool(placement, GameService, args, "Game worker", address,
                                 stall_seconds=stall_seconds(spec, arenas))
        self._broken = False
        try:
            self.pool = self._opened.__enter__()
        except WorkerError as exc:
            raise self._error(exc) from None

    def __enter__(self) -> "GamePool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def pids(self) -> list[int | None]:
        return self.pool.pids

    def play(self, games: list[ScheduledGame]) -> Iterator[GameOutcome]:
        """Play `games`; yields each outcome as its chunk ends, its replay already written.
        Leaving the iterator early leaves the pool unusable."""
        if self._broken:
            raise RuntimeError("this game pool stopped on an earlier failure")
        self._broken = True  # until every chunk is back: an early exit leaves answers in flight
        chunks = deque(games[i:i + self.arenas] for i in range(0, len(games), self.arenas))
        idle, busy = deque(range(self.pool.size)), 0
        try:
            while chunks or busy:
                while idle and chunks:
                    self.pool.call(idle.popleft(), "play", chunks.popleft())
                    busy += 1
                k, outcomes = self.pool.next_reply()
                busy -= 1
                idle.append(k)
                for outcome in outcomes:
                    if outcome.replay_bytes is not None:
                        write_replay(self.home_root / outcome.replay_path, outcome.replay_bytes)
                    yield outcome
        except WorkerError as exc:
            raise self._error(exc) from None
        self._broken = False

    def _error(self, exc: WorkerError) -> LeagueError:
        text = str(exc).rstrip(".")
        if exc.refused:
            return LeagueError(f"{text}; the games played so far are recorded: {self.resume_hint}.")
        if exc.lost:
            return LeagueError(f"{text}; {self.resume_hint}.")
        return LeagueError(f"{text}\n{self.resume_hint}.")  # a bug: its traceback, whole

    def close(self) -> None:
        self._opened.__exit__(None, None, None)
