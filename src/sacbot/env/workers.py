"""Arenas in worker processes: the vector environment's way to use every core.

Each worker process owns a contiguous slice of the arenas (plain `TankRoyaleEnv`s, so results are identical to
stepping them in-process). Actions, observations, rewards and done flags travel through one shared-memory
block; the pipe carries only a short command per step and, for arenas whose round just ended, the final
observation and info. Workers are forked (spawned where fork does not exist) and stop on `close()` or when the
parent goes away (they are daemons).
"""

from __future__ import annotations

import multiprocessing as mp
import time
import traceback
from collections.abc import Sequence
from multiprocessing.connection import Connection
from multiprocessing.shared_memory import SharedMemory
from typing import Any

import numpy as np

from sacbot.agent.features import ACTION_DIM, STATE_DIM


class SharedArrays:
    """Views of one shared-memory block: actions (N, 4), obs (N, 17), rewards (N,), done flags (N, 2)."""

    def __init__(self, shm: SharedMemory, n: int) -> None:
        self.shm = shm
        offset = 0

        def view(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
            nonlocal offset
            size = int(np.prod(shape)) * np.dtype(dtype).itemsize
            arr = np.ndarray(shape, dtype, buffer=shm.buf, offset=offset)
            offset += (size + 7) // 8 * 8
            return arr

        self.actions = view((n, ACTION_DIM), np.float32)
        self.obs = view((n, STATE_DIM), np.float32)
        self.rewards = view((n,), np.float64)
        self.done = view((n, 2), np.uint8)

    @staticmethod
    def nbytes(n: int) -> int:
        return 8 * (n * ACTION_DIM + n * STATE_DIM + 2 * n + n + n) + 64


def _worker(conn: Connection, shm_name: str, n: int, lo: int, env_kwargs: list[dict[str, Any]]) -> None:
    from sacbot.env.arena_env import TankRoyaleEnv

    shm = SharedMemory(name=shm_name)
    arrays = SharedArrays(shm, n)
    try:
        envs = [TankRoyaleEnv(**kw) for kw in env_kwargs]
        conn.send(("ok", None))
        while True:
            command, arg = conn.recv()
            if command == "step":
                finished = []
                acts, obs, rewards, done = arrays.actions, arrays.obs, arrays.rewards, arrays.done
                for k, env in enumerate(envs):
                    i = lo + k
                    o, r, term, trunc, info = env.step(acts[i])
                    rewards[i] = r
                    done[i, 0], done[i, 1] = term, trunc
                    if term or trunc:
                        finished.append((i, o, info))
                        o, _ = env.reset()
                    obs[i] = o
                conn.send(("ok", finished))
            elif command == "reset":
                for k, (env, seed) in enumerate(zip(envs, arg, strict=True)):
                    arrays.obs[lo + k], _ = env.reset(seed=seed)
                conn.send(("ok", None))
            elif command == "cpu":
                conn.send(("ok", time.process_time()))
            elif command == "close":
                conn.send(("ok", None))
                return
    except (EOFError, KeyboardInterrupt, BrokenPipeError):
        return
    except Exception:  # noqa: BLE001 - the parent re-raises it with the worker's traceback
        try:
            conn.send(("error", traceback.format_exc()))
        except (BrokenPipeError, OSError):
            pass
    finally:
        del arrays
        shm.close()


class WorkerPool:
    """`workers` processes stepping `len(env_kwargs)` arenas split into contiguous slices."""

    def __init__(self, env_kwargs: Sequence[dict[str, Any]], workers: int) -> None:
        self.n = n = len(env_kwargs)
        workers = max(1, min(workers, n))
        self.shm = SharedMemory(create=True, size=SharedArrays.nbytes(n))
        self.arrays = SharedArrays(self.shm, n)
        # fork: no re-import of the caller's main module, and a start in milliseconds. The workers never touch
        # torch or threads, so forking beside a trainer's thread pool is safe; elsewhere spawn.
        ctx: Any = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        bounds = [round(k * n / workers) for k in range(workers + 1)]
        self.conns: list[Connection] = []
        self.procs: list[Any] = []
        try:
            for k in range(workers):
                lo, hi = bounds[k], bounds[k + 1]
                parent, child = ctx.Pipe()
                proc = ctx.Process(
                    target=_worker, args=(child, self.shm.name, n, lo, list(env_kwargs[lo:hi])), daemon=True
                )
                proc.start()
                child.close()
                self.conns.append(parent)
                self.procs.append(proc)
            self.bounds = bounds
            self._collect()
        except BaseException:
            self.close()
            raise

    def _collect(self) -> list[Any]:
        replies = []
        for conn in self.conns:
            try:
                status, payload = conn.recv()
            except EOFError:
                raise RuntimeError("an arena worker process died") from None
            if status == "error":
                raise RuntimeError(f"an arena worker failed:\n{payload}")
            replies.append(payload)
        return replies

    def reset(self, seeds: Sequence[int | None]) -> None:
        for k, conn in enumerate(self.conns):
            conn.send(("reset", list(seeds[self.bounds[k] : self.bounds[k + 1]])))
        self._collect()

    def step(self) -> list[tuple[int, np.ndarray, dict[str, Any]]]:
        for conn in self.conns:
            conn.send(("step", None))
        return [item for finished in self._collect() for item in finished]

    def cpu_seconds(self) -> float:
        for conn in self.conns:
            conn.send(("cpu", None))
        return float(sum(self._collect()))

    def close(self) -> None:
        for conn in self.conns:
            try:
                conn.send(("close", None))
            except (BrokenPipeError, OSError):
                pass
        for proc in self.procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=5)
        for conn in self.conns:
            conn.close()
        self.conns, self.procs = [], []
        if getattr(self, "arrays", None) is not None:
            self.arrays = None  # type: ignore[assignment]
            self.shm.close()
            self.shm.unlink()
