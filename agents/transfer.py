"""Moving checkpoints into and out of a league home (the library behind `league import/export`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from agents.checkpoint import checkpoint_paths, load_checkpoint
from agents.loading import checkpoint_file
from league.config import STAGES, team_size_of
from league.errors import LeagueError
from league.files import write_file_atomic
from league.home import LeagueHome
from league.registry import Agent, Registry


def _copy_pair(src: Path, dest: Path, written: list[Path], exclusive: bool = False) -> None:
    """Copy a checkpoint's two files (metadata first, as when saving), noting each one written.

    With `exclusive`, an existing file is never replaced (a LeagueError), even one that
    appeared since it was last checked for.
    """
    for s, d in zip(reversed(checkpoint_paths(src)), reversed(checkpoint_paths(dest))):
        write_file_atomic(d, s.read_bytes(), exclusive=exclusive)  # checkpoints are megabytes: one read, one write
        written.append(d)


class StageNotRecorded(LeagueError):
    """A checkpoint that does not say which stage it was trained for, imported without a stage."""

    def __init__(self, file: Path):
        self.file = file
        super().__init__(f"{file} does not record the stage it was trained for; give its stage "
                         f"({', '.join(STAGES[:-1])} or {STAGES[-1]}).")


def _team_size(stage: str | None, training_config: dict | None, file: Path) -> int:
    if stage is None and isinstance(training_config, dict):
        stage = training_config.get("stage")
        if stage not in STAGES:
            stage = None
    if stage is None:
        raise StageNotRecorded(file)
    return team_size_of(stage)


def import_checkpoint(home: LeagueHome, registry: Registry, file: Path, name: str | None = None,
                      stage: str | None = None) -> Agent:
    """Verify a checkpoint, copy it into the league home and register it as a new agent.

    The registration and the copy succeed together or not at all: the agent row is written
    in a transaction that commits only after the copy has been verified against the sha256.
    """
    ckpt = load_checkpoint(file)
    name = name or checkpoint_paths(file)[0].stem
    team_size = _team_size(stage, ckpt.meta.training_config, file)
    config = ckpt.meta.training_config or {"policy": dataclasses.asdict(ckpt.meta.architecture)}
    stem = home.checkpoints / f"{name}-{ckpt.sha256[:12]}"
    relative = checkpoint_paths(stem)[0].relative_to(home.root)
    written: list[Path] = []
    try:
        with registry.transaction():
            agent = registry.add_agent(
                name=name, kind=ckpt.meta.kind, team_size=team_size, checkpoint_path=relative.as_posix(),
                checkpoint_sha256=ckpt.sha256, config=config, steps_trained=ckpt.meta.steps,
                notes=f"imported from {Path(file).name}",
            )
            home.checkpoints.mkdir(parents=True, exist_ok=True)
            _copy_pair(ckpt.weights_path, stem, written)
            load_checkpoint(stem, expected_sha256=ckpt.sha256)  # the copy is what gets registered
    except OSError as exc:
        _remove(written)
        raise LeagueError(f"Cannot copy {file} into {home.checkpoints}: {exc.strerror or exc}.") from None
    except BaseException:
        _remove(written)
        raise
    return agent


def _remove(paths: list[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


def export_checkpoint(home: LeagueHome, registry: Registry, name: str, directory: Path) -> tuple[Path, Path]:
    """Write an agent's checkpoint and metadata to `directory` as NAME.safetensors and NAME.json.

    The league's copy is verified against the registry's sha256 first; existing files in
    `directory` are never overwritten.
    """
    agent = registry.agent(name)
    if not agent.checkpoint_path:
        raise LeagueError(f"Agent {name!r} is a {agent.kind} baseline with no checkpoint to export.")
    ckpt = load_checkpoint(checkpoint_file(agent, home.root), expected_sha256=agent.checkpoint_sha256)
    dest = Path(directory) / name
    weights, meta = checkpoint_paths(dest)
    for path in (weights, meta):
        if path.exists():
            raise LeagueError(f"{path} already exists; remove it or export to another folder.")
    written: list[Path] = []
    try:
        Path(directory).mkdir(parents=True, exist_ok=True)
        _copy_pair(ckpt.weights_path, dest, written, exclusive=True)  # another writer's files stay theirs
    except OSError as exc:
        _remove(written)
        raise LeagueError(f"Cannot write to {directory}: {exc.strerror or exc}.") from None
    except BaseException:
        _remove(written)
        raise
    return weights, meta
