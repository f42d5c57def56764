"""`sacbot bench env`: Gymnasium environment steps per second, single and 16 vectorised arenas.

Random actions (drawn up front), one opponent (SpinBot), rounds played out with autoreset; the median of
`runs` runs. As in `sacbot bench engine`, the main figures are steps per CPU-second of this process
(`time.process_time`): the machines are shared, and wall-clock rates mostly measure the other processes. The
wall-clock medians are given too (`*_wall`). The 16 arenas also run in 2 worker processes
(`VecTankRoyaleEnv(workers=2)`): its wall-clock rate, and the rate two free cores sustain at its measured CPU
cost (all processes), as `sacbot bench arena` reports its CPU-bound figure.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from sacbot.env.arena_env import TankRoyaleEnv
from sacbot.env.vector import VecTankRoyaleEnv


def _single(steps: int, seed: int, opponent: str) -> tuple[float, float]:
    env = TankRoyaleEnv(opponent)
    actions = np.random.default_rng(seed).uniform(-1, 1, (steps, 4)).astype(np.float32)
    env.reset(seed=seed)
    cpu, wall = time.process_time(), time.perf_counter()
    for action in actions:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return steps / max(cpu, 1e-9), steps / wall


def _vector(num_envs: int, steps: int, seed: int, opponent: str, workers: int = 0) -> tuple[float, float]:
    """Steps per CPU-second (this process plus its workers) and per wall-clock second."""
    vec = VecTankRoyaleEnv(num_envs, opponent, workers=workers)
    batches = max(1, steps // num_envs)
    actions = np.random.default_rng(seed).uniform(-1, 1, (batches, num_envs, 4)).astype(np.float32)
    vec.reset(seed=seed)
    cpu, wall, worker_cpu = time.process_time(), time.perf_counter(), vec.worker_cpu_seconds()
    for batch in actions:
        vec.step(batch)
    wall = time.perf_counter() - wall
    cpu = time.process_time() - cpu + vec.worker_cpu_seconds() - worker_cpu
    vec.close()
    return batches * num_envs / max(cpu, 1e-9), batches * num_envs / wall


def bench_env(runs: int = 3, steps: int = 20_000, opponent: str = "SpinBot") -> dict[str, float]:
    single = [_single(steps, seed, opponent) for seed in range(runs)]
    vec16 = [_vector(16, steps, seed, opponent) for seed in range(runs)]
    workers2 = [_vector(16, steps, seed, opponent, workers=2) for seed in range(runs)]
    return {
        "steps_per_s_single": round(statistics.median(r[0] for r in single), 1),
        "steps_per_s_vec16": round(statistics.median(r[0] for r in vec16), 1),
        "steps_per_s_single_wall": round(statistics.median(r[1] for r in single), 1),
        "steps_per_s_vec16_wall": round(statistics.median(r[1] for r in vec16), 1),
        # 16 arenas in 2 worker processes: wall-clock here, and what two free cores sustain at its CPU cost.
        "steps_per_s_vec16_2workers_wall": round(statistics.median(r[1] for r in workers2), 1),
        "steps_per_s_vec16_2workers_2cores": round(2 * statistics.median(r[0] for r in workers2), 1),
    }
