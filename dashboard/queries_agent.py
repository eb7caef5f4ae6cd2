"""One agent's page: what `league show NAME` prints about it (its record, where its weights come from and
under which licence), and the league's lineage graph with each agent's teacher, cached as dashboard/data.py
caches its queries."""

from __future__ import annotations

import networkx as nx
import sqlite_utils
import streamlit as st

from dashboard import data, queries
from league.profile import agent_profile
from league.provenance import provenance_facts
from league.registry import Agent, Registry

NONE = "\u2014"  # a dash for an empty fact


def agent_facts(db: sqlite_utils.Database, name: str) -> list[tuple[str, str]] | None:
    """(fact, value) rows as `league show NAME` prints them, None when there is no such agent."""
    registry = Registry(db)
    if registry.agent_store.find(name) is None:
        return None
    profile = agent_profile(registry, name)
    a = profile.agent
    return [("kind", a.kind), ("stage", a.stage), ("status", a.status), ("parent", profile.parent or NONE),
            ("children", ", ".join(profile.children) or NONE), ("created", a.created[:16].replace("T", " ")),
            ("steps trained", f"{a.steps_trained:,}"), ("checkpoint", a.checkpoint_path or NONE),
            ("sha256", a.checkpoint_sha256 or NONE), ("notes", a.notes or NONE),
            *provenance_facts(registry, a)]


@st.cache_data(ttl=data.TTL_SECONDS, show_spinner=False)
def facts(root: str, name: str) -> list[tuple[str, str]] | None:
    return data.open_league(root).run(agent_facts, name)


@st.cache_data(ttl=data.TTL_SECONDS, show_spinner=False)
def lineage(root: str) -> nx.DiGraph:
    """league.lineage's graph of every agent (parent -> child; a node's `teacher`: whom it was distilled from)."""
    return data.open_league(root).run(queries.lineage_graph)
