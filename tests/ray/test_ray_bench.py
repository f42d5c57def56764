"""`sacbot bench ray`'s figures on a local Ray instance (2 CPUs), with short windows: every figure is there
and sane (the values themselves are for docs/scaling.md, not for tests)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import ray

from sacbot.bench.ray import bench_ray


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False)
    yield
    ray.shutdown()


def test_bench_ray_gives_every_figure() -> None:
    fig = bench_ray("SpinBot", envs=2, chunk_steps=16, window_s=0.5, device="cpu")
    for key in ("inprocess_env_steps_per_s", "ray_1_runner_env_steps_per_s", "ray_2_runners_env_steps_per_s",
                "learner_standalone_updates_per_s", "learner_fed_updates_per_s"):  # fmt: skip
        assert fig[key] > 0, key
    # Per shipped step: obs (17 floats, one more per round) + action (4) + reward + done + hidden (128), as
    # float32; steps of rounds still open at the end count but have not shipped, so at most that.
    assert 0 < fig["bytes_per_env_step_arrays"] <= 4 * (2 * 17 + 4 + 1 + 1 + 128)
    assert fig["bytes_per_env_step_arrays"] <= fig["bytes_per_env_step_pickled"]
    assert fig["actor_weights_bytes"] > 100_000 and fig["weight_round_trip_ms"] > fig["weight_get_ms"] > 0
    assert fig["cpus"] == 2 and fig["learner_fed_utd_held"] == pytest.approx(0.25, abs=0.02)
