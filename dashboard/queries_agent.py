"""One agent's page: what `league show NAME` prints about it (its record, where its weights come from and
under which licence), and the league's lineage graph with each agent's teacher, cached as dashboard/data.py
caches its queries."""

from __future__ import annotations

import networkx as nx
import sqlite_utils
import streamlit as st

from dashboard import data, queries
from league.profile import agent_profile
from league.provenance import community_sources, distilled_from
from league.registry import Agent, Registry

NONE = "\u2014"  # a dash for an empty fact


def _community(agent: Agent) -> list[tuple[str, str]]:
    """A community bot's facts: the bot, its source file and hash, its licence."""
    m = (agent.config or {}).get("community") if agent.kind == "community" else None
    if not isinstance(m, dict):
        return []
    return [("bot", str(m.get("title", m.get("kind")))),
            ("source", f"{m.get('source_file')} (sha256 {m.get('source_sha256')})"),
            ("licence", f"{m.get('licence')} ({m.get('licence_file') or 'no licence file found in the folder'})")]


def _derived(registry: Registry, agent: Agent) -> list[tuple[str, str]]:
    """The teacher an agent was distilled from, and each community bot its weights derive from with its licence."""
    facts = []
    record = distilled_from(agent)
    if record is not None:
        facts.append(("distilled from", f"{record['teacher']} ({record.get('kind')}, sha256 {record.get('sha256')})"))
    sources = community_sources(registry, agent) if agent.kind != "community" else []
    facts += [("derived from", f"{s.get('bot')}: {s.get('source_file')} (sha256 {s.get('source_sha256')})")
              for s in sources]
    return facts + [("licence", f"{s.get('licence')} (from {s.get('bot')})") for s in sources]


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
            *_community(a), *_derived(registry, a)]


@st.cache_data(ttl=data.TTL_SECONDS, show_spinner=False)
def facts(root: str, name: str) -> list[tuple[str, str]] | None:
    return data.open_league(root).run(agent_facts, name)


@st.cache_data(ttl=data.TTL_SECONDS, show_spinner=False)
def lineage(root: str) -> nx.DiGraph:
    """league.lineage's graph of every agent (parent -> child; a node's `teacher`: whom it was distilled from)."""
    return data.open_league(root).run(queries.lineage_graph)
