"""What an SPRT tests (`SprtParams`) and its Wald bounds: the parameters of league/sprt.py.

Kept apart from the arithmetic (numpy, scipy) so that reading a config, which checks an SPRT
text such as `promotion.sprt` when it is loaded, stays light. `league.sprt` re-exports these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from league.errors import LeagueError

Model = Literal["normalized", "logistic"]
MODELS: tuple[str, ...] = ("normalized", "logistic")
# The largest |elo0|, |elo1| accepted: beyond these the constrained MLE of a t-value is not
# reliably found (the fixed point's secular equation stops having a root) and an SPRT between
# agents that far apart decides in a handful of games anyway.
MAX_ELO = {"normalized": 200.0, "logistic": 600.0}


@dataclass(frozen=True)
class SprtParams:
    """What an SPRT tests: H0 "A - B <= elo0" against H1 "A - B >= elo1", Elo in `model` units,
    with false-positive rate `alpha` (accepting H1 at elo0) and false-negative rate `beta`."""

    elo0: float = 0.0
    elo1: float = 30.0
    alpha: float = 0.05
    beta: float = 0.05
    model: Model = "normalized"

    def __post_init__(self) -> None:
        for key in ("elo0", "elo1", "alpha", "beta"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise LeagueError(f"SPRT {key} must be a finite number, not {value!r}.")
            object.__setattr__(self, key, float(value))  # ints welcome; stored (and shown) as floats
        if self.model not in MODELS:
            raise LeagueError(f"SPRT model must be one of {', '.join(MODELS)}, not {self.model!r}.")
        for key in ("alpha", "beta"):
            value = getattr(self, key)
            if not 0.0 < value < 0.5:
                raise LeagueError(f"SPRT {key} must lie strictly between 0 and 0.5, not {value!r}.")
        if not self.elo0 < self.elo1:
            raise LeagueError(f"SPRT elo0 must be less than elo1 (got elo0={self.elo0!r}, elo1={self.elo1!r}).")
        limit = MAX_ELO[self.model]
        for key in ("elo0", "elo1"):
            value = getattr(self, key)
            if abs(value) > limit:
                raise LeagueError(f"SPRT {key} must lie within +-{limit:g} {self.model} Elo, not {value!r}.")

    @classmethod
    def parse(cls, text: str) -> SprtParams:
        """Parameters from a flag such as "elo0=0,elo1=30,alpha=0.05,beta=0.05,model=normalized";
        keys left out keep their defaults."""
        numbers = ("elo0", "elo1", "alpha", "beta")
        values: dict[str, object] = {}
        for item in (part.strip() for part in text.split(",")):
            if not item:
                continue
            key, sep, raw = (s.strip() for s in item.partition("="))
            if not sep:
                raise LeagueError(f"SPRT option {item!r} is not of the form key=value.")
            if key not in (*numbers, "model"):
                raise LeagueError(f"Unknown SPRT option {key!r}; expected elo0, elo1, alpha, beta or model.")
            if key in values:
                raise LeagueError(f"SPRT option {key!r} is given twice.")
            if key == "model":
                values[key] = raw
                continue
            try:
                number = float(raw)
            except ValueError:
                raise LeagueError(f"SPRT option {key!r} must be a number, not {raw!r}.") from None
            values[key] = number
        return cls(**values)  # type: ignore[arg-type]

    @property
    def bounds(self) -> tuple[float, float]:
        return sprt_bounds(self.alpha, self.beta)


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's LLR bounds: (ln(beta / (1 - alpha)), ln((1 - beta) / alpha))."""
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)
