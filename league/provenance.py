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

from league.agent_facts import Distilled, Source
from league.registry import Agent, Registry


def teacher_record(registry: Registry, teacher: str) -> Distilled:
    """What a student's snapshots store about `teacher` (as `distilled_from`: Distilled.to_dict()): its name,
    kind and hash, and the community bots its weights come from (itself, if it is one)."""
    agent = registry.agent_store.get(teacher)
    return Distilled(agent.name, agent.kind, agent.checkpoint_sha256 or "", tuple(community_sources(registry, agent)))


def community_sources(registry: Registry, agent: Agent) -> list[Source]:
    """The community bots `agent`'s weights derive from: itself if it is one, the sources of the
    teachers it and its ancestors were distilled from; one entry per source file."""
    found: dict[str, Source] = {}
    seen: set[int] = set()
    node: Agent | None = agent
    while node is not None and node.id not in seen:
        seen.add(node.id)
        if node.community is not None:
            found.setdefault(node.community.source_sha256, node.community.source(node.name))
        for source in node.distilled_from.sources if node.distilled_from is not None else ():
            found.setdefault(source.source_sha256, source)
        node = registry.agent_store.by_id(node.parent_id) if node.parent_id is not None else None
    return list(found.values())


def provenance_facts(registry: Registry, agent: Agent) -> list[tuple[str, str]]:
    """Where an agent's weights come from, as (label, text) rows for `league show` and the dashboard's agent page:
    a community bot's source, licence and adapter; the teacher a student was distilled from; each community bot
    its weights derive from, with its licence."""
    m = agent.community
    if m is not None:
        return [("bot", m.title), ("source", f"{m.source_file} (sha256 {m.source_sha256}, {m.source_bytes:,} bytes)"),
                ("licence", f"{m.licence} ({m.licence_file or 'no licence file found in the folder'})"),
                ("adapter", f"{m.adapter}; tick skip {m.tick_skip}"),
                *(("not reproduced", item) for item in m.not_reproduced)]
    rows = []
    record = agent.distilled_from
    if record is not None:
        rows.append(("distilled from", f"{record.teacher} ({record.kind}, sha256 {record.sha256})"))
    for source in community_sources(registry, agent):
        rows.append(("derived from", f"{source.bot}: {source.source_file} (sha256 {source.source_sha256}); "
                                     f"licence {source.licence}"))
    return rows


def licence_notice(sources: list[Source]) -> str:
    """One paragraph naming each community bot the weights derive from, its source hash and licence."""
    parts = [f"{s.bot} ({s.source_file}, sha256 {s.source_sha256}): {s.licence}" for s in sources]
    return ("These weights are derived from community bots' weights, whose licences apply to them: "
            + "; ".join(parts) + ".")
