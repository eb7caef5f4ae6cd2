"""Where work runs: one vocabulary for the game runner, the worker pool, tournaments and training.

    Placement.IN_PROCESS   in the caller's process, one worker after another (a rollout worker's own
                           arenas, a tournament worker's games, debugging, tiny runs)
    Placement.PROCESSES    worker processes of this machine (the fork server's: arena.engine.procs)
    Placement.RAY          Ray actors on a cluster, or on a local instance (arena.engine.ray_cluster)

Training's `runner.backend` says two things: where its games run and who runs the policies'
forwards. `Backend` maps it, once, onto a Placement (`Backend.placement`), whether the workers run
their own forwards (`Backend.rollout_workers`), and where a game runner built from the same config
plays (`Backend.games`). Older names of these choices (the game runner's `serial` and
`multiprocessing`, the tournament's `local`) still parse, with a one-line note.
"""

from __future__ import annotations

from enum import StrEnum

from league.config_tree import renamed_note
from league.errors import LeagueError


class Placement(StrEnum):
    IN_PROCESS = "in-process"
    PROCESSES = "processes"
    RAY = "ray"


# The names placements had before they were one vocabulary; they work until the next release.
RENAMED = {"serial": Placement.IN_PROCESS, "multiprocessing": Placement.PROCESSES, "local": Placement.PROCESSES}


def as_placement(name: str | Placement, source: str = "placement") -> Placement:
    """The placement `name` says; an old name passes with a note (naming `source`), anything else is one
    LeagueError sentence naming the choices."""
    if isinstance(name, Placement):
        return name
    if name in RENAMED:
        renamed_note(source, "placement", name, RENAMED[name].value)
        return RENAMED[name]
    try:
        return Placement(name)
    except ValueError:
        raise LeagueError(f"Unknown placement {name!r}; expected one of "
                          f"{', '.join(p.value for p in Placement)}.") from None


class Backend(StrEnum):
    """runner.backend once `auto` is resolved (training.collection.collection_backend)."""

    ROLLOUT = "rollout"  # rollout worker processes, each stepping its own arenas and running every forward
    CENTRAL = "central"  # game worker processes that only step physics; every forward in the learner's process
    IN_PROCESS = "in-process"  # games and forwards in the learner's process
    RAY = "ray"  # rollout workers as Ray actors

    @property
    def placement(self) -> Placement:
        """Where this backend's workers run."""
        return _PLACEMENTS[self]

    @property
    def rollout_workers(self) -> bool:
        """Whether its workers run the policies' forwards themselves (training.worker_collection)."""
        return self in (Backend.ROLLOUT, Backend.RAY)

    @classmethod
    def games_of(cls, choice: str | None) -> Placement:
        """Where a game runner built from a config whose runner.backend is `choice` plays its games: in this
        process for `in-process`; else in game worker processes (the choices whose workers are rollout
        workers, and `auto`, leave the games such a runner plays, evaluation's and benchmarks', to processes)."""
        return Placement.IN_PROCESS if choice == Backend.IN_PROCESS else Placement.PROCESSES


_PLACEMENTS = {Backend.ROLLOUT: Placement.PROCESSES, Backend.CENTRAL: Placement.PROCESSES,
               Backend.IN_PROCESS: Placement.IN_PROCESS, Backend.RAY: Placement.RAY}
