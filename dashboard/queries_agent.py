"""One agent's page: what `league show NAME` prints about it (its record, where its weights come from and
under which licence), read through the open league's registry and cached as dashboard/data.py caches its
queries."""

from __future__ import annotations

from dashboard.data import cached_query
from league.profile import agent_profile
from league.provenance import provenance_facts
from league.registry import Registry

NONE = "\u2014"  # a dash for an empty fact


@cached_query
def agent_facts(reg: Registry, name: str) -> list[tuple[str, str]] | None:
    """(fact, value) rows as `league show NAME` prints them, None when there is no such agent."""
    if reg.agent_store.find(name) is None:
        return None
    profile = agent_profile(reg, name)
    a = profile.agent
    return [("kind", a.kind), ("stage", a.stage), ("status", a.status), ("parent", profile.parent or NONE),
            ("children", ", ".join(profile.children) or NONE), ("created", a.created[:16].replace("T", " ")),
            ("steps trained", f"{a.steps_trained:,}"), ("checkpoint", a.checkpoint_path or NONE),
            ("sha256", a.checkpoint_sha256 or NONE), ("notes", a.notes or NONE),
            *provenance_facts(reg, a)]
