"""`sacbot bench env`: Gymnasium environment steps per second, single and 16 vectorised arenas.

Random actions (drawn up front), one opponent (SpinBot), rounds played out with autoreset; the median of
`runs` runs. The main figures are wall-clock steps per second, as the targets are (10,000 single, 30,000 for
16 arenas on a 2-core machine):

- `steps_per_s_single`: one `TankRoyaleEnv`.
- `steps_per_s_vec16`: `VecTankRoyaleEnv(16)` in the faster of its two forms on this machine (named by
  `vec16_form`):
  - `steps_per_s_vec16_inprocess`: all 16 arenas in this process (`workers=0`, the default);
  - `steps_per_s_vec16_worker`: this process steps 8 arenas while one worker process steps the other 8
    (`workers=1, step_in_parent=True`), one pipe round trip per step. On these VMs a round trip costs
    50-150 us, so with the compiled engine (`sacbot.compiled`, `engine` says which one ran) the in-process
    form is usually the faster. On a single core only the in-process form is measured.

The machines are shared, so wall-clock rates also measure the other processes; the `*_cpu` keys give steps
per CPU-second (`time.process_time`, summed over this process and its workers), which is what one free core
sustains, and `steps_per_s_vec16_cpu_bound_2_cores` twice the worker form's: what two free cores sustain when
the two processes each keep one busy.
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np

from sacbot.env.arena_env import TankRoyaleEnv
from sacbot.env.vector import VecTankRoyaleEnv


def _single(steps: int, seed: int, opponent: str) -> tuple[float, float]:
    """Steps per CPU-second and per wall-clock second of one environment."""
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


def _vector(
    num_envs: int, steps: int, seed: int, opponent: str, workers: int = 0, step_in_parent: bool = False
) -> tuple[float, float]:
    """Steps per CPU-second (this process plus its workers) and per wall-clock second."""
    vec = VecTankRoyaleEnv(num_envs, opponent, workers=workers, step_in_parent=step_in_parent)
    try:
        batches = max(1, steps // num_envs)
        actions = np.random.default_rng(seed).uniform(-1, 1, (batches, num_envs, 4)).astype(np.float32)
        vec.reset(seed=seed)
        cpu, wall, worker_cpu = time.process_time(), time.perf_counter(), vec.worker_cpu_seconds()
        for batch in actions:
            vec.step(batch)
        wall = time.perf_counter() - wall
        cpu = time.process_time() - cpu + vec.worker_cpu_seconds() - worker_cpu
    finally:
        vec.close()
    return batches * num_envs / max(cpu, 1e-9), batches * num_envs / wall


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def bench_env(runs: int = 3, steps: int = 20_000, opponent: str = "SpinBot") -> dict[str, float | str]:
    from sacbot.compiled import engine_is_compiled

    two_cores = usable_cores() >= 2
    single = [_single(steps, seed, opponent) for seed in range(runs)]
    inproc = [_vector(16, steps, seed, opponent) for seed in range(runs)]
    vec16 = (
        [_vector(16, steps, seed, opponent, workers=1, step_in_parent=True) for seed in range(runs)]
        if two_cores
        else inproc
    )

    def wall(rs: list[tuple[float, float]]) -> float:
        return round(statistics.median(r[1] for r in rs), 1)

    def cpu(rs: list[tuple[float, float]]) -> float:
        return round(statistics.median(r[0] for r in rs), 1)

    worker_faster = wall(vec16) > wall(inproc)
    return {
        "engine": "compiled" if engine_is_compiled() else "python",
        "steps_per_s_single": wall(single),
        "steps_per_s_vec16": max(wall(vec16), wall(inproc)),
        "vec16_form": "1 worker + this process" if worker_faster else "in-process",
        "steps_per_s_vec16_inprocess": wall(inproc),
        "steps_per_s_vec16_worker": wall(vec16),
        "steps_per_s_single_cpu": cpu(single),
        "steps_per_s_vec16_worker_cpu": cpu(vec16),
        "steps_per_s_vec16_inprocess_cpu": cpu(inproc),
        "steps_per_s_vec16_cpu_bound_2_cores": round(2 * cpu(vec16), 1),
    }
