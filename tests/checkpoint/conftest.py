"""Fixtures of the checkpoint tests: small stand-ins for trainer state, plain dicts of arrays named the way
the trainer names them, and their metadata."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest

from sacbot.checkpoint import CheckpointMeta


def _make_arrays(seed: int = 0, hidden: int = 8) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays: dict[str, np.ndarray] = {}
    for net in ("actor", "critic1", "critic2", "target1", "target2"):
        arrays[f"{net}.fc.weight"] = rng.standard_normal((hidden, 5)).astype(np.float32)
        arrays[f"{net}.fc.bias"] = rng.standard_normal(hidden).astype(np.float32)
    arrays["log_alpha"] = np.array([0.1], dtype=np.float32)
    for opt in ("actor", "critic", "alpha"):
        arrays[f"optim.{opt}.0.step"] = np.array(7.0, dtype=np.float32)
        arrays[f"optim.{opt}.0.exp_avg"] = rng.standard_normal((hidden, 5)).astype(np.float32)
        arrays[f"optim.{opt}.0.exp_avg_sq"] = rng.random((hidden, 5)).astype(np.float32)
    arrays["replay.count"] = np.array([3, 4], dtype=np.int64)
    return arrays


def _specs_of(arrays: dict[str, np.ndarray]) -> dict[str, tuple[tuple[int, ...], str]]:
    return {name: (tuple(a.shape), str(a.dtype)) for name, a in arrays.items()}


def _make_meta(**changes: object) -> CheckpointMeta:
    base = CheckpointMeta(env_steps=123, updates=45, network_sizes={"hidden": 8, "obs": 5})
    return replace(base, **changes)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def make_arrays() -> Callable[..., dict[str, np.ndarray]]:
    """`make_arrays(seed=0, hidden=8)`: the arrays of a small trainer (networks, optimisers, replay)."""
    return _make_arrays


@pytest.fixture(scope="session")
def specs_of() -> Callable[[dict[str, np.ndarray]], dict[str, tuple[tuple[int, ...], str]]]:
    """`specs_of(arrays)`: {name: (shape, dtype)}."""
    return _specs_of


@pytest.fixture(scope="session")
def make_meta() -> Callable[..., CheckpointMeta]:
    """`make_meta(**changes)`: a checkpoint's metadata, with the given fields changed."""
    return _make_meta
