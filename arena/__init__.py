"""Where games are played: RocketSim games, the vectorized runner, tournaments, replays."""
