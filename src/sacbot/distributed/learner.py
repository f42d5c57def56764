"""`sacbot train-fast --ray`: N env runners (Ray actors) feed one learner (this process) that owns the replay
and the SAC-GRU updates (`SacTrainer`, on the GPU when there is one).

- Data: each runner's `collect` returns finished rounds, whole, with the hidden state of every step; they go
  into the sequence replay as train-fast's do (`add_round`). Env steps count when a runner reports them.
- Weights: every `sync_every` updates the learner puts the actor's arrays into Ray's object store once
  (`ray.put`); each runner's next call carries the reference and the runner `ray.get`s it when it is newer.
- Rate control: the update-to-data ratio `utd` (SAC updates per env step after the warm-up) is held by
  throttling. The learner runs the updates it owes as data arrives and, when it owes none, waits for data; a
  runner is called again only while the data not yet paid for by updates stays under `max_ahead` env steps,
  so runners pause while the learner lags. Updates owed while the replay holds no complete window are waived
  (counted in `waived`).
- Faults: runners are Ray actors with `max_restarts`; Ray restarts a runner that died (a fresh process with
  fresh arenas) and retries its call there. A call that still fails is dropped and the runner called again a
  second later; a runner whose restarts are spent is left out, and the run stops only when none is left.
- Checkpoints: exactly as train-fast, through its saver (`sacbot.env.fast_saver`: `latest.zip`, `best.zip`,
  `opponents/<Opponent>.zip` with the same score kind, `rounds.jsonl`, `training_metrics.jsonl`,
  `round_counter.json`, the kept replay); a run with the same `out` resumes from its folder. Metrics lines
  carry the ratio held and the throughput figures.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sacbot.distributed.runner import RunnerSpec, payload_bytes, runner_class, unpack_rounds
from sacbot.errors import UserError


@dataclass
class RayProgress:
    """What the live view and the metrics lines show; updated by the learner as it goes."""

    runners: int
    handles: list[Any] = field(default_factory=list)  # the runners' Ray actor handles
    alive: list[bool] = field(default_factory=list)
    pids: list[set[int]] = field(default_factory=list)  # every process id each runner has had
    failures: int = 0  # calls that failed (the runner unreachable or gone for good)
    env_steps: int = 0  # the trainer's count (a resumed run goes on from its checkpoint)
    run_env_steps: int = 0  # this run's
    run_updates: int = 0
    rounds: int = 0
    waived: int = 0
    paused: int = 0  # runners not called right now because the learner lags
    paused_s: float = 0.0  # runner-seconds spent held back so far
    payload_bytes: int = 0
    weight_puts: int = 0
    weight_put_s: float = 0.0
    weight_gets: int = 0
    weight_get_s: float = 0.0
    started: float = field(default_factory=time.perf_counter)
    utd_target: float = 0.0
    warmup_steps: int = 0
    last_metrics: dict[str, float] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return max(time.perf_counter() - self.started, 1e-9)

    @property
    def utd_held(self) -> float:
        """Updates per env step after the warm-up, in this run."""
        return self.run_updates / max(1, self.run_env_steps - self.warmup_steps)

    def figures(self) -> dict[str, float | int]:
        return {
            "runners": self.runners,
            "runners_alive": sum(self.alive),
            "runner_restarts": sum(max(0, len(p) - 1) for p in self.pids),
            "runner_call_failures": self.failures,
            "runners_paused": self.paused,
            "runner_paused_s": round(self.paused_s, 3),
            "env_steps_per_s": round(self.run_env_steps / self.seconds, 1),
            "updates_per_s": round(self.run_updates / self.seconds, 2),
            "utd_target": self.utd_target,
            "utd_held": round(self.utd_held, 5),
            "updates_waived": self.waived,
            "bytes_per_env_step": round(self.payload_bytes / max(1, self.run_env_steps), 1),
            "weight_put_ms": round(1e3 * self.weight_put_s / max(1, self.weight_puts), 3),
            "weight_get_ms": round(1e3 * self.weight_get_s / max(1, self.weight_gets), 3),
        }


@dataclass
class RayTrainingSummary:
    env_steps: int
    updates: int
    rounds: int
    seconds: float
    out: Path
    score_share: dict[str, float]
    wins: dict[str, int]
    figures: dict[str, float | int]
    runner_pids: list[set[int]]


def train_ray(
    opponents: str | Sequence[str],
    out: str | os.PathLike[str],
    *,
    steps: int = 100_000,
    runners: int = 2,
    envs: int = 8,
    seed: int = 0,
    utd: float = 0.125,
    warmup_steps: int = 2_000,
    save_every: int = 20_000,
    sync_every: int = 50,
    chunk_steps: int = 64,
    max_ahead: int | None = None,
    best_window: int = 10,
    device: str | None = None,
    max_turns: int | None = 5_000,
    rounds_per_game: int = 10,
    torch_threads: int | None = 1,
    replay_keep: int = 50_000,
    address: str | None = None,
    num_cpus: int | None = None,
    runner_cpus: float = 1.0,
    max_restarts: int = -1,
    log: Callable[[str], None] | None = None,
    view: Callable[[RayProgress], None] | None = None,
) -> RayTrainingSummary:
    """Train for `steps` env steps (summed over runners and arenas) and write checkpoints into `out`.

    `utd`: SAC updates per env step after `warmup_steps` (train-fast's `--updates-per-step 1` with 8 arenas is
    0.125). `chunk_steps`: vector steps per runner call. `max_ahead`: env steps of data the runners may be
    ahead of the updates before they pause (default: two calls of every runner). `view` is called with the
    progress after every runner call and at least once a second.
    """
    from sacbot.distributed import init_ray, require_ray
    from sacbot.env.league import parse_weighted_opponents

    require_ray()
    weighted = parse_weighted_opponents(opponents)
    if any(w != 1.0 for _, w in weighted):
        raise UserError("--ray: opponents are spread over the arenas; weights (Name:w) are not taken", 2)
    names = tuple(name for name, _ in weighted)
    if steps < 1 or envs < 1 or runners < 1 or chunk_steps < 1 or utd < 0 or not math.isfinite(utd):
        raise UserError("--steps, --envs, --runners must be at least 1 and the UTD ratio 0 or more", 2)
    from sacbot.agent.trainer import SacTrainer
    from sacbot.checkpoint import latest_path
    from sacbot.env.fast_saver import FastSaver, resume, resumed_meta, training_record
    from sacbot.runtime.learner import AgentLearner
    from sacbot.runtime.startup import (
        network_sizes_for,
        radar_mode_for,
        target_entropy_for,
        trainer_config_for,
    )
    from sacbot.settings import load_sacbot_settings

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} exists and is not a folder", exit_code=2)
    out.mkdir(parents=True, exist_ok=True)
    say = log or (lambda line: None)
    settings = load_sacbot_settings()  # as train-fast and `sacbot play`: training sees what play will see
    resumed = resumed_meta(out)
    radar_mode, _ = radar_mode_for(settings.radar_mode, resumed)
    sizes = network_sizes_for(settings, resumed)
    trainer = SacTrainer(
        trainer_config_for(
            settings,
            sizes,
            device=settings.device if device is None else device,
            seed=seed,
            target_entropy=target_entropy_for(settings.target_entropy, resumed),
            critic_warmup=settings.critic_warmup or 0,
            anchor=settings.anchor or 0.0,
        )
    )
    learner = AgentLearner(trainer)  # updates, saves and the kept replay as `sacbot play`'s trainer thread
    sizes = trainer.config.sizes
    resume(out, learner, replay_keep, say)
    if torch_threads:
        import torch

        torch.set_num_threads(torch_threads)
    trained_with = training_record(settings, trainer.config, radar_mode, names, "spread")
    trained_with["ray_runners"] = runners
    saver = FastSaver(out, names, best_window, trained_with)
    ray = init_ray(address, num_cpus)
    from ray.exceptions import ActorDiedError, RayError

    spec = RunnerSpec(
        opponents=names, envs=envs, seed=seed, sizes=sizes, max_turns=max_turns, radar_mode=radar_mode,
        aim_shaping=settings.aim_shaping, close_shaping=settings.close_shaping,
        surf_shaping=settings.surf_shaping,
        rounds_per_game=rounds_per_game, noise_beta=settings.noise_beta, gun_spread=settings.gun_spread,
    )  # fmt: skip
    cls = runner_class(max_restarts=max_restarts, num_cpus=runner_cpus)
    ahead_cap = max_ahead if max_ahead is not None else 2 * runners * chunk_steps * envs
    progress = RayProgress(runners=runners, utd_target=utd, warmup_steps=warmup_steps)
    progress.handles = [cls.remote(i, spec) for i in range(runners)]
    progress.alive = [True] * runners
    progress.pids = [set() for _ in range(runners)]
    progress.env_steps = trainer.env_steps
    progress.rounds = saver.rounds_total
    start_steps = trainer.env_steps
    next_save = start_steps + save_every
    saved_at = -1
    version = 0
    weights_ref: Any = None

    def broadcast() -> None:
        nonlocal version, weights_ref
        t0 = time.perf_counter()
        weights_ref = ray.put(trainer.actor_arrays())  # once; every runner gets it from the object store
        progress.weight_put_s += time.perf_counter() - t0
        progress.weight_puts += 1
        version += 1

    def save() -> None:
        saver.save(learner, {**progress.last_metrics, **progress.figures()})
        say(f"saved {latest_path(out)} (env steps {trainer.env_steps}, updates {trainer.updates})")

    pending: dict[Any, int] = {}
    idle: set[int] = set()
    dead: set[int] = set()  # runners whose restarts are spent
    retry_at: dict[int, float] = {}
    held_since: dict[int, float] = {}  # runners held back by the throttle, since when

    def call(i: int) -> None:
        if i in held_since:
            progress.paused_s += time.perf_counter() - held_since.pop(i)
        ref = progress.handles[i].collect.remote(chunk_steps, version, [weights_ref], trainer.env_steps)
        pending[ref] = i
        idle.discard(i)

    def owed() -> int:
        paid_steps = progress.run_env_steps - warmup_steps
        return max(0, math.floor(utd * paid_steps) - progress.waived - progress.run_updates)

    def ahead() -> float:
        """Env steps of data not yet paid for by updates (0 without updates)."""
        if utd <= 0:
            return 0.0
        return max(0, progress.run_env_steps - warmup_steps) - (progress.run_updates + progress.waived) / utd

    def call_idle() -> None:
        now = time.perf_counter()
        for i in sorted(idle):
            if i in dead or retry_at.get(i, 0.0) > now:
                continue
            if owed() > 0 and ahead() + len(pending) * chunk_steps * envs > ahead_cap:
                # The learner lags: this runner waits (never while the learner has nothing to do).
                held_since.setdefault(i, now)
                continue
            call(i)
        progress.paused = len(idle)

    def ingest(chunk: dict[str, Any]) -> None:
        i = chunk["runner"]
        progress.alive[i] = True
        progress.pids[i].add(int(chunk["pid"]))
        if chunk["weight_get_s"] is not None:
            progress.weight_gets += 1
            progress.weight_get_s += float(chunk["weight_get_s"])
        progress.payload_bytes += payload_bytes(chunk)
        for (obs, act, rew, done, hid), result in zip(unpack_rounds(chunk["rounds"]), chunk["results"],
                                                       strict=True):  # fmt: skip
            if len(act) <= trainer.replay.capacity:
                trainer.replay.add_round(obs, act, rew, done, hid)
            terminated = bool(result.pop("terminated"))
            saver.round_end(result, terminated, trainer.env_steps, runner=i)
        trainer.env_steps += int(chunk["env_steps"])
        progress.run_env_steps += int(chunk["env_steps"])
        progress.env_steps = trainer.env_steps
        progress.rounds = saver.rounds_total

    def train_owed() -> None:
        last_sync = trainer.updates
        while owed() > 0:
            metrics = learner.update()
            if not metrics:  # no complete window yet: the owed updates are waived
                progress.waived += owed()
                break
            progress.last_metrics = metrics
            progress.run_updates += 1
            if trainer.updates - last_sync >= sync_every:
                broadcast()
                last_sync = trainer.updates
            if len(pending) < runners:
                call_idle()  # resume paused runners as soon as the learner has caught up enough

    last_view = 0.0
    try:
        broadcast()
        for i in range(runners):
            call(i)
        while progress.run_env_steps < steps:
            if pending:
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
            else:  # every runner paused or waiting to be called again
                ready = []
                time.sleep(0.05)
            for ref in ready:
                i = pending.pop(ref)
                idle.add(i)
                try:
                    chunk = ray.get(ref)
                except RayError as exc:
                    progress.alive[i] = False
                    progress.failures += 1
                    if isinstance(exc, ActorDiedError):  # retried by Ray until its restarts were spent
                        dead.add(i)
                        say(f"runner {i} is gone ({type(exc).__name__}); training goes on without it")
                        if len(dead) == runners:
                            raise UserError("every Ray runner is gone (their restarts are spent)") from exc
                    else:
                        retry_at[i] = time.perf_counter() + 1.0
                        say(f"runner {i} failed ({type(exc).__name__}); calling it again, training goes on")
                    continue
                ingest(chunk)
            if progress.run_env_steps < steps:
                call_idle()
            train_owed()
            if progress.run_env_steps < steps:
                call_idle()
            if trainer.env_steps >= next_save:
                save()
                saved_at = trainer.env_steps
                while next_save <= trainer.env_steps:
                    next_save += save_every
            if view is not None and (ready or time.perf_counter() - last_view >= 1.0):
                view(progress)
                last_view = time.perf_counter()
        if saved_at != trainer.env_steps:
            save()
    finally:
        if pending:  # let the calls in flight (one short call each) end, so none is retried after the kill
            ray.wait(list(pending), num_returns=len(pending), timeout=10.0)
        for handle in progress.handles:
            ray.kill(handle, no_restart=True)
    if replay_keep > 0:
        rounds, kept_steps = saver.keep_replay(learner, replay_keep)
        say(f"kept {rounds} rounds ({kept_steps} steps) of replay in {saver.paths.replay}")
    return RayTrainingSummary(
        env_steps=trainer.env_steps,
        updates=trainer.updates,
        rounds=saver.rounds_total,
        seconds=progress.seconds,
        out=out,
        score_share=saver.score_share(),
        wins=saver.wins,
        figures=progress.figures(),
        runner_pids=progress.pids,
    )


__all__ = ["RayProgress", "RayTrainingSummary", "train_ray"]
