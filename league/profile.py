"""One agent as `league show` presents it: its record, its place in the lineage, its ratings, its exports
its exploitability probes, its evaluation panel tests and the title round robin that crowned it (what it was
measured against)."""

from __future__ import annotations

from dataclasses import dataclass

from league.config import STAGES, team_size_of
from league.lineage import lineage_of
from league.probes import ProbeResult
from league.registry import Agent, ExportRecord, Rating, Registry
from league.results import Record
from league.standings import read_title_matchups
from league.stores.panels import PanelTest
from league.stores.promotions import Promotion
from league.stores.tournaments import round_robin_name


@dataclass(frozen=True)
class AgentProfile:
    agent: Agent
    parent: str | None
    children: list[str]
    ratings: dict[str, Rating]  # by stage, only the stages it has rated games in
    exports: list[ExportRecord]  # bot folders made from it, oldest first
    probes: list[ProbeResult]  # its exploitability probes (league probe), oldest first
    panel_tests: list[PanelTest]  # its games against the evaluation panel during training, oldest first
    crowned: Promotion | None = None  # the latest title round robin that gave it the title (arena.crown)
    title_records: dict[str, Record] | None = None  # its record against each entrant of that round robin
    title_name: str = ""  # that round robin, as said ("round robin 158 (the playoff of round robin 157)")


def agent_profile(registry: Registry, name: str) -> AgentProfile:
    """The profile of agent `name` (an unknown name fails with the closest names)."""
    agent = registry.agent_store.get(name)
    parent = registry.agent_store.by_id(agent.parent_id).name if agent.parent_id else None
    children = sorted(lineage_of(registry).successors(name))
    ratings = {stage: r for stage in STAGES if (r := registry.game_store.rating(name, team_size_of(stage))).games}
    return AgentProfile(agent, parent, children, ratings, registry.export_store.of(name),
                        registry.probe_store.of(name), registry.panel_store.of(name), *crowning_of(registry, agent))


def crowning_of(registry: Registry, agent: Agent) -> tuple[Promotion | None, dict[str, Record] | None, str]:
    """The latest title round robin that gave `agent` the title (arena.crown), its record against each entrant of
    it (a playoff's with its round robin's games added, as the playoff decided: read_title_matchups), and the round
    robin as said (`title_name`); (None, None, "") when none did."""
    if agent.team_size is None:
        return None, None, ""
    crowned = next((p for p in reversed(registry.promotion_store.for_stage(agent.team_size))
                    if p.agent == agent.name and p.tournament_id is not None), None)
    if crowned is None:
        return None, None, ""
    t = registry.tournament_store.get(crowned.tournament_id)
    matchups = read_title_matchups(registry.db, t)
    return (crowned, {b: r for (a, b), r in matchups.items() if a == agent.name},
            round_robin_name(t.id, t.playoff_of))
