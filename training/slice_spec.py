"""What the files of chunked training share (a curriculum's stages, a league's roles): one parse path.

Such a file has a name (a prefix of its runs' names, which --name overrides), an overlay on the main
config tree for every item, and a list of named items, each validated against its own dataclass and
with an overlay of its own. The keys the driver sets for each slice (the stage, the budget, a target)
are refused in an overlay and in --set, since they would be silently overridden. An item's config is
loaded once per command (`item_config`); what changes per slice is handed to the trainer as typed
values (training.slices).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from league.config import Config, StudentOf, load_config
from league.config_tree import build, check_file_name, merge, validate, walk
from league.errors import ConfigError, LeagueError


@dataclass(frozen=True)
class FileKind:
    """What a kind of file calls itself and its items, for its sentences: ("curriculum", "stage", "stages")."""

    what: str  # curriculum | league
    item: str  # stage | role
    items: str  # the file's key listing the items: stages | roles
    default_name: str  # its name when the file gives none


def file_name(data: dict[str, Any], kind: FileKind, source: str, name: str | None) -> str:
    """The file's name (`name` overrides it), checked as a run-name prefix."""
    given = str(name if name is not None else data.get("name", kind.default_name))
    check_file_name(given, source if name is None else f"the {kind.what} name", "name")
    return given


def parse_items(cls: type, raw: Any, kind: FileKind, source: str) -> list[Any]:
    """The file's items (`raw`, the list under kind.items), each validated against `cls` and built: every item
    named, each name valid as a run-name part and unique. An item's own checks are its caller's."""
    items, seen = [], set()
    for i, item in enumerate(raw or []):
        where = f"{kind.items}[{i}]"
        validate(cls, item, source, f"{where}.")
        if not item.get("name"):
            raise ConfigError(f"{source}: key '{where}.name' is missing; every {kind.item} needs a name.")
        check_file_name(item["name"], source, f"{where}.name")
        if item["name"] in seen:
            raise ConfigError(f"{source}: key '{where}.name' repeats the {kind.item} name {item['name']!r}.")
        seen.add(item["name"])
        items.append(build(cls, item))
    return items


def driver_key(overlay: dict, driver_keys: set[tuple[str, ...]]) -> tuple[str, ...] | None:
    """The first key path of `overlay` (validated against the main tree) that the driver sets, or None."""
    return next((path for path, _ in walk(overlay) if path in driver_keys), None)


def check_overlay(overlay: dict, source: str, where: str, driver_keys: set[tuple[str, ...]],
                  says: Callable[[tuple[str, ...]], str]) -> None:
    """An overlay on the main config tree: valid keys, none the driver sets (`says(path)`: what the sentence
    goes on to say about that key, e.g. where it is set instead)."""
    validate(Config, overlay, source, f"{where}.")
    if (path := driver_key(overlay, driver_keys)) is not None:
        raise ConfigError(f"{source}: key {where + '.' + '.'.join(path)!r} {says(path)}")


def refuse_driver_sets(sets: list[str] | None, driver_keys: set[tuple[str, ...]], flag: str, why: str) -> None:
    """One sentence for a --set of a key the driver sets for each slice."""
    for item in sets or []:
        key = tuple(item.split("=", 1)[0].strip().split("."))
        if key in driver_keys:
            raise LeagueError(f"--set {'.'.join(key)} does not go with {flag}: the driver sets it for each slice "
                              f"({why}).")


def item_config(stage: str, overlays: list[dict], *, user_file: Path | None = None, home_file: Path | None = None,
                overrides: dict[str, Any] | None = None, sets: list[str] | None = None,
                student_of: StudentOf | None = None) -> Config:
    """An item's whole config, loaded once: the usual layers for `stage`, the file's and the item's overlays
    (later ones win), then `overrides` (flags; None values left out) and `sets` ("KEY=VALUE")."""
    from training.accel import cuda_available  # torch: only when a config for training is built

    layered: dict[str, Any] = {}
    for overlay in overlays:
        layered = merge(layered, overlay)
    layered.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return load_config(stage=stage, user_file=user_file, home_file=home_file, overrides=layered, sets=sets,
                       gpu=cuda_available, student_of=student_of)
