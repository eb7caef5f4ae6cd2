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
from league.cli.common import HomeOpt, err, handles_errors, out

PortOpt = Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to serve on (it must be free).")]
AddressOpt = Annotated[str, typer.Option(
    "--address", help="Address to bind: 127.0.0.1 (this machine only), localhost or ::1; any other, such as "
                      "0.0.0.0 (every interface), needs --allow-remote.")]
AllowRemoteOpt = Annotated[bool, typer.Option(
    "--allow-remote", help="Allow an --address other machines can reach. The dashboard has no login: it shows "
                           "the whole league to anyone who can reach that address.")]


@handles_errors
def dashboard_command(
    home: HomeOpt = None, port: PortOpt = DEFAULT_PORT, address: AddressOpt = DEFAULT_ADDRESS,
    allow_remote: AllowRemoteOpt = False,
) -> None:
    """Start the dashboard: leaderboard, rating history, head-to-head, lineage, tournaments, replays, training.

    It reads the league database read-only, so it can stay open while tournaments and training
    write. Stop it with Ctrl+C. The address and port are checked before it starts: a port in use,
    an address that is not this machine's, or one other machines can reach without
    --allow-remote is refused.

    Example: league dashboard --home ./my-league --port 8501
    """
    from dashboard.launch import check_serving, streamlit_command, url
    from league.files import printable
    from league.home import resolve_home

    league_home = resolve_home(home).require()
    command = streamlit_command(league_home.root, port, address)
    warning = check_serving(address, port, allow_remote=allow_remote)
    if warning:
        err.print(warning, highlight=False, markup=False)
    out.print(f"Dashboard for {printable(str(league_home.root))} on {printable(url(address, port))} "
              "(Ctrl+C stops it)", highlight=False, markup=False)
    sys.stdout.flush()
    sys.stderr.flush()
    # Become streamlit (no wrapper process left behind), so stopping this command stops the server.
    os.execv(sys.executable, command)
