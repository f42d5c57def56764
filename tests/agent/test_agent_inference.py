"""Fast numpy inference equals the torch actor; stochastic mode is seeded; the bench CLI prints figures."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from sacbot.agent.inference import FastActor
from sacbot.agent.networks import Actor, NetworkSizes, squashed_sample
from sacbot.agent.trainer import SacTrainer, TrainerConfig


def torch_arrays(actor: Actor) -> dict[str, np.ndarray]:
    return {f"actor.{k}": v.detach().numpy().copy() for k, v in actor.named_parameters()}


@pytest.mark.parametrize("activation", ["relu", "tanh", "elu"])
def test_fast_equals_torch_over_a_sequence(activation: str) -> None:
    torch.manual_seed(0)
    sizes = NetworkSizes(activation=activation)
    actor = Actor(sizes)
    fast = FastActor(torch_arrays(actor), sizes)
    rng = np.random.default_rng(0)
    states = rng.uniform(-1, 1, (50, 17)).astype(np.float32)
    h0 = np.tanh(rng.standard_normal(128)).astype(np.float32)
    with torch.no_grad():
        mu, _, out = actor(torch.from_numpy(states)[None], torch.from_numpy(h0)[None])
    h = h0
    for t in range(50):
        a, h = fast.step(states[t], h)
        assert np.abs(a - np.tanh(mu[0, t].numpy())).max() < 1e-5
        assert np.abs(h - out[0, t].numpy()).max() < 1e-5
    # batched steps agree too
    a_b, h_b = fast.step_batch(states[:8], np.repeat(h0[None], 8, 0))
    with torch.no_grad():
        mu1, _, out1 = actor(
            torch.from_numpy(states[:8])[:, None], torch.from_numpy(np.repeat(h0[None], 8, 0))
        )
    assert np.abs(a_b - np.tanh(mu1[:, 0].numpy())).max() < 1e-5
    assert np.abs(h_b - out1[:, 0].numpy()).max() < 1e-5


def test_stochastic_mode_matches_the_torch_sample_and_is_seeded() -> None:
    torch.manual_seed(1)
    sizes = NetworkSizes()
    actor = Actor(sizes)
    arrays = torch_arrays(actor)
    s = np.random.default_rng(0).uniform(-1, 1, 17).astype(np.float32)
    h = np.zeros(128, np.float32)
    f1, f2 = FastActor(arrays, sizes, seed=5), FastActor(arrays, sizes, seed=5)
    a1, _ = f1.step(s, h, deterministic=False)
    a2, _ = f2.step(s, h, deterministic=False)
    assert np.array_equal(a1, a2)
    eps = np.random.default_rng(5).standard_normal(4, dtype=np.float32)
    with torch.no_grad():
        mu, log_std, _ = actor(torch.from_numpy(s)[None, None], torch.from_numpy(h)[None])
        expect, _ = squashed_sample(mu[0, 0], log_std[0, 0], torch.from_numpy(eps))
    assert np.abs(a1 - expect.numpy()).max() < 1e-5
    assert not np.array_equal(a1, f1.step(s, h, deterministic=False)[0])


def test_returned_arrays_are_not_reused_buffers() -> None:
    trainer = SacTrainer(TrainerConfig(device="cpu"))
    fast = FastActor(trainer.snapshot.arrays)
    s = np.zeros(17, np.float64)  # other dtypes are accepted
    a1, h1 = fast.step(s, fast.initial_hidden())
    a1_copy, h1_copy = a1.copy(), h1.copy()
    fast.step(np.ones(17, np.float32), h1)
    assert np.array_equal(a1, a1_copy) and np.array_equal(h1, h1_copy)


def test_mismatched_arrays_are_refused() -> None:
    arrays = torch_arrays(Actor(NetworkSizes(hidden=32)))
    with pytest.raises(ValueError):
        FastActor(arrays, NetworkSizes())


def _sacbot(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sacbot", *args], capture_output=True, text=True, timeout=240
    )


def test_bench_commands_print_json() -> None:
    r = _sacbot("bench", "inference", "--json", "--steps", "300")
    assert r.returncode == 0, r.stderr
    figures = json.loads(r.stdout)
    assert set(figures) == {"fast_p50_us", "fast_p99_us", "torch_p50_us", "torch_p99_us"}
    assert all(v > 0 for v in figures.values())
    r = _sacbot("bench", "trainer", "--json", "--seconds", "0.5", "--batch", "8")
    assert r.returncode == 0, r.stderr
    figures = json.loads(r.stdout)
    assert figures["batch"] == 8 and figures["threads"] == 1 and figures["device"] == "cpu"
    assert figures["updates_per_s"] > 0
    r = _sacbot("bench", "trainer", "--json", "--batch", "0")
    assert r.returncode != 0 and "Traceback" not in r.stderr
