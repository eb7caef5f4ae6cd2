"""How the dashboard is started: the streamlit invocation that `league dashboard` becomes.

Kept light: importing this module imports neither streamlit nor the app.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from league.errors import LeagueError

APP_PATH = Path(__file__).with_name("app.py")
DEFAULT_PORT = 8501
DEFAULT_ADDRESS = "127.0.0.1"


def streamlit_command(home_root: Path, port: int, address: str) -> list[str]:
    """The streamlit invocation: headless, no file watching, no usage statistics, the home after `--`.

    A LeagueError when streamlit is not installed.
    """
    if importlib.util.find_spec("streamlit") is None:
        raise LeagueError("The dashboard needs streamlit; install it with `pip install -e '.[dashboard]'`.")
    return [sys.executable, "-m", "streamlit", "run", str(APP_PATH),
            "--server.port", str(port), "--server.address", address, "--server.headless", "true",
            "--server.fileWatcherType", "none", "--server.runOnSave", "false",
            "--browser.gatherUsageStats", "false", "--client.toolbarMode", "viewer",
            "--", "--home", str(home_root)]
