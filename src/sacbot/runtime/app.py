"""`sacbot play`: assemble the realtime thread (the bot client on the main thread) and the trainer thread.

Start-up: settings, identity, weights folder, the start weights (one stderr line says which), the speed
levers (small GIL switch interval, one torch thread in the trainer, `gc.freeze()`), then the game. Shutdown on
game end, server close, SIGINT or SIGTERM: the trainer saves what the realtime thread posted last and stops;
no traceback.
A trainer crash ends the process with a clear error (exit 3) and a watchdog makes sure it never hangs.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from sacbot.errors import UserError
from sacbot.settings import BotEnvironment, SacbotSettings, load_bot_environment, load_sacbot_settings

TRAINER_CRASH_EXIT = 3
_CRASH_GRACE_S = 10.0  # after a trainer crash, the process ends by itself if the main thread is stuck
EVAL_ACTIONS_SAID = {
    "mean": "deterministic actions (the policy's mean)",
    "sampled": "actions sampled from the policy",
    "speed": "the policy's mean, its target speed sampled",
}
_SIGTERM_GRACE_S = 1.0  # after SIGTERM, messages already received are still handled this long


def _say(line: str) -> None:
    print(f"sacbot play: {line}", file=sys.stderr, flush=True)


@dataclass
class PlayResult:
    reason: str  # "game ended", "server closed", "SIGTERM", "SIGINT"
    turns: int
    skipped_turns: int
    updates: int
    updates_per_s: float


class _Stopper:
    """SIGTERM handling. A booter often stops its bots the moment a game ends, before a bot has read the
    last RoundEnded/GameEnded already waiting in its socket; so SIGTERM first lets the client go on for a
    short grace, then cancels the client (it closes the connection cleanly). A second SIGTERM does not wait.
    Once the game loop is over (`playing` False) a SIGTERM no longer interrupts: the trainer is saving.
    """

    def __init__(self, grace_s: float = _SIGTERM_GRACE_S) -> None:
        self.grace_s = grace_s
        self.reason: str | None = None
        self.playing = True
        from sacbot.client.transport import ClientInterrupt

        self.client = ClientInterrupt()  # ends the client only while it runs: never a stray signal later
        self._previous: Any = None

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # signals can only be handled on the main thread (tests may run play elsewhere)
        self._previous = signal.signal(signal.SIGTERM, self._on_sigterm)

    def uninstall(self) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGTERM, self._previous)

    def _on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        first = self.reason is None
        self.reason = self.reason or "SIGTERM"
        if not self.playing:
            return
        if first and self.grace_s > 0:
            threading.Thread(target=self._after_grace, name="sacbot-sigterm", daemon=True).start()
            return
        self.client.interrupt()

    def _after_grace(self) -> None:
        time.sleep(self.grace_s)
        self.client.interrupt()


def apply_speed_levers(settings: SacbotSettings) -> None:
    # The realtime thread waits at most this long for the GIL when its tick arrives (default 5 ms).
    sys.setswitchinterval(settings.switch_interval_ms / 1000.0)


def run_play(eval_flag: bool = False, tensorboard: Path | None = None) -> PlayResult:
    """Play one game against the server in SERVER_URL; returns why it stopped. UserError on bad input.

    `tensorboard` (else SACBOT_TENSORBOARD): a folder the trainer thread also writes its metrics to, as
    TensorBoard scalars (training only: eval mode writes nothing).
    """
    env: BotEnvironment = load_bot_environment()
    settings = load_sacbot_settings()
    eval_mode = eval_flag or settings.eval_mode
    board_dir = tensorboard or settings.tensorboard
    if board_dir is not None and not eval_mode:
        from sacbot.tensorboard import require_tensorboard

        require_tensorboard()  # a missing extra is one line before anything starts

    from sacbot.checkpoint import validate_opponent_name
    from sacbot.client import resolve_identity, run_bot
    from sacbot.runtime.paths import bot_json_path, weights_dir
    from sacbot.runtime.startup import SHIPPED_ACTOR, start_meta

    bot_json = bot_json_path(settings)
    identity = resolve_identity(json_path=bot_json)
    weights = weights_dir(settings, bot_json)
    opponent = validate_opponent_name(settings.opponent) if settings.opponent else None
    # A broken SACBOT_CHECKPOINT fails here; the networks' input width comes from this meta.
    shipped = SHIPPED_ACTOR if settings.shipped else None
    first_meta = start_meta(settings.checkpoint, weights, opponent, shipped)

    apply_speed_levers(settings)
    import torch

    from sacbot.agent.exploration import ColouredNoise
    from sacbot.agent.trainer import SacTrainer
    from sacbot.runtime.channel import DropOldestChannel
    from sacbot.runtime.learner import AgentFeatures, AgentLearner, make_fast_actor
    from sacbot.runtime.policy import RealtimePolicy
    from sacbot.runtime.records import ChannelItem
    from sacbot.runtime.saver import RoundEndSaver
    from sacbot.runtime.startup import (
        actor_specs,
        anchor_for,
        choose_start,
        critic_warmup_for,
        full_start_arrays,
        network_sizes_for,
        radar_mode_for,
        recipe_of,
        shipped_recipe,
        sizes_said,
        target_entropy_for,
        trainer_config_for,
        trainer_said,
    )
    from sacbot.runtime.trainer import ThreadConfig, TrainerThread

    torch.set_num_threads(settings.torch_threads)

    sizes = network_sizes_for(settings, first_meta)

    def make_trainer(**chosen: Any) -> SacTrainer:
        """A trainer of the settings' recipe with what play chose (`chosen`: TrainerConfig's fields)."""
        return SacTrainer(
            trainer_config_for(
                settings,
                sizes,
                device=settings.device,
                seed=settings.seed or 0,
                batch_size=settings.batch_size,
                fresh_fraction=settings.fresh_fraction,
                target_entropy=target_entropy_for(settings.target_entropy, first_meta),
                **chosen,
            )
        )

    sac = make_trainer()
    start = choose_start(
        settings.checkpoint,
        weights,
        opponent,
        sac.array_specs(),
        actor_only=eval_mode,
        shipped=shipped,
    )
    radar_mode, radar_source = radar_mode_for(settings.radar_mode, start.meta)
    # The shipped actor trains on with the teacher it learnt from, unless settings say (`shipped_recipe`).
    recipe = {} if eval_mode else shipped_recipe(start, settings)
    if not eval_mode:
        # An actor archive's actor under fresh critics: their warm-up, then the anchor (`startup`).
        warmup, anchor = critic_warmup_for(settings.critic_warmup, start), anchor_for(settings.anchor, start)
        if recipe or warmup or anchor:
            sac = make_trainer(critic_warmup=warmup, anchor=anchor, **recipe)
    # The critics' bullet inputs are stored with each training transition; an eval has no use for them.
    sizes = sac.config.sizes
    features = AgentFeatures(
        radar_mode,
        sizes,
        settings.aim_shaping,
        settings.close_shaping,
        training=not eval_mode,
        surf_shaping=0.0 if eval_mode else settings.surf_shaping,  # an eval plays and earns nothing
    )
    trainer: TrainerThread | None = None
    crash: list[str] = []
    stopper = _Stopper()

    if eval_mode:
        how = EVAL_ACTIONS_SAID[settings.eval_actions]
        _say(f"eval mode: {how}, no training, nothing written")
        if start.arrays is not None:
            actor_arrays = {k: v for k, v in start.arrays.items() if k in actor_specs(sac.array_specs())}
        else:
            actor_arrays = dict(sac.snapshot.arrays)
        frozen = make_fast_actor(actor_arrays, sac.config.sizes)
        policy = RealtimePolicy(
            features,
            lambda: frozen,
            None,
            None,
            actions=settings.eval_actions,
            keep_all_latencies=settings.stats_file is not None,
        )
    else:
        if start.arrays is not None:  # an actor-only start keeps the fresh critics, optimisers and counters
            sac.load_state_arrays(full_start_arrays(start.arrays, sac.state_arrays()))
        learner = AgentLearner(sac, settings.behaviour_log_std_min)
        kept = _load_kept_replay(learner, weights, settings.replay_keep, sac.config.sizes)
        channel: DropOldestChannel[ChannelItem] = DropOldestChannel(settings.channel_capacity)
        board = None
        if board_dir is not None:
            from sacbot.tensorboard import TensorBoardSink

            # Fed by the saver on the trainer thread; the realtime thread never touches it.
            board = TensorBoardSink(board_dir, start_step=sac.env_steps, window=settings.best_window)
        try:
            saver = RoundEndSaver(
                weights,
                opponent,
                settings.best_window,
                trained_with={
                    "radar_mode": radar_mode,
                    "aim_shaping": settings.aim_shaping,
                    "close_shaping": settings.close_shaping,
                    "surf_shaping": settings.surf_shaping,
                    **recipe_of(sac.config),
                    "noise_beta": settings.noise_beta,
                    "target_entropy": sac.config.entropy_target(),
                },
                replay_keep=settings.replay_keep,
                board=board,
            )
        except OSError as exc:
            raise UserError(f"cannot use the weights folder {weights}: {exc.strerror or exc}", 2) from None

        def on_crash(exc: BaseException, text: str) -> None:
            crash.append(f"the trainer thread crashed: {type(exc).__name__}: {exc}")
            print(text, file=sys.stderr, flush=True)
            _say(f"error: {crash[0]}; stopping")
            watchdog = threading.Timer(_CRASH_GRACE_S, os._exit, (TRAINER_CRASH_EXIT,))
            watchdog.daemon = True  # a clean exit does not wait for it
            watchdog.start()
            stopper.client.interrupt()  # does nothing once the game loop is over

        trainer = TrainerThread(
            learner,
            channel,
            saver,
            ThreadConfig(
                settings.warmup_rounds,
                settings.utd_ratio,
                settings.publish_every,
                settings.torch_threads,
                duty=settings.trainer_duty,
                nice=settings.trainer_nice,
            ),
            on_crash=on_crash,
        )
        live = trainer  # the closure reads `published` once per tick: one reference read
        noise = None
        if settings.noise_beta > 0.0:
            noise = ColouredNoise(settings.noise_beta, 1, sac.config.sizes.action_dim, seed=sac.env_steps)
        policy = RealtimePolicy(
            features,
            lambda: live.published,
            channel,
            trainer.round_ended,
            actions="sampled",
            keep_all_latencies=settings.stats_file is not None,
            noise=noise,
        )
    _say(f"{identity.name}: {start.source}; weights folder {weights}; radar {radar_mode} ({radar_source})")
    for line in sizes_said(sizes, training=not eval_mode):
        _say(line)
    if settings.behaviour_log_std_min is not None and not eval_mode:
        floor = settings.behaviour_log_std_min
        _say(f"behaviour spread: play draws each action entry with log std at least {floor:g}")
    if settings.noise_beta > 0.0 and not eval_mode:
        _say(f"exploration noise coloured: 1/f^{settings.noise_beta:g} along the turns (0 white, 1 pink)")
    if settings.fresh_fraction > 0.0 and not eval_mode:
        share = settings.fresh_fraction
        _say(f"fresh rounds: {share:g} of each batch from this run's rounds, not the kept replay")
    if not eval_mode:
        for line in trainer_said(sac.config, sac.updates, "game"):
            _say(line)
    if recipe:
        said = ", ".join(
            f"{name} {value:g}" if isinstance(value, float) else f"{name} {value}"
            for name, value in recipe.items()
        )
        _say(f"the shipped actor's recipe: {said} (each SACBOT_<NAME> overrides)")
    if trainer is not None:
        _say(kept)
        if board_dir is not None:
            _say(f"TensorBoard scalars in {board_dir}")

    stopper.install()
    gc.collect()
    gc.freeze()  # start-up objects never get scanned again: shorter collector pauses on both threads
    started = time.perf_counter()
    if trainer is not None:
        trainer.start()
    # The handler stays until the last line is out: SIGTERM's default action would kill the process silently.
    try:
        reason = "game ended"
        try:
            run_bot(policy, identity, env.server_url, env.server_secret, stopper.client)
            stopper.playing = False
            if not policy.game_over:
                reason = stopper.reason or ("game aborted" if policy.aborted else "server closed")
        except (KeyboardInterrupt, asyncio.CancelledError):
            stopper.playing = False
            reason = stopper.reason or ("trainer crashed" if crash else "SIGINT")
        finally:
            stopper.playing = False
            if trainer is not None:
                try:
                    trainer.stop()
                except KeyboardInterrupt:
                    _say("interrupted while saving the last round")
                    raise SystemExit(130) from None
        elapsed = time.perf_counter() - started
        if crash:
            raise UserError(crash[0], exit_code=TRAINER_CRASH_EXIT)
        if trainer is not None and trainer.is_alive():
            raise UserError("the trainer thread did not stop within 60 s; the last round may be unsaved", 3)
        result = PlayResult(
            reason=reason,
            turns=policy.turns_total,
            skipped_turns=policy.skipped_total,
            updates=trainer.updates_here if trainer is not None else 0,
            updates_per_s=(trainer.updates_here / elapsed) if trainer is not None and elapsed > 0 else 0.0,
        )
        if settings.stats_file is not None and policy.all_latency is not None:
            _write_stats(settings.stats_file, policy.all_latency.values_ms().tolist(), result)
        counts = f"{result.turns} turns, {result.skipped_turns} skipped, {result.updates} updates"
        _say(f"stopped ({reason}): {counts}")
        return result
    finally:
        stopper.uninstall()


def _load_kept_replay(learner: Any, weights: Path, keep: int, sizes: Any) -> str:
    """Load `replay.npz` from the weights folder into the learner's replay; says what happened, in a line."""
    from sacbot.checkpoint import CheckpointError
    from sacbot.checkpoint.replay_file import load_replay
    from sacbot.rundir import WeightsPaths

    path = WeightsPaths(weights).replay
    if keep <= 0:
        return "replay starts empty (SACBOT_REPLAY_KEEP=0)"
    if not path.is_file():
        return f"replay starts empty (no {path.name} yet)"
    try:
        arrays = load_replay(path, sizes.stored_dim, sizes.action_dim, sizes.hidden)
    except CheckpointError as exc:
        return f"replay starts empty: {exc}"
    steps = learner.load_replay(arrays)
    return f"replay starts with {len(arrays['lengths'])} kept rounds ({steps} steps) from {path}"


def _write_stats(path: Path, latencies_ms: list[float], result: PlayResult) -> None:
    from sacbot.checkpoint import atomic_write_json

    atomic_write_json(
        path,
        {
            "latencies_ms": latencies_ms,
            "turns": result.turns,
            "skipped_turns": result.skipped_turns,
            "updates": result.updates,
            "updates_per_s": result.updates_per_s,
            "reason": result.reason,
        },
    )
