"""The league core: registry, ratings, standings, matchmaking, lineage, config; and, in league.cli,
the `league` command (the one top layer, which may import every package)."""
