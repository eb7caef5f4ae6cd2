"""An rl-league agent as an RLBot v5 bot: `python bot.py` (RLBot starts it from bot.toml).

The policy runs in league_runner.LeaguePolicyRunner (numpy only); this file connects it to
RLBot's Bot class.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

# One thread for numpy's maths: a single observation is tiny, and the game needs the cores.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from rlbot import flat  # noqa: E402
from rlbot.managers import Bot  # noqa: E402

from league_runner import HERE, MANIFEST, LeaguePolicyRunner  # noqa: E402


def default_agent_id(folder: Path = HERE) -> str:
    return json.loads((folder / MANIFEST).read_text(encoding="utf-8"))["agent_id"]


class LeagueBot(Bot):
    runner: LeaguePolicyRunner | None = None

    def initialize(self) -> None:
        self.runner = LeaguePolicyRunner(HERE)
        self.runner.prepare(self.field_info)
        self.logger.info("rl-league agent %s ready (tick skip %d, %s)", self.runner.manifest["agent"],
                         self.runner.tick_skip, "argmax" if self.runner.deterministic else "sampled")

    def get_output(self, packet: flat.GamePacket) -> flat.ControllerState:
        if self.runner is None:
            return flat.ControllerState()
        return self.runner.act(packet, self.field_info, self.index)


if __name__ == "__main__":
    LeagueBot(default_agent_id()).run(wants_match_communications=False, wants_ball_predictions=False)
