"""The league-roles file (configs/league-roles.yaml): typed and validated like every other config.

A roles file names a league, its team size, the length of a time slice, an overlay on the main
config tree for every role, and its roles: one `main` (the learner with today's opponent mix;
the exploiters' snapshots join its pool) and any number of exploiters, each a `main_exploiter`
(a best response to the main agent's latest snapshot) or a `league_exploiter` (PFSP over every
active trained member). An exploiter restarts as a new run when it wins `reset_win_rate` of its
check games against its targets, or when its restart has trained `max_steps`. What each kind
does is one class (training.role_kinds). The format is documented in docs/league-roles.md; what it
shares with a curriculum file is read by training.slice_spec.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from league.config import GAMES_MAX, STEPS_MAX, Config, shipped_config_dir
from league.config_tree import check_file_name, param, read_shipped_or, validate
from league.errors import ConfigError
from training.slice_spec import FileKind, check_overlay, file_name, item_config, parse_items

DEFAULT_FILE = "league-roles.yaml"
# The driver sets these for each slice and role; in a file they would be silently overridden.
DRIVER_KEYS = {("stage",), ("training", "steps"), ("training", "minutes"), ("training", "best_response_to")}
FILE = FileKind("league", "role", "roles", "roles")


MAIN = "main"  # the kind of the one role that does not restart (training.role_kinds.MainAgent)

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

    @property
    def main(self) -> RoleSpec:
        return next(r for r in self.roles if r.kind == MAIN)

    def share(self, role: RoleSpec) -> float:
        """The role's share of the whole, normalized."""
        return role.share / sum(r.share for r in self.roles)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _check_overlay(overlay: dict, source: str, where: str) -> None:
    check_overlay(overlay, source, where, DRIVER_KEYS | {("game", "team_size")},
                  lambda _: "is set by the league roles driver (the file's 'stage', --minutes, and each role's kind); "
                            "leave it out.")


def parse_roles(data: Any, source: str, name: str | None = None) -> RolesSpec:
    """Validate a roles mapping (as read from YAML) and build it; `name` overrides its name."""
    validate(RolesSpec, data, source)
    data = dict(data)
    where_name = source if name is None else "the league name"
    spec_name = file_name(data, FILE, source, name)
    _check_overlay(data.get("config", {}), source, "config")
    roles = parse_items(RoleSpec, data.get("roles"), FILE, source)
    for i, role in enumerate(roles):
        role.share, role.reset_win_rate = float(role.share), float(role.reset_win_rate)
        _check_overlay(role.config, source, f"roles[{i}].config")
    mains = [r for r in roles if r.kind == MAIN]
    if len(mains) != 1:
        raise ConfigError(f"{source}: key 'roles' must hold exactly one role of kind main (it has {len(mains)}).")
    spec = RolesSpec(name=spec_name, stage=data.get("stage", "1v1"),
                     slice_minutes=float(data.get("slice_minutes", 5.0)), config=data.get("config", {}), roles=roles)
    for i, role in enumerate(roles):
        check_file_name(f"{spec.name}-{role.name}-r99", where_name, f"roles[{i}] run name")  # its longest form
    return spec


def load_roles(path: Path | None = None, name: str | None = None) -> tuple[RolesSpec, str]:
    """Read and validate a roles file (default: the shipped configs/league-roles.yaml); (spec, source)."""
    data, source = read_shipped_or(path, shipped_config_dir(), DEFAULT_FILE)
    return parse_roles(data, source, name), source


def role_config(spec: RolesSpec, role: RoleSpec, *, user_file: Path | None = None, home_file: Path | None = None,
                overrides: dict[str, Any] | None = None, sets: list[str] | None = None) -> Config:
    """The full config of `role`, loaded once per command: the usual layers, the file's and the role's overlays,
    then `overrides` (flags) and `--set`s. Each slice's budget, seed and opponents are the driver's."""
    return item_config(spec.stage, [spec.config, role.config], user_file=user_file, home_file=home_file,
                       overrides=overrides, sets=sets)
