"""Lineage: the graph of agent versions (parent -> child), built from the registry."""

from __future__ import annotations

import networkx as nx

from league.registry import Agent, Registry


def build_lineage(agents: list[Agent]) -> nx.DiGraph:
    """A DiGraph with one node per agent (keyed by name, agent fields as attributes)."""
    graph = nx.DiGraph()
    by_id = {a.id: a for a in agents}
    for a in agents:
        teacher = a.distilled_from.teacher if a.distilled_from is not None else None
        graph.add_node(a.name, id=a.id, kind=a.kind, status=a.status, team_size=a.team_size,
                       steps_trained=a.steps_trained, created=a.created, teacher=teacher)
    for a in agents:
        if a.parent_id is not None and a.parent_id in by_id:
            graph.add_edge(by_id[a.parent_id].name, a.name)
    return graph


def lineage_of(registry: Registry) -> nx.DiGraph:
    return build_lineage(registry.agent_store.all(include_retired=True))


def ancestors(graph: nx.DiGraph, name: str) -> set[str]:
    return nx.ancestors(graph, name)


def descendants(graph: nx.DiGraph, name: str) -> set[str]:
    return nx.descendants(graph, name)


def line_to(graph: nx.DiGraph, name: str) -> list[str]:
    """The versions from the first ancestor (a root) down to `name`, in order."""
    line = [name]
    while True:
        parents = list(graph.predecessors(line[-1]))
        if not parents:
            return list(reversed(line))
        line.append(parents[0])  # each agent has at most one parent


def roots(graph: nx.DiGraph) -> list[str]:
    return [n for n in graph.nodes if graph.in_degree(n) == 0]
