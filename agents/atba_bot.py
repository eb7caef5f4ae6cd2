"""`atba`: "always towards the ball", the classic first bot, from the observation alone.

Each car steers straight at where the ball is now, boosting when far from it and facing it
(the same steering, boosting and powersliding as `rule`). It never aims, never jumps and never
defends, so it pushes the ball wherever it happens to meet it, its own goal included: the
bottom rung above `random` of the baseline ladder (docs/learning.md, "Baseline ladder").
Turtled, it presses jump now and then so the game's auto-flip rights it.
"""

from __future__ import annotations

import numpy as np

from agents.rule_bot import Controls, RuleBot, drive, read_view, state_noise


class AtbaBot(RuleBot):
    """The scripted baseline `atba`: drives (and boosts) at the ball. Deterministic, like `rule`."""

    name = "atba"

    def controls(self, obs: np.ndarray) -> Controls:
        view = read_view(obs)
        p = self.params
        c = Controls.idle(len(obs))
        drive(view, view.ball_pos[:, :2], p, c)
        turtled = ~view.on_ground & (view.up[:, 2] < p.turtle_up_z) & (view.pos[:, 2] < p.turtle_max_z)
        c.jump[:] = turtled & (state_noise(view) < p.turtle_press_chance)
        c.boost[:] &= view.on_ground
        return c
