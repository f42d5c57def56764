"""Fast inference (the C kernel and the numpy path) equals the torch actor; stochastic mode is seeded; the
bench CLI prints figures."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from sacbot.agent.features import ACTION_DIM, network_inputs
from sacbot.agent.inference import SPEED_ENTRY, FastActor, behaviour_sizes, drawn_entries
from sacbot.agent.networks import Actor, NetworkSizes, squashed_sample
from sacbot.agent.trainer import SacTrainer
from sacbot.agent.trainer_config import TrainerConfig


def torch_arrays(actor: Actor) -> dict[str, np.ndarray]:
    return {f"actor.{k}": v.detach().numpy().copy() for k, v in actor.named_parameters()}


def test_the_kernel_is_used_where_a_compiler_exists() -> None:
    arrays = torch_arrays(Actor(NetworkSizes()))
    has_cc = shutil.which(os.environ.get("CC", "cc")) is not None or shutil.which("gcc") is not None
    assert FastActor(arrays).native is has_cc
    assert FastActor(arrays, native=False).native is False


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize(
    "sizes",
    [NetworkSizes(activation="relu"), NetworkSizes(activation="tanh"), NetworkSizes(activation="elu"),
     NetworkSizes(angle_inputs=True), NetworkSizes(energy_inputs=True),
     NetworkSizes(angle_inputs=True, energy_inputs=True), NetworkSizes(lead_inputs=True),
     NetworkSizes(angle_inputs=True, energy_inputs=True, lead_inputs=True)],
    ids=["relu", "tanh", "elu", "angle-inputs", "energy-inputs", "both-inputs", "lead-inputs", "all-inputs"],
)  # fmt: skip
def test_fast_equals_torch_over_a_sequence(sizes: NetworkSizes, native: bool) -> None:
    torch.manual_seed(0)
    actor = Actor(sizes)
    fast = FastActor(torch_arrays(actor), sizes, native=native)
    assert actor.fc_in.in_features == sizes.input_dim
    rng = np.random.default_rng(0)
    states = rng.uniform(-1, 1, (50, 17)).astype(np.float32)
    h0 = np.tanh(rng.standard_normal(128)).astype(np.float32)
    inputs = network_inputs(states, sizes)  # the torch actor reads the widened inputs
    with torch.no_grad():
        mu, _, out = actor(torch.from_numpy(inputs)[None], torch.from_numpy(h0)[None])
    h = h0
    for t in range(50):
        a, h = fast.step(states[t], h)
        assert np.abs(a - np.tanh(mu[0, t].numpy())).max() < 1e-5
        assert np.abs(h - out[0, t].numpy()).max() < 1e-5
    # batched steps agree too
    a_b, h_b = fast.step_batch(states[:8], np.repeat(h0[None], 8, 0))
    with torch.no_grad():
        mu1, _, out1 = actor(
            torch.from_numpy(inputs[:8])[:, None], torch.from_numpy(np.repeat(h0[None], 8, 0))
        )
    assert np.abs(a_b - np.tanh(mu1[:, 0].numpy())).max() < 1e-5
    assert np.abs(h_b - out1[:, 0].numpy()).max() < 1e-5


@pytest.mark.parametrize("native", [True, False])
def test_stochastic_mode_matches_the_torch_sample_and_is_seeded(native: bool) -> None:
    torch.manual_seed(1)
    sizes = NetworkSizes()
    actor = Actor(sizes)
    arrays = torch_arrays(actor)
    s = np.random.default_rng(0).uniform(-1, 1, 17).astype(np.float32)
    h = np.zeros(128, np.float32)
    f1 = FastActor(arrays, sizes, seed=5, native=native)
    f2 = FastActor(arrays, sizes, seed=5, native=native)
    a1, _ = f1.step(s, h, deterministic=False)
    a2, _ = f2.step(s, h, deterministic=False)
    assert np.array_equal(a1, a2)
    eps = np.random.default_rng(5).standard_normal(4, dtype=np.float32)
    with torch.no_grad():
        mu, log_std, _ = actor(torch.from_numpy(s)[None, None], torch.from_numpy(h)[None])
        expect, _ = squashed_sample(mu[0, 0], log_std[0, 0], torch.from_numpy(eps))
    assert np.abs(a1 - expect.numpy()).max() < 1e-5
    assert not np.array_equal(a1, f1.step(s, h, deterministic=False)[0])


@pytest.mark.parametrize("native", [True, False])
def test_the_speed_mode_draws_the_speed_and_plays_the_mean_elsewhere(native: bool) -> None:
    torch.manual_seed(2)
    sizes = NetworkSizes()
    arrays = torch_arrays(Actor(sizes))
    s = np.random.default_rng(1).uniform(-1, 1, 17).astype(np.float32)
    h = np.zeros(128, np.float32)
    deterministic, drawn = drawn_entries("speed", ACTION_DIM)
    assert not deterministic and drawn is not None
    speed = FastActor(arrays, sizes, seed=7, native=native)
    every = FastActor(arrays, sizes, seed=7, native=native)
    mean, _ = FastActor(arrays, sizes, native=native).step(s, h, deterministic=True)
    a, h1 = speed.step(s, h, deterministic, drawn)
    b, h2 = every.step(s, h, False)  # the same eps: the speed entry is the fully sampled one
    assert np.array_equal(h1, h2)
    assert abs(a[SPEED_ENTRY] - b[SPEED_ENTRY]) < 1e-6 and a[SPEED_ENTRY] != mean[SPEED_ENTRY]
    others = [i for i in range(ACTION_DIM) if i != SPEED_ENTRY]
    assert np.abs(a[others] - mean[others]).max() < 1e-6
    assert drawn_entries("mean", ACTION_DIM) == (True, None)
    assert drawn_entries("sampled", ACTION_DIM) == (False, None)


@pytest.mark.parametrize("native", [True, False])
def test_the_log_std_bound_narrows_the_sample_as_torchs(native: bool) -> None:
    torch.manual_seed(3)
    wide, narrow = NetworkSizes(), NetworkSizes(log_std_max=-3.0)
    actor = Actor(narrow)
    with torch.no_grad():
        actor.log_std.bias.fill_(1.5)  # every entry's std above the bound
    arrays = torch_arrays(actor)
    s = np.random.default_rng(2).uniform(-1, 1, 17).astype(np.float32)
    h = np.zeros(128, np.float32)
    mean, _ = FastActor(arrays, narrow, native=native).step(s, h)
    bounded, _ = FastActor(arrays, narrow, seed=4, native=native).step(s, h, deterministic=False)
    free, _ = FastActor(arrays, wide, seed=4, native=native).step(s, h, deterministic=False)
    eps = np.random.default_rng(4).standard_normal(4, dtype=np.float32)
    with torch.no_grad():
        mu, log_std, _ = actor(torch.from_numpy(s)[None, None], torch.from_numpy(h)[None])
        expect, _ = squashed_sample(mu[0, 0], log_std[0, 0], torch.from_numpy(eps))
    assert float(log_std.max()) == -3.0 and np.abs(bounded - expect.numpy()).max() < 1e-5
    assert np.abs(bounded - mean).max() < 0.15 < np.abs(free - mean).max()


@pytest.mark.parametrize("native", [True, False])
def test_a_behaviour_floor_widens_the_draw_and_leaves_the_policy_alone(native: bool) -> None:
    """Pre-tanh spread of 4000 draws at one state: the bound's e^-3 without a floor, e^-1 with a floor of -1
    above the bound, the policy's own spread (bias -2) with a floor of -4 below it; the mean is the same."""
    torch.manual_seed(5)
    bounded = NetworkSizes(log_std_max=-3.0)
    actor = Actor(bounded)
    with torch.no_grad():
        actor.log_std.weight.zero_()
        actor.log_std.bias.fill_(-2.0)  # above the bound: clamped to -3
    arrays = torch_arrays(actor)
    s = np.random.default_rng(2).uniform(-1, 1, 17).astype(np.float32)
    h = np.zeros(128, np.float32)

    def spread(sizes: NetworkSizes) -> tuple[np.ndarray, np.ndarray]:
        fast = FastActor(arrays, sizes, seed=6, native=native)
        draws = np.stack([fast.step(s, h, deterministic=False)[0] for _ in range(4000)])
        pre = np.arctanh(np.clip(draws, -0.999999, 0.999999))
        return pre.std(axis=0), fast.step(s, h)[0]

    narrow, mean = spread(behaviour_sizes(bounded, None))
    wide, wide_mean = spread(behaviour_sizes(bounded, -1.0))
    assert behaviour_sizes(bounded, -1.0).log_std_max == -1.0 and bounded.log_std_max == -3.0
    np.testing.assert_allclose(narrow, np.exp(-3.0), rtol=0.06)
    np.testing.assert_allclose(wide, np.exp(-1.0), rtol=0.06)
    np.testing.assert_array_equal(mean, wide_mean)
    free = NetworkSizes()  # no bound: the policy's e^-2 stays above a floor of -4
    own, _ = spread(behaviour_sizes(free, -4.0))
    np.testing.assert_allclose(own, np.exp(-2.0), rtol=0.06)


def test_memoryless_kernel_ignores_the_hidden_state() -> None:
    sizes = NetworkSizes(memoryless=True)
    arrays = torch_arrays(Actor(sizes))
    s = np.random.default_rng(0).uniform(-1, 1, 17).astype(np.float32)
    for native in (True, False):
        fast = FastActor(arrays, sizes, native=native)
        a0, h0 = fast.step(s, np.zeros(128, np.float32))
        a1, h1 = fast.step(s, np.ones(128, np.float32))
        assert np.allclose(a0, a1, atol=1e-6) and np.allclose(h0, h1, atol=1e-6)


@pytest.mark.parametrize("native", [True, False])
def test_returned_arrays_are_not_reused_buffers(native: bool) -> None:
    trainer = SacTrainer(TrainerConfig(device="cpu"))
    fast = FastActor(trainer.snapshot.arrays, native=native)
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
    assert set(figures) == {"fast_p50_us", "fast_p99_us", "torch_p50_us", "torch_p99_us", "fast_native"}
    assert all(v > 0 for k, v in figures.items() if k != "fast_native")
    r = _sacbot("bench", "trainer", "--json", "--seconds", "0.5", "--batch", "8")
    assert r.returncode == 0, r.stderr
    figures = json.loads(r.stdout)
    assert figures["batch"] == 8 and figures["threads"] == 1 and figures["device"] == "cpu"
    assert figures["updates_per_s"] > 0
    assert 0 < figures["update_ms_p10"] <= figures["update_ms_p50"] <= figures["update_ms_p90"]
    # The mean rate and the per-pass times describe the same passes: half of them take p50 or longer.
    total_ms = figures["updates"] / figures["updates_per_s"] * 1e3
    assert total_ms >= 0.99 * 0.5 * figures["updates"] * figures["update_ms_p50"]
    assert figures["gemm_gflops_before"] > 0 and figures["gemm_gflops_after"] > 0
    r = _sacbot("bench", "trainer", "--json", "--seconds", "0.5", "--batch", "8", "--compare-eager")
    assert r.returncode == 0, r.stderr
    figures = json.loads(r.stdout)
    assert figures["pairs"] >= 3 and figures["eager_updates_per_s"] > 0 and figures["speedup_vs_eager"] > 0
    r = _sacbot("bench", "trainer", "--json", "--batch", "0")
    assert r.returncode != 0 and "Traceback" not in r.stderr


def test_bench_trainer_measures_the_recipe_of_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    recipe = {"SACBOT_THREAT_INPUTS": "1", "SACBOT_KICKSTART": "50", "SACBOT_TEACHER_SURF": "1"}
    for name, value in {**recipe, "SACBOT_HINDSIGHT_AIM": "50", "SACBOT_TARGET_ENTROPY": "-8"}.items():
        monkeypatch.setenv(name, value)
    r = _sacbot("bench", "trainer", "--json", "--seconds", "0.5", "--batch", "8", "--recipe")
    assert r.returncode == 0, r.stderr
    figures = json.loads(r.stdout)
    assert figures["updates"] > 0
    assert figures["recipe"] == {
        "kickstart": 50.0,
        "teacher_surf": True,
        "hindsight_aim": 50.0,
        "threat_inputs": True,
        "target_entropy": -8.0,
    }
    r = _sacbot("bench", "trainer", "--json", "--seconds", "0.5", "--recipe", "--compare-eager")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--compare-eager" in r.stderr


def test_inconsistent_arrays_never_reach_the_kernel() -> None:
    arrays = torch_arrays(Actor(NetworkSizes()))
    arrays["actor.fc_head.weight"] = arrays["actor.fc_head.weight"][:, :64].copy()  # (64, 64), not (64, 128)
    fast = FastActor(arrays, NetworkSizes())
    assert not fast.native  # the numpy path raises on it instead of the kernel reading out of bounds
    with pytest.raises(ValueError):
        fast.step(np.zeros(17, np.float32), fast.initial_hidden())


def test_a_damaged_cached_kernel_is_rebuilt(tmp_path: Path) -> None:
    code = (
        "from sacbot.agent.native_step import load_kernel; import sys; "
        "sys.exit(0 if load_kernel() is not None else 1)"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    assert subprocess.run([sys.executable, "-c", code], env=env, timeout=120).returncode == 0
    (cached,) = list(tmp_path.rglob("*.so"))
    cached.write_bytes(b"not a shared object")  # a truncated or foreign file where the kernel should be
    assert subprocess.run([sys.executable, "-c", code], env=env, timeout=120).returncode == 0
    assert cached.read_bytes()[:4] == b"\x7fELF"


def test_a_failing_compiler_falls_back_to_numpy(tmp_path: object) -> None:
    code = (
        "from sacbot.agent.native_step import load_kernel; import sys; "
        "sys.exit(0 if load_kernel() is None else 1)"
    )
    env = {**os.environ, "CC": "false", "XDG_CACHE_HOME": str(tmp_path)}
    assert subprocess.run([sys.executable, "-c", code], env=env, timeout=60).returncode == 0
    env = {**os.environ, "SACBOT_NATIVE": "0"}
    assert subprocess.run([sys.executable, "-c", code], env=env, timeout=60).returncode == 0


def test_loading_the_kernel_keeps_subnormal_numbers() -> None:
    """The kernel is built with -ffast-math but not linked with it: loading it must not switch the process to
    flush-to-zero (which would break numpy and torch arithmetic on tiny numbers)."""
    code = (
        "import numpy as np; from sacbot.agent.native_step import load_kernel; "
        "assert load_kernel() is not None; "
        "import sys; sys.exit(0 if (np.array([1e-310]) * 1.0)[0] != 0.0 else 1)"
    )
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.fail("no C compiler on this machine: the kernel test needs one")
    assert subprocess.run([sys.executable, "-c", code], timeout=120).returncode == 0
