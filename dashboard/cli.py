"""`league dashboard`: start the Streamlit app on a league (registered in league/cli.py).

Kept light: importing this module imports neither streamlit nor the app, so `league agents`
stays fast; streamlit runs in the process this command becomes.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from league.cli_common import HomeOpt, handles_errors, out
from league.errors import LeagueError

APP_PATH = Path(__file__).with_name("app.py")
DEFAULT_PORT = 8501
DEFAULT_ADDRESS = "127.0.0.1"

PortOpt = Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to serve on.")]
AddressOpt = Annotated[str, typer.Option("--address", help="Address to bind (0.0.0.0 serves other machines too).")]


def streamlit_command(home_root: Path, port: int, address: str) -> list[str]:
    """The streamlit invocation: headless, no file watching, no usage statistics, the home after `--`."""
    return [sys.executable, "-m", "streamlit", "run", str(APP_PATH),
            "--server.port", str(port), "--server.address", address, "--server.headless", "true",
            "--server.fileWatcherType", "none", "--server.runOnSave", "false",
            "--browser.gatherUsageStats", "false", "--client.toolbarMode", "viewer",
            "--", "--home", str(home_root)]


@handles_errors
def dashboard_command(
    home: HomeOpt = None, port: PortOpt = DEFAULT_PORT, address: AddressOpt = DEFAULT_ADDRESS
) -> None:
    """Start the dashboard: leaderboard, rating history, head-to-head, lineage, tournaments, replays, training.

    It reads the league database read-only, so it can stay open while tournaments and training
    write. Stop it with Ctrl+C.

    Example: league dashboard --home ./my-league --port 8501
    """
    from league.home import resolve_home

    league_home = resolve_home(home).require()
    if importlib.util.find_spec("streamlit") is None:
        raise LeagueError("The dashboard needs streamlit; install it with `pip install -e '.[dashboard]'`.")
    command = streamlit_command(league_home.root, port, address)
    out.print(f"Dashboard for {league_home.root} on http://{address}:{port} (Ctrl+C stops it)", highlight=False)
    sys.stdout.flush()
    sys.stderr.flush()
    # Become streamlit (no wrapper process left behind), so stopping this command stops the server.
    os.execv(sys.executable, command)
