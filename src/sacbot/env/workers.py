"""Arenas in worker processes: the vector environment's way to use every core.

Each worker process owns a contiguous slice of the arenas (plain `TankRoyaleEnv`s, so results are identical to
stepping them in-process). Actions, observations, rewards and done flags travel through one shared-memory
block; the pipe carries only a short command per step and, for arenas whose round just ended, the final
observation and info. Workers are forked (spawned where fork does not exist) and stop on `close()` or when the
parent goes away (they are daemons).
"""

from __future__ import annotations

import multiprocessing as mp
import pickle
import time
import traceback
from collections.abc import Sequence
from multiprocessing.connection import Connection
from multiprocessing.shared_memory import SharedMemory
from typing import Any

import numpy as np

from sacbot.agent.features import ACTION_DIM, STATE_DIM

# The step command and the usual reply (no round ended), pickled once: they travel every step.
_STEP = pickle.dumps(("step", None))
_OK_NONE_FINISHED = pickle.dumps(("ok", []))


class SharedArrays:
    """Views of one shared-memory block: actions (N, 4), obs (N, W) (W = 17, or 35 with the bullet inputs),
    rewards (N,), done flags (N, 2)."""

    def __init__(self, shm: SharedMemory, n: int, obs_dim: int = STATE_DIM) -> None:
        self.shm = shm
        offset = 0

        def view(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
            nonlocal offset
            size = int(np.prod(shape)) * np.dtype(dtype).itemsize
            arr = np.ndarray(shape, dtype, buffer=shm.buf, offset=offset)
            offset += (size + 7) // 8 * 8
            return arr

        self.actions = view((n, ACTION_DIM), np.float32)
        self.obs = view((n, obs_dim), np.float32)
        self.rewards = view((n,), np.float64)
        self.done = view((n, 2), np.uint8)

    @staticmethod
    def nbytes(n: int, obs_dim: int = STATE_DIM) -> int:
        return 8 * (n * ACTION_DIM + n * obs_dim + 2 * n + n + n) + 64


def _worker(
    commands: Connection,
    conn: Connection,
    shm_name: str,
    n: int,
    obs_dim: int,
    lo: int,
    env_kwargs: list[dict[str, Any]],
    parent_ends: list[Connection],
) -> None:
    """Serve `commands` (reset / step / cpu / close) for arenas lo.. and answer each on `conn`."""
    for end in parent_ends:  # forked copies of the parent's pipe ends: closed, so a dead parent reads as EOF
        end.close()
    from sacbot.env.arena_env import TankRoyaleEnv

    shm = SharedMemory(name=shm_name)
    arrays = SharedArrays(shm, n, obs_dim)
    try:
        envs = [TankRoyaleEnv(**kw) for kw in env_kwargs]
        conn.send(("ok", None))
        while True:
            command, arg = commands.recv()
            if command == "step":
                finished = []
                obs, rewards, done = arrays.obs, arrays.rewards, arrays.done
                rows = arrays.actions[lo : lo + len(envs)].tolist()  # plain floats, one conversion
                for k, env in enumerate(envs):
                    i = lo + k
                    o, r, term, trunc, info = env.step(rows[k], out=obs[i])  # written in place
                    rewards[i] = r
                    done[i, 0], done[i, 1] = term, trunc
                    if term or trunc:
                        finished.append((i, o.copy(), info))  # its row gets the next round's start
                        obs[i], _ = env.reset()
                if finished:
                    conn.send(("ok", finished))
                else:
                    conn.send_bytes(_OK_NONE_FINISHED)
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
    """`workers` processes stepping arenas `first..len(env_kwargs)-1` split into contiguous slices.

    The arenas before `first` are the caller's to step (it writes their rows of the shared arrays itself):
    `send_step()`, then step those, then `collect_step()` keeps this process busy while the workers run.
    """

    def __init__(
        self, env_kwargs: Sequence[dict[str, Any]], workers: int, first: int = 0, obs_dim: int = STATE_DIM
    ) -> None:
        self.n = n = len(env_kwargs)
        if not 0 <= first < n:
            raise ValueError(f"first must be in [0, {n}), not {first}")
        workers = max(1, min(workers, n - first))
        self.shm = SharedMemory(create=True, size=SharedArrays.nbytes(n, obs_dim))
        self.arrays = SharedArrays(self.shm, n, obs_dim)
        # fork: no re-import of the caller's main module, and a start in milliseconds. The workers never touch
        # torch or threads, so forking beside a trainer's thread pool is safe; elsewhere spawn.
        forked = "fork" in mp.get_all_start_methods()
        ctx: Any = mp.get_context("fork" if forked else "spawn")
        bounds = [first + round(k * (n - first) / workers) for k in range(workers + 1)]
        # Two one-way pipes per worker, not one duplex socket pair: a round trip costs about half as much.
        self.conns: list[Connection] = []  # replies from the workers
        self.commands: list[Connection] = []  # commands to the workers
        self.procs: list[Any] = []
        try:
            for k in range(workers):
                lo, hi = bounds[k], bounds[k + 1]
                command_in, command_out = ctx.Pipe(duplex=False)
                reply_in, reply_out = ctx.Pipe(duplex=False)
                # A forked worker inherits every parent-side pipe end made so far, its own included.
                inherited = [*self.commands, *self.conns, command_out, reply_in] if forked else []
                kws = list(env_kwargs[lo:hi])
                args = (command_in, reply_out, self.shm.name, n, obs_dim, lo, kws, inherited)
                proc = ctx.Process(target=_worker, args=args, daemon=True)
                proc.start()
                command_in.close()
                reply_out.close()
                self.commands.append(command_out)
                self.conns.append(reply_in)
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
        for k, conn in enumerate(self.commands):
            conn.send(("reset", list(seeds[self.bounds[k] : self.bounds[k + 1]])))
        self._collect()

    def step(self) -> list[tuple[int, np.ndarray, dict[str, Any]]]:
        self.send_step()
        return self.collect_step()

    def send_step(self) -> None:
        """Start one step of every worker's arenas (actions already in the shared arrays)."""
        for conn in self.commands:
            conn.send_bytes(_STEP)

    def collect_step(self) -> list[tuple[int, np.ndarray, dict[str, Any]]]:
        """Wait for the step started by `send_step`; the (index, final obs, info) of rounds that ended."""
        return [item for finished in self._collect() for item in finished]

    def cpu_seconds(self) -> float:
        for conn in self.commands:
            conn.send(("cpu", None))
        return float(sum(self._collect()))

    def close(self) -> None:
        for conn in self.commands:
            try:
                conn.send(("close", None))
            except (BrokenPipeError, OSError):
                pass
        for proc in self.procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=5)
        for conn in (*self.commands, *self.conns):
            conn.close()
        self.commands, self.conns, self.procs = [], [], []
        if getattr(self, "arrays", None) is not None:
            self.arrays = None  # type: ignore[assignment]
            self.shm.close()
            self.shm.unlink()
