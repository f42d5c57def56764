"""Coloured exploration noise: unit-variance Gaussian streams correlated in time as 1/f**beta says."""

from __future__ import annotations

import numpy as np
import pytest

from sacbot.agent.exploration import GUN_TURN, ColouredNoise, widen_gun
from sacbot.agent.inference import FastActor
from sacbot.agent.sizes import NetworkSizes
from sacbot.agent.trainer import SacTrainer
from sacbot.agent.trainer_config import TrainerConfig


def lag1(x: np.ndarray) -> float:
    """The lag-1 autocorrelation along the last axis, pooled over the others."""
    x = x - x.mean(axis=-1, keepdims=True)
    return float((x[..., 1:] * x[..., :-1]).sum() / (x * x).sum())


def drawn(noise: ColouredNoise, turns: int) -> np.ndarray:
    """`turns` draws of every stream: (streams, action_dim, turns)."""
    return np.stack([noise.draw() for _ in range(turns)], axis=-1)


@pytest.mark.parametrize(("beta", "low", "high"), [(0.0, -0.03, 0.03), (1.0, 0.65, 0.85), (2.0, 0.97, 1.0)])
def test_the_colour_sets_how_long_a_drift_lasts(beta: float, low: float, high: float) -> None:
    noise = ColouredNoise(beta, streams=8, action_dim=4, seed=1, length=1000)
    x = drawn(noise, 1000)
    assert x.shape == (8, 4, 1000) and x.dtype == np.float32
    assert low <= lag1(x) <= high
    assert abs(float(x.mean())) < 0.35 and 0.6 < float(x.std()) < 1.4  # each entry a unit-variance Gaussian


def test_streams_are_independent_seeded_and_restart_with_a_fresh_sequence() -> None:
    a = drawn(ColouredNoise(1.0, 3, 4, seed=7, length=50), 120)  # runs out twice: fresh sequences go on
    b = drawn(ColouredNoise(1.0, 3, 4, seed=7, length=50), 120)
    assert np.array_equal(a, b)
    assert not np.array_equal(a[0], a[1]) and not np.array_equal(a[..., :50], a[..., 50:100])
    noise = ColouredNoise(1.0, 2, 4, seed=7, length=50)
    first = drawn(noise, 10)
    noise.restart(1)
    after = noise.draw()
    assert np.array_equal(after[0], drawn(ColouredNoise(1.0, 2, 4, seed=7, length=50), 11)[0, :, 10])
    assert not np.array_equal(after[1], first[1, :, 0])  # stream 1 starts over, on a new sequence
    one_by_one = ColouredNoise(1.0, 3, 4, seed=7, length=50)  # the realtime path: one stream at a time
    for t in range(120):
        assert all(np.array_equal(one_by_one.draw_one(i), a[i, :, t]) for i in range(3))
    with pytest.raises(ValueError, match="read-only"):
        one_by_one.draw_one(0)[0] = 1.0


def test_a_bad_beta_is_refused() -> None:
    with pytest.raises(ValueError, match="beta"):
        ColouredNoise(3.5, 1, 4)
    with pytest.raises(ValueError, match="beta"):
        ColouredNoise(float("nan"), 1, 4)


def test_the_actor_draws_with_the_given_eps_in_both_paths() -> None:
    sizes = NetworkSizes()
    arrays = SacTrainer(TrainerConfig(seed=2, device="cpu")).actor_arrays()
    rng = np.random.default_rng(0)
    states = rng.uniform(-1, 1, (3, sizes.state_dim)).astype(np.float32)
    hidden = rng.uniform(-0.5, 0.5, (3, sizes.hidden)).astype(np.float32)
    eps = rng.standard_normal((3, sizes.action_dim)).astype(np.float32)
    batch = FastActor(arrays, sizes, seed=1)
    mean, _ = batch.step_batch(states, hidden, deterministic=True)
    at_zero, _ = batch.step_batch(states, hidden, deterministic=False, eps=np.zeros_like(eps))
    np.testing.assert_allclose(at_zero, mean, atol=1e-6)  # no draw: the mean
    sampled, _ = batch.step_batch(states, hidden, deterministic=False, eps=eps)
    for native in (True, False):
        one = FastActor(arrays, sizes, seed=99, native=native)
        for i in range(3):
            action, _ = one.step(states[i], hidden[i], deterministic=False, eps=eps[i])
            np.testing.assert_allclose(action, sampled[i], atol=1e-5)
    assert not np.allclose(sampled, mean, atol=1e-3)


def test_a_wider_gun_scales_only_the_gun_turn_s_draw() -> None:
    sizes = NetworkSizes(log_std_max=-2.0)  # the campaign's bound: std 0.135 before tanh
    arrays = SacTrainer(TrainerConfig(sizes=sizes, seed=2, device="cpu")).actor_arrays()
    rng = np.random.default_rng(0)
    states = np.repeat(rng.uniform(-1, 1, (1, sizes.state_dim)).astype(np.float32), 4000, axis=0)
    hidden = np.zeros((4000, sizes.hidden), np.float32)
    eps = rng.standard_normal((4000, sizes.action_dim)).astype(np.float32)
    kept = eps.copy()
    wide = widen_gun(eps, 4.0)
    assert np.array_equal(eps, kept)  # the caller's draws (a coloured stream's) are not written
    assert np.array_equal(wide[:, GUN_TURN], 4.0 * eps[:, GUN_TURN])
    others = [j for j in range(sizes.action_dim) if j != GUN_TURN]
    assert np.array_equal(wide[:, others], eps[:, others])
    actor = FastActor(arrays, sizes, seed=1)
    spread = {}
    for k, draws in (("policy", eps), ("wide", wide)):
        actions, _ = actor.step_batch(states, hidden, deterministic=False, eps=draws)
        spread[k] = np.arctanh(actions.astype(np.float64)).std(axis=0)  # std * eps around one mean, per entry
    np.testing.assert_allclose(spread["policy"], np.exp(-2.0), rtol=0.05)
    np.testing.assert_allclose(spread["wide"][GUN_TURN], 4.0 * np.exp(-2.0), rtol=0.05)
    np.testing.assert_allclose(spread["wide"][others], spread["policy"][others], rtol=1e-5)
