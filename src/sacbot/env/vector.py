"""`VecTankRoyaleEnv`: N in-process arenas stepped together, for one batched actor call per step.

A Gymnasium `VectorEnv` with same-step autoreset: when arena i ends its round, `step` returns the first
observation of its next round in row i and puts the finished round's last observation and info under
`infos["final_obs"][i]` / `infos["final_info"][i]` (masks `_final_obs`, `_final_info`), as Gymnasium's
`AutoresetMode.SAME_STEP` does. Arena i plays opponent `opponents[i % len(opponents)]`, so a list of opponents
is spread evenly; with `opponent_source(i, seed)` each new game of arena i asks it for its opponent instead
(train-fast's league, `sacbot.env.league`; in-process arenas only). Every arena observes what networks of
`sizes` read (`TankRoyaleEnv`). Per step it allocates only the returned arrays; infos stay empty until a round
ends.

`workers=0` steps every arena in this process; `workers=k` spreads them over k worker processes
(`sacbot.env.workers`), for machines with more than one core. With `step_in_parent=True` this process steps a
share too (k + 1 slices) while the workers step theirs: on 2 cores, `workers=1, step_in_parent=True` keeps
both busy with one pipe round trip per step. The results are the same either way: each arena is the same
`TankRoyaleEnv` with the same seeds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from sacbot.agent.features import RadarMode
from sacbot.agent.sizes import NetworkSizes
from sacbot.env.arena_env import TankRoyaleEnv, parse_opponents
from sacbot.env.workers import WorkerPool
from sacbot.errors import UserError
from sacbot.opponents import ClassicBot


class VecTankRoyaleEnv(VectorEnv[np.ndarray, np.ndarray, np.ndarray]):
    """`num_envs` arenas, each a `TankRoyaleEnv` against one of `opponents` (round-robin over the arenas)."""

    metadata: dict[str, Any] = {"render_modes": [], "autoreset_mode": AutoresetMode.SAME_STEP}

    pool: WorkerPool | None

    def __init__(
        self,
        num_envs: int = 8,
        opponents: str | Sequence[str] = "SpinBot",
        *,
        game_type: str = "1v1",
        rounds_per_game: int = 10,
        radar_mode: RadarMode = "spin",
        max_turns: int | None = None,
        aim_shaping: float = 0.0,
        close_shaping: float = 0.0,
        surf_shaping: float = 0.0,
        sizes: NetworkSizes | None = None,
        workers: int = 0,
        step_in_parent: bool = False,
        opponent_source: Callable[[int, int], tuple[str, ClassicBot]] | None = None,
    ) -> None:
        if num_envs < 1:
            raise UserError(f"need at least one environment, not {num_envs}", exit_code=2)
        if workers < 0:
            raise UserError(f"workers must be 0 (in-process) or more, not {workers}", exit_code=2)
        if opponent_source is not None and workers > 0:
            # The source (train-fast's league) lives in this process: its draws, results and snapshots.
            raise UserError(
                "opponents drawn per game (--sampling weights/pfsp) need --workers 0", exit_code=2
            )
        names = parse_opponents(opponents)
        kwargs: list[dict[str, Any]] = [
            {
                "opponent": names[i % len(names)],
                "game_type": game_type,
                "rounds_per_game": rounds_per_game,
                "radar_mode": radar_mode,
                "max_turns": max_turns,
                "aim_shaping": aim_shaping,
                "close_shaping": close_shaping,
                "surf_shaping": surf_shaping,
                "sizes": sizes,
            }
            for i in range(num_envs)
        ]
        if opponent_source is not None:
            for i, kw in enumerate(kwargs):  # arena i's new games ask the source, with i
                kw["opponent_source"] = functools.partial(opponent_source, i)
        first = TankRoyaleEnv(**kwargs[0])  # checks the arguments here, before any worker starts
        # Arenas 0..local-1 are stepped here, the rest by the workers.
        if workers == 0 or num_envs == 1:
            local = num_envs
        elif step_in_parent:
            local = min(num_envs - 1, max(1, round(num_envs / (workers + 1))))
        else:
            local = 0
        self.envs = ([first] + [TankRoyaleEnv(**kw) for kw in kwargs[1:local]]) if local else []
        self.obs_dim = first.obs_dim  # 17, more with the extra inputs (`NetworkSizes.stored_dim`)
        self.pool: WorkerPool | None = (
            WorkerPool(kwargs, workers, first=local, obs_dim=self.obs_dim) if local < num_envs else None
        )
        self.num_envs = num_envs
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.opponent_names = [kw["opponent"] for kw in kwargs]

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if seed is None or isinstance(seed, int):
            seeds = [None if seed is None else seed + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"{len(seeds)} seeds for {self.num_envs} environments")
        pool = self.pool
        obs = np.empty((self.num_envs, self.obs_dim), np.float32) if pool is None else pool.arrays.obs
        for i, (env, s) in enumerate(zip(self.envs, seeds, strict=False)):
            obs[i], _ = env.reset(seed=s)
        if pool is not None:
            pool.reset(seeds)
            return obs.copy(), {}
        return obs, {}

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        n = self.num_envs
        actions = np.asarray(actions, dtype=np.float32).reshape(n, -1)
        if self.pool is not None:
            return self._step_workers(actions)
        obs = np.empty((n, self.obs_dim), np.float32)
        rewards = np.empty(n, np.float64)
        terminated = np.zeros(n, np.bool_)
        truncated = np.zeros(n, np.bool_)
        finished = self._step_here(actions, obs, rewards, terminated, truncated)
        return obs, rewards, terminated, truncated, self._final_infos(finished)

    def _step_here(
        self,
        actions: np.ndarray,
        obs: np.ndarray,
        rewards: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray,
    ) -> list[tuple[int, np.ndarray, dict[str, Any]]]:
        """Step this process's arenas (rows 0..len(envs)-1), autoresetting finished rounds."""
        finished = []
        rows = actions[: len(self.envs)].tolist()  # plain floats, one conversion for all rows
        for i, env in enumerate(self.envs):
            o, r, term, trunc, info = env.step(rows[i], out=obs[i])  # written in place: no copy
            rewards[i] = r
            if term or trunc:
                terminated[i], truncated[i] = term, trunc
                finished.append((i, o.copy(), info))  # its row is overwritten by the next round's start
                obs[i], _ = env.reset()
        return finished

    def _final_infos(self, finished: list[tuple[int, np.ndarray, dict[str, Any]]]) -> dict[str, Any]:
        if not finished:
            return {}
        n = self.num_envs
        infos: dict[str, Any] = {
            "final_obs": np.full(n, None, object),
            "_final_obs": np.zeros(n, np.bool_),
            "final_info": np.full(n, None, object),
            "_final_info": np.zeros(n, np.bool_),
        }
        for i, o, info in sorted(finished, key=lambda item: item[0]):
            infos["final_obs"][i], infos["_final_obs"][i] = o, True
            infos["final_info"][i], infos["_final_info"][i] = info, True
        return infos

    def _step_workers(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        pool = self.pool
        assert pool is not None
        shared = pool.arrays
        shared.actions[:] = actions
        pool.send_step()
        finished: list[tuple[int, np.ndarray, dict[str, Any]]] = []
        try:
            if self.envs:  # this process's share, while the workers step theirs
                done = shared.done
                done[: len(self.envs)] = 0
                finished = self._step_here(actions, shared.obs, shared.rewards, done[:, 0], done[:, 1])
        finally:
            finished += pool.collect_step()  # always: the next step must not read this step's replies
        done = shared.done.astype(np.bool_)
        return shared.obs.copy(), shared.rewards.copy(), done[:, 0], done[:, 1], self._final_infos(finished)

    def worker_cpu_seconds(self) -> float:
        """CPU seconds used so far by the worker processes (0 when stepping in-process)."""
        return self.pool.cpu_seconds() if self.pool is not None else 0.0

    def close_extras(self, **kwargs: Any) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None
        for env in self.envs:
            env.close()
