"""The lineage graph drawn so a long run stays readable: a run's middle versions (one parent, one child, none
shown on purpose) fold into one edge that says how many it holds, and each run distilled from a teacher starts
from that teacher with a dashed edge."""

from __future__ import annotations

import networkx as nx
import pandas as pd

from dashboard.queries import tree_layout

FOLD_FROM = 3  # fold a chain of at least this many middle versions


def fold_chains(graph: nx.DiGraph, keep: set[str], fold_from: int = FOLD_FROM) -> tuple[nx.DiGraph, dict]:
    """`graph` with each chain of at least `fold_from` middle versions (one parent, one child, not in `keep`)
    folded into one edge; (the folded graph, {(first, last): versions folded})."""
    def middle(n: str) -> bool:
        return graph.in_degree(n) == 1 and graph.out_degree(n) == 1 and n not in keep

    folded = nx.DiGraph()
    folded.add_nodes_from((n, graph.nodes[n]) for n in graph.nodes if not middle(n))
    hidden: dict[tuple[str, str], int] = {}
    for start in list(folded.nodes):
        for child in graph.successors(start):
            chain = [child]
            while middle(chain[-1]):
                chain.append(next(graph.successors(chain[-1])))
            inner, end = chain[:-1], chain[-1]
            if len(inner) >= fold_from:
                folded.add_edge(start, end)
                hidden[(start, end)] = len(inner)
            else:
                folded.add_nodes_from((n, graph.nodes[n]) for n in inner)
                nx.add_path(folded, [start, *chain])
    return folded, hidden


def teacher_edges(graph: nx.DiGraph) -> list[tuple[str, str]]:
    """(teacher, student) for each agent distilled from a teacher in the graph whose parent was not (a run's
    first distilled version)."""
    edges = []
    for n, teacher in graph.nodes(data="teacher"):
        parents = list(graph.predecessors(n))
        if teacher in graph and teacher != n and not any(graph.nodes[p].get("teacher") == teacher for p in parents):
            edges.append((teacher, n))
    return edges


def layout(graph: nx.DiGraph, keep: set[str], fold: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Nodes (name, x = generation, y = row) and edges (parent, child, x, y, x2, y2, folded, kind: "parent"
    or "teacher") of the graph, its long chains folded when `fold`. A teacher sits one generation before its
    students, as if their parent, so a distilled run reads on from it."""
    shown, hidden = fold_chains(graph, keep) if fold else (graph.copy(), {})
    taught = teacher_edges(graph)
    placed = shown.copy()
    for t, s in taught:  # never a cycle: a teacher that descends from its student stays where it is
        if s in shown and t in shown and placed.in_degree(s) == 0 and not nx.has_path(placed, s, t):
            placed.add_edge(t, s)
    pos = tree_layout(placed)
    nodes = pd.DataFrame([{"name": n, "x": pos[n][0], "y": pos[n][1]} for n in shown.nodes], columns=["name", "x", "y"])
    rows = [(a, b, hidden.get((a, b), 0), "parent") for a, b in shown.edges]
    rows += [(t, s, 0, "teacher") for t, s in taught if s in shown and t in shown]
    edges = pd.DataFrame([{"parent": a, "child": b, "x": pos[a][0], "y": pos[a][1], "x2": pos[b][0],
                           "y2": pos[b][1], "folded": k, "kind": kind} for a, b, k, kind in rows],
                         columns=["parent", "child", "x", "y", "x2", "y2", "folded", "kind"])
    return nodes, edges
