"""Per-episode metrics of self-play: the learner's results and illegal actions."""

from __future__ import annotations

from typing import Any

from ray.rllib.callbacks.callbacks import RLlibCallback

from trafficenvs.rllib.selfplay import LEARNER


class SelfPlayStats(RLlibCallback):
    """Logs, per finished game, ``illegal_actions`` (summed), ``learner_win_share``
    and ``learner_win_share_vs_<module>`` (means over the last 200 games), and the
    learner's return; the per-iteration lines and the run summary read these."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any = None,
                       **kwargs: Any) -> None:
        if metrics_logger is None:
            return
        infos = episode.get_infos(-1)
        illegal = sum(1 for i in infos.values() if isinstance(i, dict) and i.get("illegal"))
        metrics_logger.log_value("illegal_actions", illegal, reduce="sum")
        agents = list(episode.agent_episodes)
        mine = [a for a in agents if episode.module_for(a) == LEARNER]
        others = {episode.module_for(a) for a in agents} - {LEARNER}
        if not mine:
            return
        ret = episode.agent_episodes[mine[0]].get_return()
        won = float(ret > 0)
        metrics_logger.log_value("learner_win_share", won, reduce="mean", window=200)
        for m in others:
            # ``self_3`` -> self, ``opp1_greedy`` -> greedy
            key = "self" if m.startswith("self_") else m.split("_", 1)[-1]
            metrics_logger.log_value(f"learner_win_share_vs_{key}", won, reduce="mean",
                                     window=200)
