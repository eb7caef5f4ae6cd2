"""`python -m league.cli ARGS`: the `league` command without its console script."""

from league.cli import main

main()
