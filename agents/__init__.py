"""What an agent is: the observation layout and action table, policies, baseline bots, checkpoints."""
