"""The kinds of league role, one class each (as DI-engine's player classes): what a role trains against in
a slice, where a new run of it starts, and whether it is checked after a slice and against whom.

    kind = kind_of(role)                          # MainAgent(), MainExploiter() or LeagueExploiter()
    kind.opponents(league, registry, role)        # Opponents(target=..., pool=..., mix=...)
    kind.check_targets(league, registry, role)    # [] for the main agent

A new kind of role is one class here, listed in KINDS, and its name in roles_spec.RoleSpec.kind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from league.config import OpponentMix
from league.names import split_version
from league.registry import Registry
from training.roles_spec import MAIN, RoleSpec, RolesSpec

LEAGUE_EXPLOITER_TARGETS = 4  # a league exploiter's check plays the main agent and up to three other members
PFSP_ONLY = OpponentMix(latest=0.0, past=0.0, pfsp=1.0, rule=0.0, random=0.0, community=0.0)


@dataclass(frozen=True)
class Opponents:
    """What a role's slice trains against: a best-response target (every env plays it), a pool that joins the
    run's own versions as past and PFSP candidates (read at every draw), a mix in place of the config's."""

    target: str | None = None
    pool: Callable[[], list[str]] | None = None
    mix: OpponentMix | None = None


class League:
    """The league's members as its roles see them, read from the registry (a role's own connection)."""

    def __init__(self, spec: RolesSpec, team_size: int):
        self.spec, self.team_size = spec, team_size

    def run_name(self, role: RoleSpec, restart: int = 1) -> str:
        """The role's run: `<league>-<role>` for the main agent, `<league>-<role>-r<restart>` for a restarting kind."""
        name = f"{self.spec.name}-{role.name}"
        return f"{name}-r{restart}" if kind_of(role).restarts else name

    def main_latest(self, registry: Registry) -> str | None:
        return registry.agent_store.latest_version(self.run_name(self.spec.main))

    def exploiter_pool(self, registry: Registry) -> list[str]:
        """Every snapshot of every run of a role whose snapshots join the main agent's pool (each restart's)."""
        prefixes = [f"{self.spec.name}-{r.name}-r" for r in self.spec.roles if kind_of(r).in_main_pool]
        return [a.name for a in registry.agent_store.all(self.team_size)
                if (split := split_version(a.name)) and any(split[0].startswith(p) for p in prefixes)]

    def members(self, registry: Registry, role: RoleSpec) -> list[str]:
        """The stage's active trained members but the role's own runs, newest first (a league exploiter's pool)."""
        own = f"{self.spec.name}-{role.name}-r"
        return [a.name for a in reversed(registry.agent_store.all(self.team_size))
                if a.kind in ("mlp", "lstm") and a.team_size == self.team_size and not a.name.startswith(own)
                and a.status != "retired" and not a.name.startswith("probe-")]


class RoleKind:
    """A kind of role. The defaults are an exploiter's: runs that restart (`<league>-<role>-r<k>`), snapshots
    that join the main agent's pool, a first slice once the main agent has a snapshot, a check after each slice."""

    name: ClassVar[str]
    restarts: ClassVar[bool] = True
    in_main_pool: ClassVar[bool] = True
    waits_for_main: ClassVar[bool] = True

    def opponents(self, league: League, registry: Registry, role: RoleSpec) -> Opponents:
        raise NotImplementedError

    def start_from(self, league: League, registry: Registry, role: RoleSpec) -> str | None:
        """A new run's first weights: the main agent's latest snapshot (restart_from: main), else fresh."""
        return league.main_latest(registry) if role.restart_from == "main" else None

    def check_targets(self, league: League, registry: Registry, role: RoleSpec) -> list[str]:
        """Whom the role's latest snapshot plays after a slice (none: no check)."""
        return []


class MainAgent(RoleKind):
    """Today's learner and opponent mix; every exploiter's snapshots join its past and PFSP candidates."""

    name = MAIN
    restarts = in_main_pool = waits_for_main = False

    def opponents(self, league: League, registry: Registry, role: RoleSpec) -> Opponents:
        return Opponents(pool=lambda: league.exploiter_pool(registry))

    def start_from(self, league: League, registry: Registry, role: RoleSpec) -> str | None:
        return None


class MainExploiter(RoleKind):
    """A best response to the main agent's latest snapshot (taken again at each slice)."""

    name = "main_exploiter"

    def opponents(self, league: League, registry: Registry, role: RoleSpec) -> Opponents:
        return Opponents(target=league.main_latest(registry))

    def check_targets(self, league: League, registry: Registry, role: RoleSpec) -> list[str]:
        return [league.main_latest(registry)]


class LeagueExploiter(RoleKind):
    """PFSP over every active trained member of the stage."""

    name = "league_exploiter"

    def opponents(self, league: League, registry: Registry, role: RoleSpec) -> Opponents:
        return Opponents(pool=lambda: league.members(registry, role), mix=PFSP_ONLY)

    def check_targets(self, league: League, registry: Registry, role: RoleSpec) -> list[str]:
        main_run = league.run_name(league.spec.main)
        others = [m for m in league.members(registry, role) if not m.startswith(f"{main_run}-v")]
        return [league.main_latest(registry), *others[: LEAGUE_EXPLOITER_TARGETS - 1]]


KINDS: dict[str, RoleKind] = {kind.name: kind for kind in (MainAgent(), MainExploiter(), LeagueExploiter())}


def kind_of(role: RoleSpec) -> RoleKind:
    """The class of `role`'s kind (validated with the roles file)."""
    return KINDS[role.kind]
