"""Moving checkpoints into and out of a league home (the library behind `league import/export`),
and publishing an agent as an RLBot bot folder (`league export NAME --rlbot DIR`)."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import secrets
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.checkpoint import checkpoint_paths, load_checkpoint, sha256_file
from agents.export_destination import (
    check_destination,
    check_folder_path,
    check_place,
    folder_doomed,
    shown_path,
    swap_in,
    zip_doomed,
)
from agents.loading import checkpoint_file
from league.config import STAGES, team_size_of
from league.errors import LeagueError
from league.files import all_or_nothing, printable, write_file_atomic
from league.home import LeagueHome
from league.provenance import community_sources
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
    with all_or_nothing(f"Cannot copy {file} into {home.checkpoints}") as written, registry.transaction():
        agent = registry.agent_store.add(
            name=name, kind=ckpt.meta.kind, team_size=team_size, checkpoint_path=relative.as_posix(),
            checkpoint_sha256=ckpt.sha256, config=config, steps_trained=ckpt.meta.steps,
            notes=f"imported from {printable(Path(file).name)}",
        )
        home.checkpoints.mkdir(parents=True, exist_ok=True)
        _copy_pair(ckpt.weights_path, stem, written)
        load_checkpoint(stem, expected_sha256=ckpt.sha256)  # the copy is what gets registered
    return agent


def exportable(registry: Registry, name: str) -> Agent:
    """Agent `name`, if it has a checkpoint of its own to export (not a baseline's or a community bot's)."""
    agent = registry.agent_store.get(name)
    if agent.kind == "community":
        raise LeagueError(f"{name!r} is a community bot; its weights are its authors' (see its licence in "
                          "`league show`), not the league's to export.")
    if not agent.checkpoint_path:
        raise LeagueError(f"Agent {name!r} is a {agent.kind} baseline with no checkpoint, so no weights to "
                          "export; export a trained mlp or lstm agent.")
    return agent


def export_checkpoint(home: LeagueHome, registry: Registry, name: str, directory: Path) -> tuple[Path, Path]:
    """Write an agent's checkpoint and metadata to `directory` as NAME.safetensors and NAME.json.

    The league's copy is verified against the registry's sha256 first; existing files in
    `directory` are never overwritten, and `directory` is never the league home, inside it or
    above it.
    """
    agent = exportable(registry, name)
    directory = Path(directory)
    check_place(directory, home, rlbot=False, what="checkpoint")
    check_folder_path(directory, "checkpoint", links_ok=True)
    ckpt = load_checkpoint(checkpoint_file(agent, home.root), expected_sha256=agent.checkpoint_sha256)
    dest = directory / name
    weights, meta = checkpoint_paths(dest)
    for path in (weights, meta):
        if path.exists():
            raise LeagueError(f"{shown_path(path)} already exists; remove it or export to another folder.")
    with all_or_nothing(f"Cannot write to {shown_path(directory)}") as written:
        directory.mkdir(parents=True, exist_ok=True)
        _copy_pair(ckpt.weights_path, dest, written, exclusive=True)  # another writer's files stay theirs
    return weights, meta


@dataclass(frozen=True)
class RlbotExport:
    """An RLBot bot folder written by `export_rlbot`."""

    folder: Path
    zip_path: Path | None
    manifest: dict[str, Any]
    size_bytes: int  # the folder's files, together


def _lineage(registry: Registry, agent: Agent) -> list[str]:
    """The agent's ancestors, oldest first (the first version, ..., its parent)."""
    names, parent_id, seen = [], agent.parent_id, {agent.id}
    while parent_id is not None and parent_id not in seen:
        seen.add(parent_id)
        parent = registry.agent_store.by_id(parent_id)
        names.append(parent.name)
        parent_id = parent.parent_id
    return names[::-1]


def _league_version() -> str:
    try:
        return importlib.metadata.version("rl-league")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _zip_folder(folder: Path, archive: Path, root_name: str) -> None:
    """Zip `folder`'s files under `root_name/` into `archive` (a new file: the temp name beside the destination)."""
    with zipfile.ZipFile(archive, "x", compression=zipfile.ZIP_DEFLATED) as z:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                z.write(path, f"{root_name}/{path.relative_to(folder).as_posix()}")


def export_rlbot(home: LeagueHome, registry: Registry, name: str, directory: Path, *, force: bool = False,
                 make_zip: bool = False, deterministic: bool = True) -> RlbotExport:
    """Write agent `name` as a self-contained RLBot v5 bot folder at `directory` and record the export.

    The folder is built in a temporary folder beside `directory` and renamed into place when
    complete, so an interrupted export leaves no half-written bot. `directory` may be missing or
    empty; with `force` it may also be an earlier export (manifest.json and exactly the unchanged
    files it lists), and `directory`.zip with `make_zip` an earlier export's zip, which are then
    replaced. Anything else, and the league home, anything in it or above it, the current
    folder, the user's home folder, / and symlinks, are refused before anything is written.
    """
    from agents.rlbot_export import (
        write_rlbot_bot,  # the bot's code and templates: only when exporting
    )

    agent = exportable(registry, name)
    folder = Path(directory).absolute()
    zip_path = folder.with_name(folder.name + ".zip") if make_zip else None
    check_destination(home, folder, zip_path, force)
    ckpt = load_checkpoint(checkpoint_file(agent, home.root), expected_sha256=agent.checkpoint_sha256)
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=folder.parent))
        tmp.chmod(0o755)  # mkdtemp's 0700 would otherwise stay with the published folder
    except OSError as exc:
        raise LeagueError(f"Cannot write to {shown_path(folder.parent)}: {exc.strerror or exc}.") from None
    tmp_zip = folder.with_name(f".{folder.name}.zip.{secrets.token_hex(6)}.tmp")
    try:
        manifest = write_rlbot_bot(ckpt, tmp, agent_name=name, lineage=_lineage(registry, agent),
                                   deterministic=deterministic, league_version=_league_version(),
                                   derived_from=[s.to_dict() for s in community_sources(registry, agent)])
        size = sum(p.stat().st_size for p in tmp.rglob("*") if p.is_file())
        manifest_sha256 = sha256_file(tmp / "manifest.json")
        if zip_path is not None:
            _zip_folder(tmp, tmp_zip, folder.name)
            swap_in(tmp_zip, zip_path, force, zip_doomed(folder.name))
        swap_in(tmp, folder, force, folder_doomed)
    except OSError as exc:
        raise LeagueError(f"Cannot write the bot to {shown_path(folder)}: {exc.strerror or exc}.") from None
    finally:
        tmp_zip.unlink(missing_ok=True)
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)  # our own temp folder, never the user's
    registry.export_store.record(name, "rlbot", str(folder), str(zip_path) if zip_path else None,
                                 deterministic, manifest_sha256)
    return RlbotExport(folder, zip_path, manifest, size)
