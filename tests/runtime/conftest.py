"""Fixtures of the runtime tests: a small real learner, synthetic rounds and round reports, and the helpers
of the tests that run `sacbot play` (environment, waiting, the bot's log)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sacbot.agent.trainer import SacTrainer
from sacbot.agent.trainer_config import TrainerConfig
from sacbot.runtime.learner import AgentLearner
from sacbot.runtime.records import RoundReport, Transition


def _small_learner(seed: int = 1) -> AgentLearner:
    return AgentLearner(
        SacTrainer(TrainerConfig(batch_size=4, replay_capacity=4000, seed=seed, device="cpu"))
    )


def _synthetic_round(steps: int, rng: np.random.Generator, hidden_dim: int = 128) -> list[Transition]:
    out = []
    obs = rng.uniform(-1, 1, 17).astype(np.float32)
    for i in range(steps):
        nxt = rng.uniform(-1, 1, 17).astype(np.float32)
        action = rng.uniform(-1, 1, 4).astype(np.float32)
        hidden = rng.uniform(-1, 1, hidden_dim).astype(np.float32)
        out.append(Transition(obs, action, float(rng.normal()), nxt, i == steps - 1, hidden))
        obs = nxt
    return out


def _report(round_number: int, own: float = 50.0, enemy: float = 50.0) -> RoundReport:
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


def _use_env(monkeypatch: pytest.MonkeyPatch, values: dict[str, str]) -> None:
    for key in [k for k in os.environ if k.startswith("SACBOT_")]:
        monkeypatch.delenv(key)
    for key, value in values.items():
        monkeypatch.setenv(key, value)


def _wait_for(
    condition: Any, what: str, limit_s: float = 60.0, detail: Callable[[], str] | None = None
) -> None:
    deadline = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() >= deadline:
            raise AssertionError(f"gave up waiting for {what}" + (f"\n{detail()}" if detail else ""))
        time.sleep(0.05)


def _bot_log(logs: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in sorted(logs.glob("SacBot*.log")))


@pytest.fixture(scope="session")
def small_learner() -> Callable[..., AgentLearner]:
    """`small_learner(seed=1)`: a real `AgentLearner` with a small batch and replay, on the CPU."""
    return _small_learner


@pytest.fixture(scope="session")
def synthetic_round() -> Callable[..., list[Transition]]:
    """`synthetic_round(steps, rng, hidden_dim=128)`: a round of random transitions, done on the last."""
    return _synthetic_round


@pytest.fixture(scope="session")
def report() -> Callable[..., RoundReport]:
    """`report(round_number, own=50.0, enemy=50.0)`: a round report, won when own > enemy."""
    return _report


@pytest.fixture(scope="session")
def use_env() -> Callable[[pytest.MonkeyPatch, dict[str, str]], None]:
    """`use_env(monkeypatch, values)`: exactly these SACBOT_* variables for the test."""
    return _use_env


@pytest.fixture(scope="session")
def wait_for() -> Callable[..., None]:
    """`wait_for(condition, what, limit_s=60.0)`: polls condition() until true; fails after the limit."""
    return _wait_for


@pytest.fixture(scope="session")
def bot_log() -> Callable[[Path], str]:
    """`bot_log(logs)`: the SacBot logs in a log folder, joined."""
    return _bot_log
