"""`league dashboard`: become the Streamlit app serving a league.

Kept light: importing this module imports neither streamlit nor the app; streamlit runs in the
process this command becomes.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from dashboard.launch import DEFAULT_ADDRESS, DEFAULT_PORT
from league.cli.common import HomeOpt, handles_errors, out

PortOpt = Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to serve on.")]
AddressOpt = Annotated[str, typer.Option("--address", help="Address to bind (0.0.0.0 serves other machines too).")]


@handles_errors
def dashboard_command(
    home: HomeOpt = None, port: PortOpt = DEFAULT_PORT, address: AddressOpt = DEFAULT_ADDRESS
) -> None:
    """Start the dashboard: leaderboard, rating history, head-to-head, lineage, tournaments, replays, training.

    It reads the league database read-only, so it can stay open while tournaments and training
    write. Stop it with Ctrl+C.

    Example: league dashboard --home ./my-league --port 8501
    """
    from dashboard.launch import streamlit_command
    from league.home import resolve_home

    league_home = resolve_home(home).require()
    command = streamlit_command(league_home.root, port, address)
    out.print(f"Dashboard for {league_home.root} on http://{address}:{port} (Ctrl+C stops it)", highlight=False)
    sys.stdout.flush()
    sys.stderr.flush()
    # Become streamlit (no wrapper process left behind), so stopping this command stops the server.
    os.execv(sys.executable, command)
