"""Round-end saving on the trainer thread: `latest`, the opponent's best slot, metrics, the round counter.

Per round end, in this order (a kill between two steps loses at most that round's files, never an older one):
1. `latest.zip` through the checkpoint package's one atomic writer, with one stderr line;
2. the opponent's own best slot (`opponents/<Opponent>.zip`) is offered the same snapshot through the gate,
   scored by the score share over the last `best_window` rounds against that opponent (see scoring.py) once
   that many rounds are known (the window survives restarts: it is read back from `rounds.jsonl`);
3. one line in `training_metrics.jsonl` (the train pass) and one in `rounds.jsonl` (the round);
4. `round_counter.json` ({"rounds": n, "time": t}) rewritten atomically: the liveness signal for campaigns.
With a TensorBoard sink (`SACBOT_TENSORBOARD`), the same two lines of step 3 also go to it as scalars.
At game end (`save_game_end`), with `replay_keep` > 0: 5. the replay's newest whole rounds to `replay.npz`
(`sacbot.checkpoint.replay_file`), which the next `sacbot play` loads before its first tick.
`offer_window` (step 2) and `keep_replay` (step 5) are shared with train-fast's (`sacbot.env.fast_saver`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from sacbot import jsonl
from sacbot.checkpoint import CheckpointMeta, offer_best, opponent_best_path, save_checkpoint
from sacbot.checkpoint.replay_file import save_replay
from sacbot.records import read_round_counter, read_round_tail, write_round_counter
from sacbot.rundir import WeightsPaths
from sacbot.runtime.ports import Learner
from sacbot.runtime.records import RoundReport
from sacbot.runtime.scoring import ShareWindow

if TYPE_CHECKING:
    from sacbot.tensorboard import TensorBoardSink

_TAIL_BYTES = 1 << 18  # enough of rounds.jsonl to refill a window of a few hundred rounds


def read_opponent_history(weights_dir: Path, opponent: str, size: int) -> list[tuple[float, float]]:
    """The last `size` (own, enemy) round scores of `sacbot play`'s rounds against `opponent`, from the tail
    of rounds.jsonl (a torn last line from a kill is skipped, not fatal)."""
    pairs = [
        (line.own_score, line.enemy_score)
        for line in read_round_tail(WeightsPaths(weights_dir).rounds, _TAIL_BYTES)
        if line.opponent == opponent and line.own_score is not None and line.enemy_score is not None
    ]
    return pairs[-size:]


def offer_window(
    path: Path, arrays: Mapping[str, np.ndarray], meta: CheckpointMeta, window: ShareWindow
) -> bool | None:
    """Offer the slot at `path` the arrays through the gate, scored by the window's share under its score
    kind, once the window is full; whether they were stored (None: not full yet, nothing offered)."""
    if not window.full:
        return None
    return offer_best(path, arrays, meta, window.share(), window.score_kind())


def keep_replay(path: Path, arrays: dict[str, np.ndarray]) -> tuple[int, int]:
    """Write kept replay rounds (`Learner.export_replay`) to `path`; the (rounds, steps) written."""
    save_replay(path, arrays)
    return len(arrays["lengths"]), int(arrays["lengths"].sum())


class RoundEndSaver:
    """Writes everything a round end leaves on disk (see the module docstring). Trainer thread only."""

    def __init__(
        self,
        weights_dir: Path,
        opponent: str | None,
        best_window: int,
        log: TextIO = sys.stderr,
        trained_with: Mapping[str, Any] | None = None,
        replay_keep: int = 0,
        board: TensorBoardSink | None = None,
    ) -> None:
        self.weights_dir = weights_dir
        self.paths = WeightsPaths(weights_dir)
        self.board = board  # a second sink for the metrics lines (closed at game end)
        self.replay_keep = replay_keep  # steps of replay written at game end (0: none)
        # Settings the checkpoints record (radar mode, ...), so a later `play` or `eval` can follow them.
        self.trained_with = dict(trained_with or {})
        self.opponent = opponent
        self.log = log
        weights_dir.mkdir(parents=True, exist_ok=True)
        self.rounds_total = read_round_counter(self.paths.round_counter) or 0
        history = read_opponent_history(weights_dir, opponent, best_window) if opponent else []
        self.window = ShareWindow(best_window, history)

    def save_round(self, learner: Learner, report: RoundReport, train_pass: dict[str, Any]) -> None:
        self.rounds_total += 1
        now = time.time()
        arrays = learner.state_arrays()
        meta = CheckpointMeta(
            env_steps=learner.env_steps,
            updates=learner.updates,
            network_sizes=learner.network_sizes(),
            opponent=self.opponent,
            extra={**self.trained_with, "round_total": self.rounds_total, "written_by": "sacbot play"},
        )
        latest = self.paths.latest
        save_checkpoint(latest, arrays, meta)
        print(
            f"sacbot play: round {report.round} saved {latest} "
            f"(rounds {self.rounds_total}, updates {learner.updates}, env steps {learner.env_steps})",
            file=self.log,
            flush=True,
        )
        share: float | None = None
        best_stored: bool | None = None
        if self.opponent:
            self.window.add(report.own_score, report.enemy_score)
            share = self.window.share()
            slot = opponent_best_path(self.weights_dir, self.opponent)
            best_stored = offer_window(slot, arrays, meta, self.window)
        metrics_line = {"time": now, "epoch": self.rounds_total, **train_pass}
        round_line = {
            "time": now,
            "round_total": self.rounds_total,
            "opponent": self.opponent,
            "window_score_share": share,  # over the gate's window, not this round alone
            "best_stored": best_stored,
            **report.as_json(),
        }
        jsonl.append(self.paths.training_metrics, metrics_line)
        jsonl.append(self.paths.rounds, round_line)
        if self.board is not None:
            self.board.train_pass(metrics_line, learner.env_steps)
            self.board.round_end(round_line, learner.env_steps)
            self.board.flush()
        write_round_counter(self.paths.round_counter, self.rounds_total, now)

    def save_game_end(self, learner: Learner) -> None:
        """5. At game end: the newest `replay_keep` steps of whole rounds to `replay.npz` (next process's)."""
        if self.board is not None:
            self.board.close()
            self.board = None
        if self.replay_keep <= 0:
            return
        arrays = learner.export_replay(self.replay_keep)
        if not len(arrays.get("lengths", ())):
            return
        path = self.paths.replay
        rounds, steps = keep_replay(path, arrays)
        print(
            f"sacbot play: kept {rounds} rounds ({steps} steps) of replay in {path}",
            file=self.log,
            flush=True,
        )
