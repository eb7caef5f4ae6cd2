"""`league bench ...`: benchmarks that print figures (one run, ratios against references)."""

from __future__ import annotations

import typer

app = typer.Typer(help="Benchmarks that print figures from one run on this machine.", no_args_is_help=True,
                  rich_markup_mode=None)
