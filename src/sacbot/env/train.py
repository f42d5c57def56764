"""`sacbot train-fast`: the SAC-GRU trained in-process against classic opponents, N arenas at a time.

The same trainer (`sacbot.agent.trainer.SacTrainer`, the configuration `sacbot play` uses) and the same
checkpoint format and weights-folder layout as `sacbot play`, so `play`, `eval` and campaigns load the result:

- `latest.zip`: the full training state, saved every `save_every` steps and at the end; a later run with the
  same `--out` resumes from it (weights, optimisers, counters).
- `replay.npz`: at the end, with `replay_keep` > 0 (SACBOT_REPLAY_KEEP), the replay's newest whole rounds up
  to that many steps; a resumed run (and the next `sacbot play` of a campaign) starts its replay with them.
- `opponents/<Opponent>.zip`: offered to the best gate with the score share (own / (own + enemy) round scores,
  exact from the engine) of the last `best_window` rounds of this run against that opponent; `best.zip` the
  same over all opponents. The score kind is `fast_score_share_last_<n>`, so a real-game score (`sacbot
  play`'s kind) never competes with it: the gate replaces a slot holding another kind.
- `rounds.jsonl` (one line per round), `training_metrics.jsonl` (one line per save), `round_counter.json`,
  with a league `league.jsonl` (one line per save); with `tensorboard`, the round and metrics lines also as
  TensorBoard scalars there (`sacbot.tensorboard`).
The saving is `sacbot.env.fast_saver`'s, built from `sacbot play`'s round-end saver's pieces (the same score
window, slot offer and replay writer); updates, saves and the kept replay go through the runtime's `Learner`
interface (`AgentLearner`), acting through the batched numpy actor.

Per vector step: one batched actor call (numpy `FastActor.step_batch`, stochastic) for all arenas, then the
arenas step; every finished round goes into the sequence replay whole (`add_round`), and `updates_per_step`
SAC updates run (on average; fractions carry over) once the replay holds a window. One SAC update costs far
more than a vector step on a CPU, so `updates_per_step` sets the speed; torch runs on one thread by default.
The acting weights follow the trainer every `sync_every` updates. With `noise_beta` > 0 (SACBOT_NOISE_BETA)
the actor's draws are coloured noise, one stream per arena (`sacbot.agent.exploration`).

Opponents: without a `league_config` ("spread") arena i keeps `opponents[i % n]` for the whole run. With one
("weights" or "pfsp" sampling) each new game's opponent is drawn from a league pool (`sacbot.env.league`:
`Name:weight` entries, PFSP from the in-process round results, frozen `FastSnap<n>` snapshots of the learner
every `snapshot_every` env steps).
Rounds against snapshots train the learner like any other round, but stay out of the best slots' windows.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sacbot.agent.sizes import NetworkSizes
from sacbot.env.fast_saver import FastSaver, resume, resumed_meta, start_from_actor, training_record
from sacbot.env.league import FastLeague, parse_weighted_opponents
from sacbot.env.round_buffer import RoundBuffer, store_round
from sacbot.env.vector import VecTankRoyaleEnv
from sacbot.errors import UserError
from sacbot.opponents.sampling import LeagueConfig

if TYPE_CHECKING:
    from sacbot.settings import SacbotSettings

TEACHER_NOISE = 0.3  # std of the noise on the teacher's actions while it leads (`teacher_lead`)


@dataclass
class FastTrainingSummary:
    env_steps: int  # the run folder's totals, a resumed run's included
    updates: int
    rounds: int
    seconds: float  # this call's wall time
    out: Path
    score_share: dict[str, float]
    wins: dict[str, int]
    snapshot_rounds: int = 0  # finished rounds against frozen snapshots of the learner
    snapshot_wins: int = 0
    snapshots: list[str] = field(default_factory=list)  # the snapshots in the pool at the end
    steps_run: int = 0  # env steps this call took (env_steps less where a resumed run started)


def train_fast(
    opponents: str | Sequence[str] | Mapping[str, float],
    out: str | os.PathLike[str],
    *,
    steps: int = 100_000,
    envs: int = 8,
    seed: int = 0,
    updates_per_step: float = 1.0,
    warmup_steps: int = 2_000,
    save_every: int = 20_000,
    sync_every: int = 50,
    best_window: int = 10,
    max_turns: int | None = 5_000,
    settings: SacbotSettings | None = None,
    sizes: NetworkSizes | None = None,
    teacher_lead: int = 0,
    torch_threads: int | None = 1,
    workers: int = 0,
    rounds_per_game: int = 10,
    league_config: LeagueConfig | None = None,
    replay_keep: int = 50_000,
    tensorboard: str | os.PathLike[str] | None = None,
    start_actor: str | os.PathLike[str] | None = None,
    log: Callable[[str], None] | None = None,
) -> FastTrainingSummary:
    """Train for `steps` environment steps (summed over the arenas) and write checkpoints into `out`, with
    `settings` (the SACBOT_* variables `sacbot play` reads when None: the radar mode, the shaping, the
    training recipe, the exploration noise) and networks of `sizes` (None: the settings', else those of the
    run resumed). With `start_actor` and no latest.zip in `out` yet, the run starts from that archive's actor
    and temperature over fresh critics (`start_from_actor`); with one, it resumes as ever."""
    # Bad input fails before torch is even imported.
    weighted = parse_weighted_opponents(opponents)
    if tensorboard is not None:
        from sacbot.tensorboard import require_tensorboard

        require_tensorboard()
    if rounds_per_game < 1:
        raise UserError("--rounds-per-game must be at least 1", exit_code=2)
    league = None
    if league_config is None:  # "spread": arena i keeps opponent i mod n
        if any(w != 1.0 for _, w in weighted):
            raise UserError("--opponents: weights (Name:w) need --sampling weights or pfsp", exit_code=2)
        names = tuple(name for name, _ in weighted)
    else:
        if workers > 0:  # the league's draws, results and snapshots live in this process
            raise UserError("--sampling weights or pfsp steps the arenas in this process: --workers 0", 2)
        names = tuple(dict.fromkeys(name for name, w in weighted if w > 0))
        league = FastLeague([(n, w) for n, w in weighted if w > 0], league_config, Path(out), seed=seed)
    from sacbot.agent.exploration import WideGun
    from sacbot.agent.inference import FastActor
    from sacbot.agent.trainer import SacTrainer
    from sacbot.checkpoint import latest_path
    from sacbot.runtime.learner import AgentLearner
    from sacbot.runtime.startup import (
        network_sizes_for,
        radar_mode_for,
        sizes_said,
        target_entropy_for,
        trainer_config_for,
        trainer_said,
    )
    from sacbot.settings import load_sacbot_settings

    if steps < 1 or envs < 1 or updates_per_step < 0:
        raise UserError("--steps and --envs must be at least 1, --updates-per-step at least 0", exit_code=2)
    if teacher_lead < 0:
        raise UserError("--teacher-lead must be 0 or more environment steps", exit_code=2)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} exists and is not a folder", exit_code=2)
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    say = log or (lambda line: None)

    # The settings as `sacbot play` reads them (SACBOT_RADAR_MODE, SACBOT_KICKSTART, ...) unless given:
    # training sees what play will see.
    if settings is None:
        settings = load_sacbot_settings()
    if start_actor is not None and not latest_path(out).is_file():
        try:
            begun = start_from_actor(out, Path(start_actor), settings, seed)
        except UserError:
            if created and not any(out.iterdir()):
                out.rmdir()  # a start refused leaves no empty run folder behind
            raise
        say(f"start: {start_actor}'s actor at update {begun.updates} over fresh critics, in {out}")
    resumed = resumed_meta(out)
    mode, _ = radar_mode_for(settings.radar_mode, resumed)
    if sizes is None:
        sizes = network_sizes_for(settings, resumed)
    # The arenas first: worker processes are forked before torch starts any thread.
    vec = VecTankRoyaleEnv(
        envs,
        names,
        max_turns=max_turns,
        workers=workers,
        radar_mode=mode,
        aim_shaping=settings.aim_shaping,
        close_shaping=settings.close_shaping,
        surf_shaping=settings.surf_shaping,
        sizes=sizes,
        rounds_per_game=rounds_per_game,
        opponent_source=None if league is None else league.opponent_for,
    )
    trainer = SacTrainer(
        trainer_config_for(
            settings,
            sizes,
            device=settings.device,
            seed=seed,
            target_entropy=target_entropy_for(settings.target_entropy, resumed),
            critic_warmup=settings.critic_warmup or 0,
            anchor=settings.anchor or 0.0,
        )
    )
    learner = AgentLearner(trainer)  # updates, saves and the kept replay as `sacbot play`'s trainer thread
    sizes = trainer.config.sizes
    resume(out, learner, replay_keep, say)
    for line in sizes_said(sizes, training=True) + trainer_said(trainer.config, learner.updates, "run"):
        say(line)
    if league is not None:
        league.start(trainer.env_steps, trainer.actor_arrays(), trainer.config.sizes, mode)
        if league.snapshots:
            say(f"league: snapshots {', '.join(league.snapshots)} from {league.folder}")
    blas_limit = None
    if torch_threads:
        import torch
        from threadpoolctl import threadpool_limits

        torch.set_num_threads(torch_threads)  # small CPU machines: one thread beats two fighting (DESIGN.md)
        # numpy's OpenBLAS threads the batched actor's matmuls and spins on the cores the arenas need: the
        # vector step ran ~10x slower (1.5k vs 17k steps/s, 16 arenas on 2 cores) until capped the same way.
        blas_limit = threadpool_limits(limits=1, user_api="blas")  # also when torch takes more threads
    board = None
    if tensorboard is not None:
        from sacbot.tensorboard import TensorBoardSink

        board = TensorBoardSink(Path(tensorboard), start_step=trainer.env_steps, window=best_window)
    sampling = "spread" if league_config is None else league_config.sampling
    trained_with = training_record(settings, trainer.config, mode, names, sampling)
    saver = FastSaver(out, names, best_window, trained_with, board=board, league=league)
    lead_rng = np.random.default_rng(seed + 1)
    actor = FastActor(trainer.actor_arrays(), sizes, seed=seed)
    # Coloured exploration noise: one stream per arena, restarted with each round (None: the actor's white
    # draws, as before). Seeded from where the run stands, so a resumed run draws on.
    noise = None
    if settings.noise_beta > 0.0:
        from sacbot.agent.exploration import ColouredNoise

        noise = ColouredNoise(settings.noise_beta, envs, sizes.action_dim, seed=seed + 2 + trainer.env_steps)
    # A wider gun turn (gun_spread > 1), seeded like the noise above; None: the draws as they are.
    wide = None
    if settings.gun_spread != 1.0:
        wide = WideGun(settings.gun_spread, envs, sizes.action_dim, seed=seed + 3 + trainer.env_steps)
    obs, _ = vec.reset(seed=seed + trainer.env_steps)  # a resumed run does not replay the same games
    hidden = np.zeros((envs, actor.hidden_dim), np.float32)
    observed_dim = sizes.observed_dim
    buffers = [RoundBuffer(obs=[obs[i].copy()]) for i in range(envs)]
    started = time.perf_counter()
    start_steps = trainer.env_steps
    # The warm-up fills an empty replay before the first update; a resumed run whose kept replay was loaded
    # updates at once, as the run it goes on from did.
    warm_at = start_steps + (0 if len(trainer.replay) >= warmup_steps else warmup_steps)
    last_sync = trainer.updates
    last_metrics: dict[str, float] = {}
    next_save = start_steps + save_every
    owed = 0.0  # fractional updates carried between vector steps
    saved_at = -1

    def save() -> None:
        saver.save(learner, last_metrics)
        say(f"saved {latest_path(out)} (env steps {trainer.env_steps}, updates {trainer.updates})")

    interrupted = False
    try:
        while trainer.env_steps - start_steps < steps:
            eps = None if noise is None else noise.draw()
            if wide is not None:
                eps = wide.draw(eps)
            state = obs[:, :observed_dim]  # what the actor reads (the critics' own inputs may follow)
            actions, new_hidden = actor.step_batch(state, hidden, deterministic=False, eps=eps)
            if trainer.env_steps < teacher_lead:  # counted from the run's start, so a resume goes on
                # The teacher drives (with exploration noise) while the actor's hidden state follows along:
                # off-policy data from play that hits and wins, in the states the teacher reaches.
                actions = teacher_actions(state, lead_rng, gun_offset=sizes.gun_offset)
            next_obs, rewards, terminated, truncated, infos = vec.step(actions)
            for i, buf in enumerate(buffers):
                buf.actions.append(actions[i])
                buf.rewards.append(float(rewards[i]))
                buf.hidden.append(hidden[i])
                if terminated[i] or truncated[i]:
                    buf.obs.append(np.asarray(infos["final_obs"][i], np.float32))
                    result = infos["final_info"][i]["round_result"]
                    store_round(trainer.replay, buf, bool(terminated[i]))
                    if league is not None:
                        league.record(result)
                    reward_sum = round(sum(buf.rewards), 6)
                    saver.round_end(result, bool(terminated[i]), trainer.env_steps, reward_sum=reward_sum)
                    buffers[i] = RoundBuffer(obs=[next_obs[i].copy()])
                    new_hidden[i] = 0.0
                    if noise is not None:
                        noise.restart(i)
                else:
                    buf.obs.append(next_obs[i].copy())
            obs, hidden = next_obs, new_hidden
            trainer.env_steps += envs
            if trainer.env_steps >= warm_at:
                owed += updates_per_step
                while owed >= 1.0:
                    owed -= 1.0
                    metrics = learner.update()
                    if not metrics:  # the replay cannot sample a window yet
                        owed = 0.0
                        break
                    last_metrics = metrics
                if trainer.updates - last_sync >= sync_every:
                    actor = FastActor(trainer.actor_arrays(), sizes, seed=seed + trainer.updates)
                    last_sync = trainer.updates
            if league is not None and league.snapshot_due(trainer.env_steps):
                label = league.snapshot(trainer.env_steps, trainer.actor_arrays(), saver.meta(learner))
                say(f"league: snapshot {label} (pool: {', '.join(league.snapshots)})")
            if trainer.env_steps >= next_save:
                save()
                saved_at = trainer.env_steps
                next_save += save_every
        if saved_at != trainer.env_steps:
            save()
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM through the CLI: keep what was learnt since the last save
        interrupted = True
        say("interrupted: saving where the run stands")
        save()
    finally:
        vec.close()
        if blas_limit is not None:
            blas_limit.restore_original_limits()
        if board is not None:
            board.close()
    if replay_keep > 0:
        # For whoever trains on from latest.zip (the next `sacbot play` of a campaign, a resumed run).
        rounds, kept_steps = saver.keep_replay(learner, replay_keep)
        say(f"kept {rounds} rounds ({kept_steps} steps) of replay in {saver.paths.replay}")
    if interrupted:
        raise KeyboardInterrupt
    return FastTrainingSummary(
        env_steps=trainer.env_steps,
        updates=trainer.updates,
        rounds=saver.rounds_total,
        seconds=time.perf_counter() - started,
        out=out,
        score_share=saver.score_share(),
        wins=saver.wins,
        snapshot_rounds=saver.snapshot_rounds,
        snapshot_wins=saver.snapshot_wins,
        snapshots=list(league.snapshots) if league is not None else [],
        steps_run=trainer.env_steps - start_steps,
    )


def teacher_actions(
    obs: np.ndarray, rng: np.random.Generator, noise: float = TEACHER_NOISE, gun_offset: bool = False
) -> np.ndarray:
    """The teacher's actions for a batch of states, with Gaussian exploration noise, clipped to [-1, 1]
    (`gun_offset`: the gun entry as the actor's is read, `NetworkSizes.gun_offset`)."""
    import torch

    from sacbot.agent.teacher import teacher_action

    acts = teacher_action(torch.from_numpy(obs), gun_offset=gun_offset).numpy()
    return np.clip(acts + rng.normal(0.0, noise, acts.shape), -1.0, 1.0).astype(np.float32)


__all__ = ["FastTrainingSummary", "train_fast"]
