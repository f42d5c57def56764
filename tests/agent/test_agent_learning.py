"""Learning test: the recurrent SAC agent solves a task that needs memory; the memoryless control cannot.

The task (the `cue_train` and `cue_evaluate` fixtures, conftest.py): a cue shown once decides which action
pays four or more steps later. Chance (and the best any memoryless policy can do on balanced cues) is 0;
remembering the cue earns 1 per paying step.
Fixed seeds, CPU, one thread: the run is deterministic; the thresholds leave a wide margin (the recurrent
agent reaches about 0.9 after ~200 updates here; this run gives it ~370).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from sacbot.agent.trainer import SacTrainer


def test_recurrent_agent_learns_memory_task_memoryless_control_does_not(
    cue_train: Callable[..., SacTrainer], cue_evaluate: Callable[..., float]
) -> None:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        recurrent = cue_train(memoryless=False, seed=1, episodes=100, updates_per_episode=4)
        control = cue_train(memoryless=True, seed=1, episodes=100, updates_per_episode=4)
    finally:
        torch.set_num_threads(threads)
    score, control_score = cue_evaluate(recurrent), cue_evaluate(control)
    assert recurrent.updates >= 300
    assert score > 0.6, f"recurrent agent scored {score:.3f} (chance 0, best 1)"
    assert abs(control_score) < 0.2, f"memoryless control scored {control_score:.3f}"
    assert score - control_score > 0.5
