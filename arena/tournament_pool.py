"""Local worker processes that play scheduled games, kept alive between batches.

    with WorkerPool(agents, spec, home.root, "replays/tournament-3", {"tournament_id": 3},
                    workers=2, arenas=8) as pool:
        for outcome in pool.play(games): record(outcome)    # a tournament: one call
        for outcome in pool.play(more_games): record(outcome)  # a match: one call per batch

Each worker loads the policies and builds its runner of `arenas` games once, then plays every
list of games it is handed (writing each replay atomically) and sends back the outcomes; only
the driver writes the database. A worker that dies, or stops on a bad file or a full disk,
ends `play` with a LeagueError; the pool is then unusable and `close` ends the rest.
"""

from __future__ import annotations

import queue
import traceback
from collections.abc import Iterator
from pathlib import Path

import torch

from agents.loading import load_policy
from arena.engine.game import GameSpec
from arena.engine.procs import detach_worker_signals, died_sentence, worker_context
from arena.tournament_play import GameOutcome, GamePlayer
from league.errors import LeagueError
from league.registry import Agent
from league.schedule import ScheduledGame


def _worker_main(agents: dict[str, Agent], spec: GameSpec, home_root: str, replay_dir: str, arenas: int,
                 meta: dict, tasks, results) -> None:
    detach_worker_signals()
    torch.set_num_threads(1)  # one process per core: tiny per-step batches gain nothing from more
    try:
        policies = {name: load_policy(agent, home_root=Path(home_root)) for name, agent in agents.items()}
        player = GamePlayer(spec, policies, Path(home_root), replay_dir, arenas, meta)
        try:
            while (games := tasks.get()) is not None:
                for outcome in player.play(games):
                    results.put(("game", outcome))
                results.put(("done", None))
        finally:
            player.close()
    except (LeagueError, OSError) as exc:  # a bad file or a full disk: one sentence for the person
        results.put(("refused", _one_sentence(exc)))
    except BaseException:  # a bug: the whole traceback
        results.put(("error", traceback.format_exc()))


def _one_sentence(exc: LeagueError | OSError) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"cannot write {exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    return str(exc).rstrip(".")


def split(games: list[ScheduledGame], workers: int) -> list[list[ScheduledGame]]:
    """Games dealt to at most `workers` workers in turn (the empty hands left out)."""
    return [games[w::workers] for w in range(workers) if games[w::workers]]


class WorkerPool:
    """`workers` processes, each playing up to `arenas` games at once. `resume_hint` ends the
    messages of a failure (e.g. "run the same command again to resume tournament 3")."""

    def __init__(self, agents: dict[str, Agent], spec: GameSpec, home_root: Path, replay_dir: str, meta: dict,
                 workers: int, arenas: int, resume_hint: str):
        self.resume_hint = resume_hint
        ctx = worker_context()
        self._results = ctx.Queue()
        self._tasks = []
        self._procs = []
        self._broken = False
        for _ in range(max(1, workers)):
            tasks = ctx.Queue()
            p = ctx.Process(target=_worker_main, daemon=True,
                            args=(agents, spec, str(home_root), replay_dir, arenas, meta, tasks, self._results))
            p.start()
            self._tasks.append(tasks)
            self._procs.append(p)

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def play(self, games: list[ScheduledGame]) -> Iterator[GameOutcome]:
        """Play `games` (dealt to the workers in turn); yields each outcome as it arrives, its
        replay already written. Leaving the iterator early leaves the pool unusable."""
        if self._broken:
            raise RuntimeError("this worker pool stopped on an earlier failure")
        hands = split(games, len(self._procs))
        self._broken = True  # until every hand is done: an early exit leaves results in flight
        for tasks, hand in zip(self._tasks, hands):
            tasks.put(hand)
        running = len(hands)
        while running:
            try:
                kind, payload = self._results.get(timeout=1.0)
            except queue.Empty:
                dead = [(k, p) for k, p in enumerate(self._procs) if p.exitcode is not None]
                if dead:
                    k, proc = dead[0]
                    raise LeagueError(f"{died_sentence(f'Game worker {k}', proc)}; {self.resume_hint}.") from None
                continue
            if kind == "game":
                yield payload
            elif kind == "done":
                running -= 1
            elif kind == "refused":
                raise LeagueError(f"A game worker stopped ({payload}); the games played so far are recorded: "
                                  f"{self.resume_hint}.")
            else:
                raise LeagueError(f"A game worker failed:\n{payload}")
        self._broken = False

    def close(self) -> None:
        for tasks, p in zip(self._tasks, self._procs):
            if p.is_alive() and not self._broken:
                tasks.put(None)  # finish cleanly: the runner closes its arenas
        for p in self._procs:
            p.join(5 if not self._broken else 0)
            if p.is_alive():
                p.terminate()
                p.join(5)
