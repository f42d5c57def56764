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
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from sacbot.checkpoint import (
    ROUND_COUNTER,
    ROUNDS,
    TRAINING_METRICS,
    CheckpointMeta,
    append_jsonl,
    atomic_write_json,
    latest_path,
    offer_best,
    opponent_best_path,
    save_checkpoint,
)
from sacbot.checkpoint.replay_file import replay_path, save_replay
from sacbot.runtime.ports import Learner
from sacbot.runtime.records import RoundReport
from sacbot.runtime.scoring import ShareWindow

if TYPE_CHECKING:
    from sacbot.tensorboard import TensorBoardSink

_TAIL_BYTES = 1 << 18  # enough of rounds.jsonl to refill a window of a few hundred rounds


def read_round_counter(weights_dir: Path) -> int:
    try:
        data = json.loads((weights_dir / ROUND_COUNTER).read_text(encoding="utf-8"))
        return max(0, int(data["rounds"]))
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def read_opponent_history(weights_dir: Path, opponent: str, size: int) -> list[tuple[float, float]]:
    """The last `size` (own, enemy) round scores against `opponent` from the tail of rounds.jsonl."""
    path = weights_dir / ROUNDS
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            start = max(0, handle.tell() - _TAIL_BYTES)
            handle.seek(start)
            tail = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    lines = tail.splitlines()
    if start > 0:
        lines = lines[1:]  # the first line may be cut
    pairs: list[tuple[float, float]] = []
    for line in lines:
        try:
            row = json.loads(line)
            if row.get("opponent") == opponent:
                pairs.append((float(row["own_score"]), float(row["enemy_score"])))
        except (ValueError, KeyError, TypeError, AttributeError):
            continue  # a torn last line from a kill is skipped, not fatal
    return pairs[-size:]


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
        self.board = board  # a second sink for the metrics lines (closed at game end)
        self.replay_keep = replay_keep  # steps of replay written at game end (0: none)
        # Settings the checkpoints record (radar mode, ...), so a later `play` or `eval` can follow them.
        self.trained_with = dict(trained_with or {})
        self.opponent = opponent
        self.log = log
        weights_dir.mkdir(parents=True, exist_ok=True)
        self.rounds_total = read_round_counter(weights_dir)
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
        latest = latest_path(self.weights_dir)
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
            if self.window.full:
                best_stored = offer_best(
                    opponent_best_path(self.weights_dir, self.opponent),
                    arrays,
                    meta,
                    share,
                    self.window.score_kind(),
                )
        metrics_line = {"time": now, "epoch": self.rounds_total, **train_pass}
        round_line = {
            "time": now,
            "round_total": self.rounds_total,
            "opponent": self.opponent,
            "score_share": share,
            "best_stored": best_stored,
            **report.as_json(),
        }
        append_jsonl(self.weights_dir / TRAINING_METRICS, metrics_line)
        append_jsonl(self.weights_dir / ROUNDS, round_line)
        if self.board is not None:
            self.board.train_pass(metrics_line, learner.env_steps)
            self.board.round_end(round_line, learner.env_steps)
            self.board.flush()
        atomic_write_json(self.weights_dir / ROUND_COUNTER, {"rounds": self.rounds_total, "time": now})

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
        path = replay_path(self.weights_dir)
        save_replay(path, arrays)
        rounds, steps = len(arrays["lengths"]), int(arrays["lengths"].sum())
        print(
            f"sacbot play: kept {rounds} rounds ({steps} steps) of replay in {path}",
            file=self.log,
            flush=True,
        )
