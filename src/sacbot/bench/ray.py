"""`sacbot bench ray`: the figures that size a Ray deployment (docs/scaling.md), side by side with the
in-process path.

- env steps/s: the runner's own loop (`EnvRunner.collect`) in this process, then 1 and 2 runners as Ray
  actors, each with one call always in flight (steady state: the first call, which builds the arenas, is not
  timed);
- bytes per env step a runner ships to the learner: the arrays (`payload_bytes`) and the whole pickled call
  result (arrays, round results, framing);
- learner updates/s: standalone (the replay filled from runner rounds, `train_step` in a loop), and fed by 2
  runners in `train_ray` at a UTD ratio the learner cannot keep up with (so it runs flat out);
- weight broadcast: `ray.put` of the actor's arrays on the learner, `ray.get` on a runner, and the round trip
  of a call that carries a new version.
Medians of repeated windows where a figure is a rate. Nothing here is asserted: figures for the docs.
"""

from __future__ import annotations

import pickle
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from sacbot.distributed.runner import EnvRunner, RunnerSpec, payload_bytes, runner_class, unpack_rounds


def _rate_inprocess(
    spec: RunnerSpec, arrays: dict[str, np.ndarray], chunk: int, window_s: float
) -> tuple[float, list[dict[str, Any]]]:
    import ray

    runner = EnvRunner(0, spec)
    chunks = [runner.collect(chunk, 0, [ray.put(arrays)], 0)]  # builds the arenas, loads the weights
    steps, started = 0, time.perf_counter()
    while time.perf_counter() - started < window_s:
        out = runner.collect(chunk, 0, [None], 0)
        chunks.append(out)
        steps += out["env_steps"]
    return steps / (time.perf_counter() - started), chunks


def _rate_ray(spec: RunnerSpec, ref: Any, runners: int, chunk: int, window_s: float) -> float:
    import ray

    cls = runner_class(max_restarts=0)
    handles = [cls.remote(i, spec) for i in range(runners)]
    pending: dict[Any, Any] = {}
    try:
        ray.get([h.collect.remote(chunk, 0, [ref], 0) for h in handles])  # arenas built, weights fetched
        pending.update({h.collect.remote(chunk, 0, [ref], 0): h for h in handles})
        steps, started = 0, time.perf_counter()
        while time.perf_counter() - started < window_s:
            ready, _ = ray.wait(list(pending), num_returns=1)
            handle = pending.pop(ready[0])
            steps += int(ray.get(ready[0])["env_steps"])
            pending[handle.collect.remote(chunk, 0, [ref], 0)] = handle
        elapsed = time.perf_counter() - started
        return steps / elapsed
    finally:
        if pending:
            ray.wait(list(pending), num_returns=len(pending), timeout=10.0)
        for h in handles:
            ray.kill(h, no_restart=True)


def _broadcast(spec: RunnerSpec, arrays: dict[str, np.ndarray], repeats: int) -> dict[str, float]:
    import ray

    handle = runner_class(max_restarts=0).remote(0, spec)
    try:
        ray.get(handle.collect.remote(0, 0, [ray.put(arrays)], 0))
        put_s, get_s, trip_s = [], [], []
        for version in range(1, repeats + 1):
            t0 = time.perf_counter()
            ref = ray.put(arrays)
            t1 = time.perf_counter()
            out = ray.get(handle.collect.remote(0, version, [ref], 0))
            trip_s.append(time.perf_counter() - t0)
            put_s.append(t1 - t0)
            get_s.append(float(out["weight_get_s"]))
        return {
            "weight_put_ms": round(1e3 * statistics.median(put_s), 3),
            "weight_get_ms": round(1e3 * statistics.median(get_s), 3),
            "weight_round_trip_ms": round(1e3 * statistics.median(trip_s), 3),
        }
    finally:
        ray.kill(handle, no_restart=True)


def _updates_standalone(chunks: list[dict[str, Any]], device: str, window_s: float) -> tuple[float, int]:
    import torch

    from sacbot.agent.trainer import SacTrainer
    from sacbot.agent.trainer_config import TrainerConfig

    torch.set_num_threads(1)  # as train-fast and train_ray (--torch-threads 1)
    trainer = SacTrainer(TrainerConfig(device=device))
    for chunk in chunks:
        for obs, act, rew, done, hid in unpack_rounds(chunk["rounds"]):
            trainer.replay.add_round(obs, act, rew, done, hid)
    trainer.train_step()  # first pass: allocations, kernels
    count, started = 0, time.perf_counter()
    while time.perf_counter() - started < window_s and trainer.train_step() is not None:
        count += 1
    return count / (time.perf_counter() - started), len(trainer.replay)


def _updates_fed(
    opponents: str, envs: int, device: str, warmup: int, window_s: float, expected: float
) -> dict[str, float]:
    """updates/s of `train_ray` with 2 runners, between its first update and its last (over the whole run when
    they all fell between two progress calls). Small calls (8 vector steps) so that the run ends close to
    `window_s` of updates after the warm-up."""
    from sacbot.distributed.learner import RayProgress, train_ray

    samples: list[tuple[float, int]] = []

    def watch(progress: RayProgress) -> None:
        if progress.run_updates:
            samples.append((time.perf_counter(), progress.run_updates))

    utd = 0.25  # more than the learner keeps up with here: it runs flat out and the runners pause
    steps = warmup + int(max(expected, 1.0) * window_s / utd)
    with tempfile.TemporaryDirectory(prefix="sacbot-bench-ray-") as tmp:
        summary = train_ray(
            opponents, Path(tmp), steps=steps, runners=2, envs=envs, utd=utd, warmup_steps=warmup,
            chunk_steps=8, save_every=10**9, device=device, replay_keep=0, max_restarts=0, view=watch,
            max_turns=1_000,
        )  # fmt: skip
    if len(samples) >= 2 and samples[-1][0] > samples[0][0]:
        rate = (samples[-1][1] - samples[0][1]) / (samples[-1][0] - samples[0][0])
    else:  # every update fell between two progress calls (a loaded machine): the whole run's rate
        rate = summary.updates / max(summary.seconds, 1e-9)
    return {
        "learner_fed_updates_per_s": round(rate, 2),
        "learner_fed_utd_held": float(summary.figures["utd_held"]),
        "learner_fed_runners_paused_at_end": float(summary.figures["runners_paused"]),
    }


def bench_ray(
    opponents: str = "SpinBot",
    envs: int = 8,
    chunk_steps: int = 64,
    window_s: float = 5.0,
    device: str = "auto",
    address: str | None = None,
) -> dict[str, Any]:
    """The figures (see the module docstring), as one flat dict."""
    from sacbot.agent.trainer import SacTrainer
    from sacbot.agent.trainer_config import TrainerConfig
    from sacbot.distributed import init_ray

    ray = init_ray(address)
    sizes = TrainerConfig().sizes
    arrays = SacTrainer(TrainerConfig(device="cpu")).actor_arrays()
    spec = RunnerSpec(opponents=tuple(opponents.split(",")), envs=envs, seed=0, sizes=sizes, max_turns=1_000)
    ref = ray.put(arrays)
    inproc, chunks = _rate_inprocess(spec, arrays, chunk_steps, window_s)
    one = _rate_ray(spec, ref, 1, chunk_steps, window_s)
    two = _rate_ray(spec, ref, 2, chunk_steps, window_s)
    steps = sum(int(c["env_steps"]) for c in chunks)
    arrays_bytes = sum(payload_bytes(c) for c in chunks)
    pickled = sum(len(pickle.dumps(c, protocol=5)) for c in chunks)
    rounds = sum(len(c["results"]) for c in chunks)
    standalone, replay_steps = _updates_standalone(chunks, device, window_s)
    figures: dict[str, Any] = {
        "envs_per_runner": envs,
        "cpus": int(ray.cluster_resources().get("CPU", 0)),
        "inprocess_env_steps_per_s": round(inproc, 1),
        "ray_1_runner_env_steps_per_s": round(one, 1),
        "ray_2_runners_env_steps_per_s": round(two, 1),
        "bytes_per_env_step_arrays": round(arrays_bytes / max(1, steps), 1),
        "bytes_per_env_step_pickled": round(pickled / max(1, steps), 1),
        "rounds_in_sample": rounds,
        "actor_weights_bytes": int(sum(a.nbytes for a in arrays.values())),
        **_broadcast(spec, arrays, repeats=20),
        "learner_standalone_updates_per_s": round(standalone, 2),
        "learner_replay_steps": replay_steps,
    }
    # Warm-up: 2 runners x `envs` arenas x 600 turns, so whole rounds (SpinBot's last a few hundred) are in.
    figures.update(_updates_fed(opponents, envs, device, 2 * envs * 600, window_s, standalone))
    return figures


__all__ = ["bench_ray"]
