"""The YAML configuration shipped with rl-league (loaded by league.config)."""
