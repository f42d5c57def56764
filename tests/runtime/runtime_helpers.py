"""Runtime test helpers (a uniquely named module, not a conftest): a small real learner, synthetic rounds."""

from __future__ import annotations

import numpy as np

from sacbot.agent.trainer import SacTrainer, TrainerConfig
from sacbot.runtime.learner import AgentLearner
from sacbot.runtime.records import RoundReport, Transition


def small_learner(seed: int = 1) -> AgentLearner:
    return AgentLearner(
        SacTrainer(TrainerConfig(batch_size=4, replay_capacity=4000, seed=seed, device="cpu"))
    )


def synthetic_round(steps: int, rng: np.random.Generator, hidden_dim: int = 128) -> list[Transition]:
    out = []
    obs = rng.uniform(-1, 1, 17).astype(np.float32)
    for i in range(steps):
        nxt = rng.uniform(-1, 1, 17).astype(np.float32)
        action = rng.uniform(-1, 1, 4).astype(np.float32)
        hidden = rng.uniform(-1, 1, hidden_dim).astype(np.float32)
        out.append(Transition(obs, action, float(rng.normal()), nxt, i == steps - 1, hidden))
        obs = nxt
    return out


def report(round_number: int, own: float = 50.0, enemy: float = 50.0) -> RoundReport:
    return RoundReport(
        round=round_number,
        outcome="won" if own > enemy else "lost",
        reward_sum=1.5,
        turns=40,
        skipped_turns=0,
        p50_ms=0.4,
        p99_ms=1.2,
        max_ms=2.0,
        dropped_transitions=0,
        own_score=own,
        enemy_score=enemy,
    )
