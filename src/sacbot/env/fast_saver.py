"""Where train-fast's rounds and saves go (in-process and `--ray`): the round lines, the score windows, the
checkpoint slots, the metrics lines, the round counter and the kept replay, and the resume from them.

Built from `sacbot play`'s round-end saver's pieces (`sacbot.runtime.saver`): the same score-window class
(`ShareWindow`, here of kind `fast_score_share`: the engine's exact round scores, so the gate never compares
them with `sacbot play`'s rebuilt ones), the same slot offer (`offer_window`) and replay writer
(`keep_replay`), with the learner seen through the runtime's `Learner` interface. What differs is when it
saves: a round end (`round_end`) only counts the round and appends its `rounds.jsonl` line; `save` (every
`save_every` env steps and at the end) writes, in this order:
1. `latest.zip`;
2. each opponent's slot `opponents/<Opponent>.zip`, then `best.zip` over all opponents, offered through the
   gate once their window holds `best_window` rounds (the windows start empty in each run);
3. one `training_metrics.jsonl` line (and, with a TensorBoard sink, the same as scalars);
4. with a league, one `league.jsonl` line (its pool);
5. `round_counter.json`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sacbot import jsonl
from sacbot.checkpoint import (
    CheckpointError,
    CheckpointMeta,
    best_path,
    latest_path,
    opponent_best_path,
    read_meta,
    restore_trainer,
    save_checkpoint,
)
from sacbot.checkpoint.replay_file import load_replay
from sacbot.records import TRAIN_FAST, read_round_counter, write_round_counter
from sacbot.rundir import WeightsPaths
from sacbot.runtime.ports import Learner
from sacbot.runtime.saver import keep_replay, offer_window
from sacbot.runtime.scoring import ShareWindow

if TYPE_CHECKING:
    from sacbot.agent.trainer_config import TrainerConfig
    from sacbot.env.league import FastLeague
    from sacbot.runtime.learner import AgentLearner
    from sacbot.settings import SacbotSettings
    from sacbot.tensorboard import TensorBoardSink

FAST_SCORE_KIND = "fast_score_share"  # the slots' score kind: fast_score_share_last_<best_window>


class FastSaver:
    """A train-fast run's rounds and saves in its weights folder `out` (see the module docstring)."""

    def __init__(
        self,
        out: Path,
        opponents: Sequence[str],
        best_window: int,
        trained_with: Mapping[str, Any],
        *,
        board: TensorBoardSink | None = None,
        league: FastLeague | None = None,
    ) -> None:
        self.out = out
        self.paths = WeightsPaths(out)
        # Settings the checkpoints record after the round count (opponents, radar mode, ...).
        self.trained_with = dict(trained_with)
        self.board = board
        self.league = league
        self.rounds_total = read_round_counter(self.paths.round_counter) or 0
        self.windows = {name: ShareWindow(best_window, kind=FAST_SCORE_KIND) for name in opponents}
        self.overall = ShareWindow(best_window, kind=FAST_SCORE_KIND)
        self.wins = dict.fromkeys(opponents, 0)
        self.snapshot_rounds = 0  # finished rounds against frozen snapshots of the learner (no window)
        self.snapshot_wins = 0

    def round_end(self, result: Mapping[str, Any], terminated: bool, env_steps: int, **fields: Any) -> None:
        """Count a finished round (a terminated one in its opponent's window, or as a snapshot round) and
        append its `rounds.jsonl` line: `fields` go between the run's fields and the arena's `result`."""
        self.rounds_total += 1
        if terminated and result["opponent"] not in self.windows:  # a frozen snapshot
            self.snapshot_rounds += 1
            self.snapshot_wins += result["outcome"] == "won"
        elif terminated:
            own, enemy = float(result["score"]), float(result["opponent_score"])
            self.windows[result["opponent"]].add(own, enemy)
            self.overall.add(own, enemy)
            self.wins[result["opponent"]] += result["outcome"] == "won"
        line = {
            "time": time.time(),
            "round_total": self.rounds_total,
            "written_by": TRAIN_FAST,
            **fields,
            **result,
        }
        jsonl.append(self.paths.rounds, line)
        if self.board is not None:
            self.board.round_end(line, env_steps)

    def meta(self, learner: Learner) -> CheckpointMeta:
        """The metadata of a checkpoint of the learner now."""
        return CheckpointMeta(
            env_steps=learner.env_steps,
            updates=learner.updates,
            network_sizes=learner.network_sizes(),
            extra={"round_total": self.rounds_total, "written_by": TRAIN_FAST, **self.trained_with},
        )

    def save(self, learner: Learner, metrics: Mapping[str, Any]) -> None:
        """Steps 1-5 of the module docstring; `metrics` start the metrics line."""
        save_slots(self.out, learner.state_arrays(), self.meta(learner), self.windows, self.overall)
        metrics_line = {
            **metrics, "time": time.time(), "env_steps": learner.env_steps, "updates": learner.updates,
            "written_by": TRAIN_FAST,
        }  # fmt: skip
        jsonl.append(self.paths.training_metrics, metrics_line)
        if self.board is not None:
            self.board.train_pass(metrics_line, learner.env_steps)
            self.board.flush()
        if self.league is not None:
            jsonl.append(
                self.paths.league_log, {"time": time.time(), **self.league.pool_line(learner.env_steps)}
            )
        write_round_counter(self.paths.round_counter, self.rounds_total, time.time())

    def keep_replay(self, learner: Learner, max_steps: int) -> tuple[int, int]:
        """The replay's newest whole rounds (up to `max_steps` steps) to `replay.npz`; (rounds, steps)."""
        return keep_replay(self.paths.replay, learner.export_replay(max_steps))

    def score_share(self) -> dict[str, float]:
        """Each opponent's window share (rounded), for opponents with a finished round in this run."""
        return {name: round(window.share(), 4) for name, window in self.windows.items() if len(window)}


def save_slots(
    out: Path,
    arrays: Mapping[str, np.ndarray],
    meta: CheckpointMeta,
    windows: Mapping[str, ShareWindow],
    overall: ShareWindow,
) -> None:
    """Write `latest.zip`, then offer each opponent's slot (its window) and the global best (`overall`) the
    same arrays, scored by their window's share (windows not yet full leave their slot alone)."""
    save_checkpoint(latest_path(out), arrays, meta)
    for name, window in windows.items():
        if window.full:
            offer_window(
                opponent_best_path(out, name), arrays, dataclasses.replace(meta, opponent=name), window
            )
    offer_window(best_path(out), arrays, meta, overall)


def resume(out: Path, learner: AgentLearner, replay_keep: int, say: Callable[[str], None]) -> None:
    """With a `latest.zip` in `out`: the trainer's full state from it and, with `replay_keep` > 0, the rounds
    the last run kept in `replay.npz` into the replay."""
    latest = latest_path(out)
    if not latest.is_file():
        return
    restore_trainer(latest, learner.trainer)
    say(f"resumed from {latest} (env steps {learner.env_steps}, updates {learner.updates})")
    replay = WeightsPaths(out).replay
    if replay_keep > 0 and replay.is_file():
        sizes = learner.trainer.config.sizes
        kept = load_replay(replay, sizes.stored_dim, sizes.action_dim, sizes.hidden)
        say(f"replay: {len(kept['lengths'])} kept rounds ({learner.load_replay(kept)} steps)")


def resumed_meta(out: Path) -> CheckpointMeta | None:
    """The metadata of the run's latest.zip (None: no run to resume), so a resumed run keeps the settings it
    was trained with, as `sacbot play` does."""
    try:
        return read_meta(latest_path(out)) if latest_path(out).is_file() else None
    except CheckpointError:
        return None  # restoring it fails later with its own clear line


def start_from_actor(out: Path, archive: Path, settings: SacbotSettings, seed: int) -> CheckpointMeta:
    """Write `out`'s latest.zip: `archive`'s actor and temperature (an actor archive or a full checkpoint)
    over a fresh trainer of its network sizes (fresh critics, targets and optimisers, seeded by `seed`), with
    its env-step and update counters, so the run resumes from it as from its own: schedules that count
    updates stand where the actor left them. Its meta is the archive's, a full checkpoint without a score."""
    from sacbot.agent.trainer import SacTrainer
    from sacbot.agent.trainer_config import TrainerConfig
    from sacbot.agent.trainer_state import state_arrays
    from sacbot.checkpoint import in_actor_archive, load_checkpoint
    from sacbot.runtime.startup import network_sizes_for

    held, meta = load_checkpoint(archive)
    if meta is None:
        raise CheckpointError(f"{archive}: no metadata to take the network sizes and counters from")
    arrays = state_arrays(SacTrainer(TrainerConfig(sizes=network_sizes_for(settings, meta), seed=seed)))
    for name, array in held.items():
        if not in_actor_archive(name):
            continue  # a full checkpoint's critics, optimisers and counters: fresh ones instead
        if name not in arrays or arrays[name].shape != array.shape:
            raise CheckpointError(f"{archive}: {name} does not fit its own network sizes")
        arrays[name] = array
    arrays["counters.env_steps"] = np.array(meta.env_steps, np.int64)
    arrays["counters.updates"] = np.array(meta.updates, np.int64)
    started = dataclasses.replace(meta, contents="full", score=None, score_kind="")
    save_checkpoint(latest_path(out), arrays, started)
    return started


# The networks' input flags a pretraining run also records beside its recipe (`training_record`).
_INPUT_FLAGS = (
    "angle_inputs",
    "energy_inputs",
    "lead_inputs",
    "wave_inputs",
    "threat_inputs",
    "bullet_inputs",
    "gun_offset",
)


def training_record(
    settings: SacbotSettings, config: TrainerConfig, radar_mode: str, opponents: Sequence[str], sampling: str
) -> dict[str, object]:
    """What a pretraining run (train-fast, `--ray`) writes into its checkpoints' `extra`: the opponents and
    how they were drawn, the radar mode and the shaping it played with, the training recipe as its trainer
    runs it (`RECIPE_SETTINGS`; `sacbot play` reads the teacher's back from a start), the exploration
    noise, the entropy target and the networks' input flags."""
    from sacbot.runtime.startup import recipe_of

    record: dict[str, object] = {
        "opponents": list(opponents),
        "sampling": sampling,
        "radar_mode": radar_mode,
        "aim_shaping": settings.aim_shaping,
        "close_shaping": settings.close_shaping,
        "surf_shaping": settings.surf_shaping,
    }
    record.update(recipe_of(config))
    record["noise_beta"] = settings.noise_beta
    record["gun_spread"] = settings.gun_spread
    record["target_entropy"] = config.entropy_target()
    record.update({name: getattr(config.sizes, name) for name in _INPUT_FLAGS})
    return record


__all__ = ["FAST_SCORE_KIND", "FastSaver", "resume", "resumed_meta", "save_slots", "training_record"]
