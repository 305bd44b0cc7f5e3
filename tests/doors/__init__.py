"""The doors users come in by: Gymnasium, PettingZoo, RLlib, TorchRL, the CLI, play, replay
and renders."""
