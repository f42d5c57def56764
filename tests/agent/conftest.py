"""Fixtures of the agent tests: the C GRU kernel switched on or off, and a small memory task.

The memory task (`cue_train`, `cue_evaluate`): a small partially observable task that needs memory, for the
learning test.

Each episode lasts T steps. At step CUE_AT the state shows a cue c in {-1, +1}; at every other step the cue
entry is 0. From step PAY_FROM on, the action a in [-1, 1] earns a * c (nothing before). A policy that
remembers the cue earns 1 per paying step; a memoryless policy sees the same states for both cues and earns 0
on average.
The cue comes right after the trainer's burn-in (steps 0..3 of each window, which carry no gradient), so
backpropagation through time can teach the GRUs to keep it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import pytest

from sacbot.agent import accel
from sacbot.agent.inference import FastActor
from sacbot.agent.networks import NetworkSizes
from sacbot.agent.trainer import SacTrainer
from sacbot.agent.trainer_config import TrainerConfig

R = TypeVar("R")


def _with_kernel(enabled: bool, fn: Callable[[], R]) -> R:
    """fn() with the `native` part on or off, every other part as it is."""
    chosen = set(accel.active()) | {"native"} if enabled else set(accel.active()) - {"native"}
    with accel.using(chosen):
        return fn()


T = 12
BURN_IN = 4
CUE_AT = 4
PAY_FROM = 8
STATE_DIM = 3


def cue_states(cue: float) -> np.ndarray:
    s = np.zeros((T + 1, STATE_DIM), np.float32)
    s[CUE_AT, 0] = cue
    s[:, 1] = np.arange(T + 1) / T
    s[:, 2] = 1.0
    return s


def rollout(actor: FastActor, cue: float, deterministic: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One episode: states (T+1, S), actions (T, 1), actor hidden before each step (T, H)."""
    states = cue_states(cue)
    actions = np.zeros((T, 1), np.float32)
    hidden = np.zeros((T, actor.hidden_dim), np.float32)
    h = actor.initial_hidden()
    for t in range(T):
        hidden[t] = h
        a, h = actor.step(states[t], h, deterministic=deterministic)
        actions[t] = a
    return states, actions, hidden


def rewards(actions: np.ndarray, cue: float) -> np.ndarray:
    r = actions[:, 0] * cue
    r[:PAY_FROM] = 0.0
    return r.astype(np.float32)


def _evaluate(trainer: SacTrainer, episodes: int = 32) -> float:
    """Mean reward per paying step of the deterministic policy over balanced cues (chance = 0, best = 1)."""
    actor = FastActor(trainer.actor_arrays(), trainer.config.sizes)
    total = 0.0
    for i in range(episodes):
        cue = 1.0 if i % 2 == 0 else -1.0
        _, actions, _ = rollout(actor, cue, deterministic=True)
        total += float(rewards(actions, cue)[PAY_FROM:].mean())
    return total / episodes


def _train(memoryless: bool, seed: int = 0, episodes: int = 300, updates_per_episode: int = 4) -> SacTrainer:
    sizes = NetworkSizes(
        state_dim=STATE_DIM, action_dim=1, embed=32, hidden=32, head=32, memoryless=memoryless
    )
    cfg = TrainerConfig(
        sizes=sizes,
        batch_size=32,
        burn_in=BURN_IN,
        train_len=T - BURN_IN,
        gamma=0.5,
        actor_lr=3e-3,
        critic_lr=3e-3,
        alpha_lr=3e-3,
        init_alpha=0.1,
        replay_capacity=T * 2000,
        device="cpu",
        seed=seed,
    )
    trainer = SacTrainer(cfg)
    rng = np.random.default_rng(seed)
    actor = FastActor(trainer.actor_arrays(), sizes, seed=seed)
    done = np.zeros(T, np.float32)
    done[-1] = 1.0
    for episode in range(episodes):
        cue = 1.0 if rng.random() < 0.5 else -1.0
        states, actions, hidden = rollout(actor, cue, deterministic=False)
        trainer.replay.add_round(states, actions, rewards(actions, cue), done, hidden)
        trainer.env_steps += len(actions)
        if episode >= 8:
            for _ in range(updates_per_episode):
                trainer.train_step()
            actor = FastActor(trainer.snapshot.arrays, sizes, seed=seed + episode)
    return trainer


@pytest.fixture(scope="session")
def with_kernel() -> Callable[[bool, Callable[[], Any]], Any]:
    """`with_kernel(enabled, fn)`: fn() with the C GRU kernel on or off (tests compare the C loops with the
    torch ones)."""
    return _with_kernel


@pytest.fixture(scope="session")
def cue_train() -> Callable[..., SacTrainer]:
    """`cue_train(memoryless, seed=0, episodes=300, updates_per_episode=4)`: a trainer trained on the memory
    task."""
    return _train


@pytest.fixture(scope="session")
def cue_evaluate() -> Callable[..., float]:
    """`cue_evaluate(trainer, episodes=32)`: the deterministic policy's mean reward per paying step."""
    return _evaluate
