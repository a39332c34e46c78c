"""correct: error localisation in multi-agent trajectories (CORRECT vs Who&When baselines)."""
