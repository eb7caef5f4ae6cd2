"""How agents improve: rewards, rollouts, PPO, the self-play loop, curriculum."""
