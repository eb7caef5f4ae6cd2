"""Collection backends: where the games the learner trains on are played, behind one interface.

    collection.set_pool(picks, specs, seed)   # the league envs' opponents, from the next round on
    collection.submit(order)                  # start a round: T steps with these weights
    round = collection.result()               # wait for it: one Segment (and the steps lost)

- `rollout` (training.worker_collection; the default with a CPU learner): rollout worker
  processes, each a Collector over its own arenas with its own forwards; their segments merge
  into one.
- `central` or `in-process` (LocalCollection): one Collector in this process over the game
  worker processes (or over arenas stepped in this process); with pipelining off, `result()`
  plays the round there and then, so a seed gives the same run every time.
- pipelined (runner.pipeline): the same Collector in a thread, so the next round is played
  while the learner updates on this one, with the weights it had when the round was submitted
  (a policy lag of one update; the loop records it).
- `ray` (training.worker_collection): rollout workers as Ray actors, each a Collector of its own;
  their segments merge into one.

The self-play loop (training.selfplay) submits, waits and updates; it never knows which it has.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch

from arena.engine.cores import usable_cores
from arena.engine.placement import Backend
from training.collector import Collector
from training.opponents import PolicySpec
from training.segment import Segment


@dataclass
class Order:
    """One round of collection: `steps` steps of every game with the weights after update `version`."""

    weights: dict[str, torch.Tensor] | dict[str, np.ndarray]
    version: int
    steps: int
    shaping_scale: float = 1.0
    teach: bool = False


@dataclass
class Round:
    segment: Segment
    lost_steps: int = 0  # agent steps played by rollout workers that died before handing them over
    workers: int = 1  # rollout workers whose segments are in this round


class Collection(Protocol):
    pipelined: bool
    depth: int  # rounds the loop keeps under way: 1, or 2 when pipelined (the next plays while one trains)
    slots: int  # learner rows: the width of a round's segment
    league_envs: int  # how many picks set_pool takes

    def set_pool(self, picks: list[str], specs: dict[str, PolicySpec], seed: int) -> None: ...

    def submit(self, order: Order) -> None: ...

    def result(self) -> Round: ...

    def close(self) -> None: ...


def collection_backend(choice: str) -> Backend:
    """The backend runner.backend names (where its workers run: `Backend.placement`); auto: rollout
    worker processes (`rollout`), where every
    policy's forward runs beside the physics on every core and no worker waits for another
    (docs/scaling.md: on 2 cores 0.53x of bare RocketSim against 0.28x with the forwards in the
    learner's process; on a 16-core GPU machine the lockstep `central` runner reached 0.41x of bare
    physics with random actions alone), with a CPU learner and with a GPU one."""
    return Backend.ROLLOUT if choice == "auto" else Backend(choice)


def collection_workers(configured: int, backend: str, device: torch.device) -> int:
    """Local game or rollout workers: runner.workers, or 0 (auto): one per core, but with a GPU learner's
    rollout workers one core is left to the learner, which updates while they play (pipelined)."""
    if configured:
        return configured
    cores = usable_cores()
    return max(1, cores - 1) if backend == "rollout" and device.type == "cuda" and cores > 2 else cores


def pipelining(choice: str, backend: str, device: torch.device, game_workers: int) -> bool:
    """Whether to collect the next round during the update (runner.pipeline).

    auto: pipelined where the update and collection do not fight over the same cores: a GPU learner, a
    Ray cluster's workers, or a machine with more cores than game workers. Measured on 2 cores
    with 2 game workers (docs/scaling.md): off there, since the update takes both cores.
    """
    if choice != "auto":
        return choice == "always"
    return device.type == "cuda" or backend == "ray" or usable_cores() > game_workers


class LocalCollection:
    """One Collector in this process: played in `result()`, or in a thread beside the update (pipelined)."""

    def __init__(self, collector: Collector, pipelined: bool):
        self.collector = collector
        self.pipelined = pipelined
        self.slots, self.league_envs = collector.slots, collector.league_envs
        self.depth = 2 if pipelined else 1
        self._pool: tuple | None = None
        self._order: Order | None = None
        self._futures: deque[Future] = deque()  # pipelined: rounds under way, played one after another
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="collection") if pipelined else None

    def set_pool(self, picks: list[str], specs: dict[str, PolicySpec], seed: int) -> None:
        self._pool = (picks, specs, seed)  # taken up by the next round (one may be under way)

    def submit(self, order: Order) -> None:
        if self._thread is not None:
            self._futures.append(self._thread.submit(self._play, order))
        else:
            self._order = order

    def result(self) -> Round:
        if self._futures:
            return Round(self._futures.popleft().result())
        order, self._order = self._order, None
        if order is None:
            raise RuntimeError("result() without a submitted round")
        return Round(self._play(order))

    def _play(self, order: Order) -> Segment:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            self.collector.set_pool(*pool)
        self.collector.set_weights(order.weights, order.version)
        return self.collector.collect(order.steps, order.shaping_scale, order.teach)

    def close(self) -> None:
        if self._thread is not None:
            for future in self._futures:
                future.cancel()
            for future in self._futures:
                try:
                    future.result()  # a round under way finishes before its games close
                except Exception:  # noqa: BLE001 - the run is ending (cancelled, or its own error raised already)
                    pass
            self._thread.shutdown(wait=True)
        self.collector.close()
