"""What an agent's stored config says it is, typed and parsed once (the fields of league.stores.agents.Agent):
the manifest of a community bot, the teacher an agent was distilled from with the community bots behind it,
and the temperature a network samples at.

Stored data that does not have the documented form reads as absent (a page or a `league show` still lists
the agent); a temperature out of range is one sentence, since it decides how the agent plays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from league.errors import LeagueError

TEMPERATURE_RANGE = (0.05, 10.0)  # ppo.temperature's range (league.config)


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    return "" if value is None else str(value)


@dataclass(frozen=True)
class Source:
    """A community bot's weights file that an agent's weights derive from, and its licence."""

    bot: str
    title: str = ""
    source_file: str = ""
    source_sha256: str = ""
    licence: str = ""
    licence_file: str = ""

    @classmethod
    def parse(cls, data: Any) -> Source | None:
        if not isinstance(data, dict):
            return None
        return cls(_text(data, "bot"), _text(data, "title"), _text(data, "source_file"),
                   _text(data, "source_sha256"), _text(data, "licence"), _text(data, "licence_file"))

    def to_dict(self) -> dict[str, str]:
        return {"bot": self.bot, "title": self.title, "source_file": self.source_file,
                "source_sha256": self.source_sha256, "licence": self.licence, "licence_file": self.licence_file}


@dataclass(frozen=True)
class Distilled:
    """The `distilled_from` record every snapshot of a distilling run stores: its teacher (name, kind, hash)
    and the community bots the teacher's weights come from."""

    teacher: str
    kind: str = ""
    sha256: str = ""
    sources: tuple[Source, ...] = ()

    @classmethod
    def parse(cls, data: Any) -> Distilled | None:
        if not isinstance(data, dict) or not isinstance(data.get("teacher"), str):
            return None
        sources = data.get("sources") if isinstance(data.get("sources"), list) else []
        return cls(data["teacher"], _text(data, "kind"), _text(data, "sha256"),
                   tuple(s for s in map(Source.parse, sources) if s is not None))

    def to_dict(self) -> dict[str, Any]:
        return {"teacher": self.teacher, "kind": self.kind, "sha256": self.sha256,
                "sources": [s.to_dict() for s in self.sources]}


@dataclass(frozen=True)
class Manifest:
    """A community bot's manifest (`league bot add`): which adapter plays it, from which file, under which licence."""

    kind: str
    title: str = ""
    team_sizes: tuple[int, ...] | None = None
    source_file: str = ""
    source_sha256: str = ""
    source_bytes: int = 0
    licence: str = ""
    licence_file: str = ""
    adapter: str = ""
    tick_skip: int | None = None
    not_reproduced: tuple[str, ...] = ()
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)  # every key, as stored

    @classmethod
    def parse(cls, data: Any) -> Manifest | None:
        if not isinstance(data, dict):
            return None
        kind = _text(data, "kind")
        sizes = data.get("team_sizes")
        sizes = tuple(n for n in sizes if isinstance(n, int)) if isinstance(sizes, list) else None
        size = data.get("source_bytes")
        tick = data.get("tick_skip")
        missing = data.get("not_reproduced") if isinstance(data.get("not_reproduced"), list) else []
        return cls(kind, _text(data, "title") or kind, sizes, _text(data, "source_file"),
                   _text(data, "source_sha256"), size if isinstance(size, int) else 0, _text(data, "licence"),
                   _text(data, "licence_file"), _text(data, "adapter"), tick if isinstance(tick, int) else None,
                   tuple(map(str, missing)), data)

    def source(self, bot: str) -> Source:
        """The bot's own weights as a source that agents derived from it carry."""
        return Source(bot, self.title, self.source_file, self.source_sha256, self.licence, self.licence_file)


def sampling_temperature(training_config: Any, whose: str) -> float:
    """The temperature a network sampled at in training: ppo.temperature in the training config its snapshot
    recorded (a distilled student's 0.5), 1 where it recorded none. `whose` begins the sentence of a bad value."""
    ppo = training_config.get("ppo") if isinstance(training_config, dict) else None
    value = ppo.get("temperature", 1.0) if isinstance(ppo, dict) else 1.0
    low, high = TEMPERATURE_RANGE
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise LeagueError(f"{whose} records ppo.temperature {str(value)[:40]!r}, not a number from {low:g} to "
                          f"{high:g}.")
    return float(value)
