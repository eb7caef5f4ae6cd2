"""The league-roles file (configs/league-roles.yaml): typed and validated like every other config.

A roles file names a league, its team size, the length of a time slice, an overlay on the main
config tree for every role, and its roles: one `main` (the learner with today's opponent mix;
the exploiters' snapshots join its pool) and any number of exploiters, each a `main_exploiter`
(a best response to the main agent's latest snapshot) or a `league_exploiter` (PFSP over every
active trained member). An exploiter restarts as a new run when it wins `reset_win_rate` of its
check games against its targets, or when its restart has trained `max_steps`. The format is
documented in docs/league-roles.md.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from league.config import GAMES_MAX, STEPS_MAX, Config, load_config, shipped_config_dir
from league.config_tree import build, check_file_name, merge, param, read_shipped_or, validate, walk
from league.errors import ConfigError
from training.launch import cuda_available

DEFAULT_FILE = "league-roles.yaml"
# The driver sets these for each slice and role; in a file they would be silently overridden.
DRIVER_KEYS = {("stage",), ("training", "steps"), ("training", "minutes"), ("training", "best_response_to")}


@dataclass
class RoleSpec:
    """One role (an item of `roles:`)."""

    name: str = param("", "Role name, unique in the file; its runs are <league>-<name> (an exploiter's "
                          "<league>-<name>-r<restart>).")
    kind: Literal["main", "main_exploiter", "league_exploiter"] = param(
        "main", "main: today's learner and opponent mix, the exploiters' snapshots in its pool; main_exploiter: "
                "trains against the main agent's latest snapshot alone; league_exploiter: PFSP over every active "
                "trained member.")
    share: float = param(1.0, "Share of the wall clock (of the rollout workers with --backend ray); the shares "
                              "are normalized.", min=0.001, max=1000)
    check_games: int = param(20, "Exploiters: games against the targets after each of the role's slices.", min=2,
                             max=GAMES_MAX)
    reset_win_rate: float = param(0.7, "Exploiters: restart as a new run once the check's win rate reaches this.",
                                  min=0, max=1)
    max_steps: int = param(12_000_000, "Exploiters: restart as a new run once a restart has trained this many agent "
                                      "steps.", min=1, max=STEPS_MAX)
    restart_from: Literal["fresh", "main"] = param(
        "fresh", "Exploiters: a restart's first weights: fresh (a new network, kickstarted from "
                 "training.kickstart.teacher when set) or main (the main agent's latest snapshot).")
    config: dict = param({}, "Overlay on the main config tree for this role (same keys as configs/base.yaml).")


@dataclass
class RolesSpec:
    """A whole roles file."""

    name: str = param("roles", "League name; prefixes its roles' run names. --name overrides it.")
    stage: Literal["1v1", "2v2", "3v3"] = param("1v1", "Team size every role trains at.")
    slice_minutes: float = param(5.0, "On one machine the roles take turns: each turn, the role furthest behind its "
                                      "share trains this many minutes.", min=0.001, max=24 * 60)
    config: dict = param({}, "Overlay on the main config tree for every role (a role's own wins).")
    roles: list = param([], "The roles (each a mapping, see RoleSpec): one main, any number of exploiters.")

    def run_name(self, role: RoleSpec, restart: int = 1) -> str:
        return f"{self.name}-{role.name}" if role.kind == "main" else f"{self.name}-{role.name}-r{restart}"

    @property
    def main(self) -> RoleSpec:
        return next(r for r in self.roles if r.kind == "main")

    def share(self, role: RoleSpec) -> float:
        """The role's share of the whole, normalized."""
        return role.share / sum(r.share for r in self.roles)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _check_overlay(overlay: dict, source: str, where: str) -> None:
    validate(Config, overlay, source, f"{where}.")
    for path, _ in walk(overlay):
        if path in DRIVER_KEYS or path == ("game", "team_size"):
            key = f"{where}.{'.'.join(path)}"
            raise ConfigError(f"{source}: key {key!r} is set by the league roles driver (the file's 'stage', "
                              "--minutes, and each role's kind); leave it out.")


def parse_roles(data: Any, source: str, name: str | None = None) -> RolesSpec:
    """Validate a roles mapping (as read from YAML) and build it; `name` overrides its name."""
    validate(RolesSpec, data, source)
    data = dict(data)
    if name is not None:
        data["name"] = name
    where_name = source if name is None else "the league name"
    check_file_name(str(data.get("name", "roles")), where_name, "name")
    _check_overlay(data.get("config", {}), source, "config")
    roles, seen = [], set()
    for i, item in enumerate(data.get("roles") or []):
        where = f"roles[{i}]"
        validate(RoleSpec, item, source, f"{where}.")
        if not item.get("name"):
            raise ConfigError(f"{source}: key '{where}.name' is missing; every role needs a name.")
        check_file_name(item["name"], source, f"{where}.name")
        if item["name"] in seen:
            raise ConfigError(f"{source}: key '{where}.name' repeats the role name {item['name']!r}.")
        seen.add(item["name"])
        role = build(RoleSpec, item)
        role.share, role.reset_win_rate = float(role.share), float(role.reset_win_rate)
        _check_overlay(role.config, source, f"{where}.config")
        roles.append(role)
    mains = [r for r in roles if r.kind == "main"]
    if len(mains) != 1:
        raise ConfigError(f"{source}: key 'roles' must hold exactly one role of kind main (it has {len(mains)}).")
    spec = RolesSpec(name=str(data.get("name", "roles")), stage=data.get("stage", "1v1"),
                     slice_minutes=float(data.get("slice_minutes", 5.0)), config=data.get("config", {}), roles=roles)
    for i, role in enumerate(roles):
        check_file_name(spec.run_name(role, 99), where_name, f"roles[{i}] run name")
    return spec


def load_roles(path: Path | None = None, name: str | None = None) -> tuple[RolesSpec, str]:
    """Read and validate a roles file (default: the shipped configs/league-roles.yaml); (spec, source)."""
    data, source = read_shipped_or(path, shipped_config_dir(), DEFAULT_FILE)
    return parse_roles(data, source, name), source


def role_config(spec: RolesSpec, role: RoleSpec, *, user_file: Path | None = None, home_file: Path | None = None,
                overrides: dict[str, Any] | None = None, sets: list[str] | None = None) -> Config:
    """The full config of `role`: the usual layers, the file's and the role's overlays, then `overrides`
    (flags, and the driver's budget and target) and `--set`s."""
    layered = dict(merge(spec.config, role.config))
    layered.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return load_config(stage=spec.stage, user_file=user_file, home_file=home_file, overrides=layered, sets=sets,
                       gpu=cuda_available)
