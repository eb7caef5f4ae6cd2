"""The league home folder: where the database, checkpoints, replays and run logs live."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from league.errors import LeagueError

ENV_VAR = "LEAGUE_HOME"
DEFAULT_DIRNAME = "league-home"
DB_NAME = "league.db"


@dataclass(frozen=True)
class LeagueHome:
    root: Path

    @property
    def db_path(self) -> Path:
        return self.root / DB_NAME

    @property
    def config_path(self) -> Path:
        """The league's own config layer, written by `league init --config FILE`."""
        return self.root / "config.yaml"

    @property
    def checkpoints(self) -> Path:
        return self.root / "checkpoints"

    @property
    def replays(self) -> Path:
        return self.root / "replays"

    @property
    def runs(self) -> Path:
        return self.root / "runs"

    def exists(self) -> bool:
        return self.db_path.is_file()

    def create_dirs(self) -> None:
        for path in (self.root, self.checkpoints, self.replays, self.runs):
            path.mkdir(parents=True, exist_ok=True)

    def require(self) -> "LeagueHome":
        """Fail with a how-to when there is no league here yet."""
        if not self.exists():
            raise LeagueError(
                f"No league found at {self.root} (no {DB_NAME}); create one with `league init --home {self.root}`."
            )
        return self


def resolve_home(flag: str | Path | None, env: dict[str, str] | None = None, cwd: Path | None = None) -> LeagueHome:
    """The league home: the --home flag, else $LEAGUE_HOME, else ./league-home."""
    env = os.environ if env is None else env
    if flag:
        root = Path(flag)
    elif env.get(ENV_VAR):
        root = Path(env[ENV_VAR])
    else:
        root = (cwd or Path.cwd()) / DEFAULT_DIRNAME
    return LeagueHome(root.expanduser().absolute())
