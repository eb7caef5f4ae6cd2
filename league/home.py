"""The league home folder: where the database, checkpoints, replays and run logs live."""

from __future__ import annotations

import errno
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

    @property
    def live(self) -> Path:
        """Games being watched (`league watch`), each rewritten as a replay while it plays."""
        return self.root / "live"

    def exists(self) -> bool:
        return self.db_path.is_file()

    def create_root(self) -> None:
        """Make the home folder (and its parents); a file in the way or a read-only folder is one sentence."""
        self._mkdir(self.root)

    def create_dirs(self) -> None:
        for path in (self.root, self.checkpoints, self.replays, self.runs):
            self._mkdir(path)

    def _mkdir(self, path: Path) -> None:
        try:
            path.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise LeagueError(f"Cannot create the league home at {self.root}: {self._file_in_the_way(path)} "
                              "is a file, not a folder.") from None
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise
            if self.root.is_dir():
                raise LeagueError(f"The league home {self.root} is read-only ({path} cannot be created), so this "
                                  "command cannot run; the commands that only read the league still work.") from None
            raise LeagueError(f"Cannot create the league home at {self.root}: {exc.strerror} "
                              f"({exc.filename}).") from None

    @staticmethod
    def _file_in_the_way(path: Path) -> Path:
        """The nearest of `path` and its parents that exists and is not a folder."""
        return next((p for p in (path, *path.parents) if p.exists() and not p.is_dir()), path)

    def require(self) -> "LeagueHome":
        """Fail with a how-to when there is no league here yet."""
        if not self.exists():
            in_the_way = self._file_in_the_way(self.root)
            if in_the_way.exists() and not in_the_way.is_dir():
                raise LeagueError(f"No league at {self.root}: {in_the_way} is a file, not a folder; give --home a "
                                  "league's folder.")
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
