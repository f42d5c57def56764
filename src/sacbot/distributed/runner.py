"""An env runner: one Ray actor stepping a vectorised environment with a frozen numpy copy of the actor.

The runner is a plain class (`EnvRunner`); `runner_class` wraps it with `ray.remote` and `max_restarts`, so a
runner that dies (killed, its node lost) is started again by Ray and the learner keeps calling it. Each call
to `collect` steps the arenas `vector_steps` times (one batched `FastActor.step_batch` per step, stochastic,
the GRU state kept per arena; coloured draws with `noise_beta`) and returns the rounds that finished, whole,
as `train-fast` stores them: per round the states o_0..o_T, and per step the action, reward, done flag and the
hidden state acted from. Open rounds stay in the runner and ship in a later call. New actor weights come as a
reference into Ray's object store (put once by the learner); the runner fetches them only when their version
is newer than its own.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from sacbot.agent.sizes import NetworkSizes
from sacbot.env.train import RoundBuffer


@dataclass(frozen=True)
class RunnerSpec:
    """What every runner builds its arenas and its actor from."""

    opponents: tuple[str, ...]
    envs: int
    seed: int
    sizes: NetworkSizes
    max_turns: int | None = 5_000
    radar_mode: str = "spin"
    aim_shaping: float = 0.0
    close_shaping: float = 0.0
    surf_shaping: float = 0.0
    rounds_per_game: int = 10
    noise_beta: float = 0.0  # coloured exploration noise (`sacbot.agent.exploration`); 0: white
    gun_spread: float = 1.0  # the gun turn drawn this many times wider (`widen_gun`); 1: the policy's spread


def pack_rounds(
    rounds: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
) -> dict[str, np.ndarray]:
    """Finished rounds (obs (T+1, S), action (T, A), reward (T,), done (T,), hidden (T, H)) as five
    concatenated arrays plus `lengths` (T per round): one message, no per-round objects."""
    if not rounds:
        return {"lengths": np.zeros(0, np.int64)}
    return {
        "obs": np.concatenate([r[0] for r in rounds]),
        "action": np.concatenate([r[1] for r in rounds]),
        "reward": np.concatenate([r[2] for r in rounds]),
        "done": np.concatenate([r[3] for r in rounds]),
        "hidden": np.concatenate([r[4] for r in rounds]),
        "lengths": np.array([len(r[1]) for r in rounds], np.int64),
    }


def unpack_rounds(
    packed: dict[str, np.ndarray],
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """The rounds of `pack_rounds`, in order."""
    out = []
    s = o = 0  # step offset, obs offset (each round has one more state than steps)
    for t in packed["lengths"].tolist():
        out.append((
            packed["obs"][o : o + t + 1], packed["action"][s : s + t], packed["reward"][s : s + t],
            packed["done"][s : s + t], packed["hidden"][s : s + t],
        ))  # fmt: skip
        s += t
        o += t + 1
    return out


def payload_bytes(chunk: dict[str, Any]) -> int:
    """The bytes of a chunk's arrays (what crosses the network to the learner, less pickling overhead)."""
    return sum(int(a.nbytes) for a in chunk["rounds"].values())


class EnvRunner:
    """Steps `spec.envs` arenas; see the module docstring. One instance per Ray actor."""

    def __init__(self, index: int, spec: RunnerSpec) -> None:
        from threadpoolctl import threadpool_limits

        from sacbot.env.vector import VecTankRoyaleEnv

        threadpool_limits(limits=1, user_api="blas")  # as train-fast: spinning BLAS threads cost more
        self.index, self.spec = index, spec
        mode: Any = spec.radar_mode
        self.vec = VecTankRoyaleEnv(
            spec.envs,
            spec.opponents,
            max_turns=spec.max_turns,
            radar_mode=mode,
            aim_shaping=spec.aim_shaping,
            close_shaping=spec.close_shaping,
            surf_shaping=spec.surf_shaping,
            sizes=spec.sizes,
            rounds_per_game=spec.rounds_per_game,
        )
        self.actor: Any = None
        self.version = -1
        self.obs: np.ndarray | None = None
        self.hidden = np.zeros((spec.envs, spec.sizes.hidden), np.float32)
        self.open: list[RoundBuffer] = []
        self.calls = 0
        self.noise: Any = None  # ColouredNoise, one stream per arena, made with the first games
        self.wide: Any = None  # WideGun (gun_spread > 1): the gun turn drawn wider, made with the first games

    def pid(self) -> int:
        return os.getpid()

    def collect(
        self, vector_steps: int, version: int, weights_box: list[Any], first_env_steps: int
    ) -> dict[str, Any]:
        """Step the arenas `vector_steps` times with the weights of `version` (fetched from the object store
        through `weights_box[0]` when newer than the runner's); return the finished rounds and their results.

        `first_env_steps` (the learner's count) seeds the games of a fresh (or restarted) runner, so a restart
        or a resumed run does not replay the same games."""
        from sacbot.agent.inference import FastActor

        weight_get_s = None
        if version != self.version:
            import ray

            t0 = time.perf_counter()
            arrays = ray.get(weights_box[0])
            weight_get_s = time.perf_counter() - t0
            self.actor = FastActor(arrays, self.spec.sizes, seed=self.spec.seed + 7919 * self.index + version)
            self.version = version
        if self.obs is None:
            self.obs, _ = self.vec.reset(seed=self.spec.seed + 1_000_003 * self.index + first_env_steps)
            self.open = [RoundBuffer(obs=[self.obs[i].copy()]) for i in range(self.spec.envs)]
            if self.spec.noise_beta > 0.0:
                from sacbot.agent.exploration import ColouredNoise

                spec = self.spec
                noise_seed = spec.seed + 1_000_003 * self.index + first_env_steps + 2
                self.noise = ColouredNoise(spec.noise_beta, spec.envs, spec.sizes.action_dim, noise_seed)
            if self.spec.gun_spread != 1.0:
                from sacbot.agent.exploration import WideGun

                spec = self.spec
                spread_seed = spec.seed + 1_000_003 * self.index + first_env_steps + 3
                self.wide = WideGun(spec.gun_spread, spec.envs, spec.sizes.action_dim, spread_seed)
        started = time.perf_counter()
        finished: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        results: list[dict[str, Any]] = []
        obs, hidden = self.obs, self.hidden
        for _ in range(vector_steps):
            eps = None if self.noise is None else self.noise.draw()
            if self.wide is not None:
                eps = self.wide.draw(eps)
            state = obs[:, : self.spec.sizes.observed_dim]  # the critics' own inputs may follow
            actions, new_hidden = self.actor.step_batch(state, hidden, deterministic=False, eps=eps)
            next_obs, rewards, terminated, truncated, infos = self.vec.step(actions)
            for i, buf in enumerate(self.open):
                buf.actions.append(actions[i])
                buf.rewards.append(float(rewards[i]))
                buf.hidden.append(hidden[i])
                if terminated[i] or truncated[i]:
                    buf.obs.append(np.asarray(infos["final_obs"][i], np.float32))
                    done = np.zeros(len(buf.actions), np.float32)
                    done[-1] = 1.0 if terminated[i] else 0.0
                    finished.append((
                        np.stack(buf.obs), np.stack(buf.actions).astype(np.float32),
                        np.asarray(buf.rewards, np.float32), done, np.stack(buf.hidden),
                    ))  # fmt: skip
                    result = dict(infos["final_info"][i]["round_result"])
                    result["reward_sum"] = round(sum(buf.rewards), 6)
                    result["terminated"] = bool(terminated[i])
                    results.append(result)
                    self.open[i] = RoundBuffer(obs=[next_obs[i].copy()])
                    new_hidden[i] = 0.0
                    if self.noise is not None:
                        self.noise.restart(i)
                else:
                    buf.obs.append(next_obs[i].copy())
            obs, hidden = next_obs, new_hidden
        self.obs, self.hidden = obs, hidden
        self.calls += 1
        return {
            "runner": self.index,
            "pid": os.getpid(),
            "version": self.version,
            "env_steps": vector_steps * self.spec.envs,
            "seconds": time.perf_counter() - started,
            "weight_get_s": weight_get_s,
            "rounds": pack_rounds(finished),
            "results": results,
        }


def runner_class(max_restarts: int = -1, num_cpus: float = 1.0) -> Any:
    """`EnvRunner` as a Ray actor class: restarted by Ray up to `max_restarts` times (-1: always). Ray retries
    a call that was running when the actor died, and calls made while it restarts, on the new process (a
    fresh runner: new arenas, the weights fetched again); a call fails only once the restarts are spent."""
    import ray

    return ray.remote(max_restarts=max_restarts, max_task_retries=-1, num_cpus=num_cpus)(EnvRunner)


__all__ = ["EnvRunner", "RunnerSpec", "pack_rounds", "payload_bytes", "runner_class", "unpack_rounds"]
