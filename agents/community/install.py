"""`league bot add`: a community bot from the user's botpack folder, registered as a league member.

Nothing from the folder is executed or unpickled: the weights file is read as tensors only
(agents.community.tensors), checked by the kind's adapter against the network it builds (names,
shapes, dtypes, finite values), and saved as safetensors in the league home beside a manifest:

    <home>/community/<name>-<sha12>.safetensors   the tensors, as the adapter names them
    <home>/community/<name>-<sha12>.json          the manifest (also the agent's config)

The manifest records the kind and adapter, the source file and its sha256, the licence text
found in the folder, the tick skip and team sizes, and what the adapter does not reproduce.
The agent row and the files succeed together or not at all, as `league import` does.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load, save

from agents.action_spaces import SPACES
from agents.community.bots import KINDS, BotKind, CommunityPolicy
from agents.community.tensors import (
    MAX_FILE_BYTES,
    CommunityFileError,
    read_weights_file,
)
from league.errors import LeagueError, quoted
from league.files import all_or_nothing, not_a_file, printable, read_regular, write_file_atomic
from league.home import LeagueHome
from league.names import check_name
from league.registry import Agent, Registry

COMMUNITY_KIND = "community"  # the registry's kind of every community bot
COMMUNITY_DIR = "community"  # where their weights and manifests live in the league home
MANIFEST_VERSION = 1
LICENCE_WORDS = ("license", "licence", "copying")  # a file whose name holds one is a licence text
MAX_LICENCE_BYTES = 256 * 1024
SEARCH_DEPTH = 2  # how deep under FOLDER the weights file may be (the botpack nests Necto/Necto/)


def bot_kind(kind: str) -> BotKind:
    if kind not in KINDS:
        raise LeagueError(f"Unknown bot kind {quoted(kind)}; expected one of {', '.join(KINDS)} "
                          "(league bot list).")
    return KINDS[kind]


def find_weights(kind: BotKind, folder: Path) -> Path:
    """The kind's weights file in `folder` or up to SEARCH_DEPTH folders below it (one sentence if none, or several)."""
    shown = printable(str(folder))
    if not folder.is_dir():
        raise LeagueError(f"{shown} is not a folder; give the bot's folder from the RLBot botpack.")
    found, level = [], [folder]
    for _ in range(SEARCH_DEPTH + 1):
        found += [p for d in level if os.path.lexists(p := d / kind.weights_file)]
        if found:
            break
        level = sorted(c for d in level for c in d.iterdir() if c.is_dir() and not c.is_symlink())
    if not found:
        raise LeagueError(f"No {kind.weights_file} in {shown}; the {kind.kind} bot's folder from the RLBot "
                          f"botpack holds it (league bot list says what each kind needs).")
    if len(found) > 1:
        raise LeagueError(f"{shown} holds {len(found)} copies of {kind.weights_file}; give the folder of one bot.")
    mode = found[0].lstat().st_mode  # a link is refused, not followed: only the bot's own files are read
    if not stat.S_ISREG(mode):
        raise not_a_file(found[0], mode, f"{kind.kind} weights file")
    return found[0]


def find_licence(weights: Path, folder: Path) -> tuple[str, str]:
    """(file name, text) of the nearest licence file from the weights' folder up to `folder`, the bot's own
    folder: never above it, where other files of the user's lie."""
    here = weights.parent
    while True:
        for path in sorted(here.iterdir()):
            if any(w in path.name.lower() for w in LICENCE_WORDS) and path.is_file() and not path.is_symlink():
                text = read_regular(path, MAX_LICENCE_BYTES, "licence file").decode("utf-8", errors="replace")
                return str(path.relative_to(folder.parent)), text
        if here == folder or here.parent == here:
            return "", ""
        here = here.parent


def add_bot(home: LeagueHome, registry: Registry, kind_name: str, folder: Path, name: str | None = None) -> Agent:
    """Read, check and register the bot of `kind_name` whose botpack folder is `folder` (under `name`, default
    the kind's; an empty name is refused like any other bad one)."""
    kind = bot_kind(kind_name)
    name = check_name(kind.kind if name is None else name)
    folder = Path(folder)
    source = find_weights(kind, folder)
    raw = read_weights_file(source)  # read once: what is hashed is what is parsed
    tensors = kind.read_weights(source, raw)
    adapter = kind.adapter().from_tensors(tensors)  # refuses a network that is not the kind's, in one sentence
    licence_file, licence_text = find_licence(source, folder)
    weights = save({k: v.detach().contiguous() for k, v in tensors.items()},
                   metadata={"format": "rl-league community bot", "kind": kind.kind})
    sha = hashlib.sha256(weights).hexdigest()
    manifest = {
        "community": {
            "manifest_version": MANIFEST_VERSION, "kind": kind.kind, "title": kind.title,
            "adapter": f"{type(adapter).__module__}.{type(adapter).__name__}",
            "source_file": source.name, "source_sha256": hashlib.sha256(raw).hexdigest(),
            "source_bytes": len(raw), "licence": kind.licence, "licence_file": licence_file,
            "licence_text": licence_text, "tick_skip": kind.tick_skip, "team_sizes": list(kind.team_sizes),
            "not_reproduced": list(kind.not_reproduced),
        }
    }
    stem = home.root / COMMUNITY_DIR / f"{name}-{sha[:12]}"
    with all_or_nothing(f"Cannot write the bot into {home.root / COMMUNITY_DIR}") as written, \
            registry.transaction():
        agent = registry.agent_store.add(
            name=name, kind=COMMUNITY_KIND, team_size=None,
            checkpoint_path=stem.with_suffix(".safetensors").relative_to(home.root).as_posix(),
            checkpoint_sha256=sha, config=manifest, notes=f"community bot {kind.kind}, from {printable(str(source))}")
        stem.parent.mkdir(parents=True, exist_ok=True)
        for path, data in ((stem.with_suffix(".safetensors"), weights),
                           (stem.with_suffix(".json"), json.dumps(manifest, indent=2, sort_keys=True).encode())):
            write_file_atomic(path, data, exclusive=True)
            written.append(path)
        load_community(agent, stem.with_suffix(".safetensors"))  # what is registered is what plays
    return agent


def manifest_of(agent: Agent) -> dict[str, Any]:
    """The stored manifest of community bot `agent`, every key as stored (one sentence when it is not usable)."""
    if agent.community is None or agent.community.kind not in KINDS:
        raise LeagueError(f"Agent {agent.name!r} is a community bot without a usable manifest; add it again with "
                          "`league bot add`.")
    return agent.community.raw


def community_tensors(agent: Agent, path: Path) -> tuple[str, dict[str, torch.Tensor]]:
    """(its kind, its tensors) of the community bot `agent` from its weights file `path`, checked
    against the sha256 the registry holds."""
    kind = manifest_of(agent)["kind"]
    data = read_regular(path, MAX_FILE_BYTES, f"{agent.name} weights file")
    if hashlib.sha256(data).hexdigest() != agent.checkpoint_sha256:
        raise CommunityFileError(f"{printable(str(path))} does not match the sha256 the league recorded for "
                                 f"{agent.name!r}; it was changed since `league bot add`.")
    return kind, load(data)


def community_policy(kind: str, tensors: dict, name: str) -> CommunityPolicy:
    """A community bot of `kind` with these tensors (torch tensors or numpy arrays) as a Policy."""
    tensors = {k: torch.as_tensor(v) for k, v in tensors.items()}
    return CommunityPolicy(KINDS[kind].adapter().from_tensors(tensors), name, SPACES[kind])


def load_community(agent: Agent, path: Path) -> CommunityPolicy:
    """The community bot `agent` as a Policy from its weights file `path` (checked, as community_tensors)."""
    kind, tensors = community_tensors(agent, path)
    return community_policy(kind, tensors, agent.name)
