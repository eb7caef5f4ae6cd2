"""Where an agent's weights come from: the teacher it was distilled from, and every community bot
whose weights it derives from, through its teachers and its parents.

An agent distilled from a community bot is derived from that bot's weights, so the bot's source
file, its sha256 and its licence travel with it: each snapshot of a distilling run stores a
`distilled_from` record in its config (`teacher_record`, made when the snapshot is registered),
and `community_sources` gathers them up the line of parents (a run --from or --resume of a
distilled agent derives from the same bots), for `league show`, `league lineage` and `league
export`.
"""

from __future__ import annotations

from typing import Any

from league.registry import Agent, Registry

SOURCE_FIELDS = ("title", "source_file", "source_sha256", "licence", "licence_file")


def distilled_from(agent: Agent) -> dict[str, Any] | None:
    """The `distilled_from` record of an agent's config, or None."""
    record = (agent.config or {}).get("distilled_from")
    return record if isinstance(record, dict) and isinstance(record.get("teacher"), str) else None


def teacher_record(registry: Registry, teacher: str) -> dict[str, Any]:
    """What a student's snapshots store about `teacher`: its name, kind and hash, and the community
    bots its weights come from (itself, if it is one)."""
    agent = registry.agent_store.get(teacher)
    sources = community_sources(registry, agent)
    return {"teacher": agent.name, "kind": agent.kind, "sha256": agent.checkpoint_sha256, "sources": sources}


def community_sources(registry: Registry, agent: Agent) -> list[dict[str, Any]]:
    """The community bots `agent`'s weights derive from: itself if it is one, the sources of the
    teachers it and its ancestors were distilled from; one entry per source file."""
    found: dict[str, dict[str, Any]] = {}
    seen: set[int] = set()
    node: Agent | None = agent
    while node is not None and node.id not in seen:
        seen.add(node.id)
        manifest = (node.config or {}).get("community") if node.kind == "community" else None
        if isinstance(manifest, dict):
            found.setdefault(str(manifest.get("source_sha256")),
                             {"bot": node.name, **{k: manifest.get(k) for k in SOURCE_FIELDS}})
        record = distilled_from(node)
        for source in (record or {}).get("sources", []):
            if isinstance(source, dict):
                found.setdefault(str(source.get("source_sha256")), source)
        node = registry.agent_store.by_id(node.parent_id) if node.parent_id is not None else None
    return list(found.values())


def licence_notice(sources: list[dict[str, Any]]) -> str:
    """One paragraph naming each community bot the weights derive from, its source hash and licence."""
    parts = [f"{s.get('bot')} ({s.get('source_file')}, sha256 {s.get('source_sha256')}): {s.get('licence')}"
             for s in sources]
    return ("These weights are derived from community bots' weights, whose licences apply to them: "
            + "; ".join(parts) + ".")
