"""The league core: registry, ratings, matchmaking, lineage, config and the `league` command."""
