"""The agents: policies, the SB3 bridge, training, distillation, searches, the arena and
ratings, checkpoints."""
