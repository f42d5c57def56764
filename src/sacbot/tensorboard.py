"""TensorBoard: a second sink for the metrics sacbot writes to JSONL (optional extra `sacbot[tensorboard]`).

The JSONL files stay the record; `TensorBoardSink` takes the same dicts at the same places and writes them as
scalars with the tags CleanRL's `sac_continuous_action.py` uses, so RL dashboards read them as they are:

- a round (a `rounds.jsonl` line): `charts/episodic_return` (its `reward_sum`), `charts/episodic_length`
  (`turns`), and over the last `window` finished rounds `charts/win_rate` and, per opponent,
  `charts/win_rate/<Opponent>` and `charts/score_share/<Opponent>` (own / (own + enemy) round score);
- a train pass (a `training_metrics.jsonl` line): `losses/qf1_loss`, `losses/qf2_loss` (each critic's own),
  `losses/qf_loss` (their mean, as CleanRL's: our `critic_loss` sums them), `losses/actor_loss`,
  `losses/alpha`, `losses/alpha_loss`, and where the line has them `losses/kickstart_loss`,
  `losses/self_imitation_loss`, `losses/hindsight_aim_loss`, `losses/anchor_loss`, `losses/entropy`,
  `losses/qf_values` (mean Q); plus `charts/SPS`, environment steps per second since the sink was made;
- an eval (`eval_log.jsonl` lines and the composite): `eval/win_rate/<Opponent>`,
  `eval/score_share/<Opponent>`, `eval/composite`.

The x axis is the learner's cumulative environment steps (CleanRL's `global_step`), which carry on across
resumed runs, so pretraining, every real-time chunk and every eval of a campaign share one axis.
The writer is torch's `torch.utils.tensorboard.SummaryWriter`, which needs the `tensorboard` package; without
it, making a sink is one `UserError` line. The file I/O runs on the writer's own thread (`flush` waits).
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from sacbot.errors import UserError

INSTALL_HINT = "pip install 'sacbot[tensorboard]'"
DEFAULT_WINDOW = 10  # finished rounds in each win-rate and score-share window (SACBOT_BEST_WINDOW's default)

# training_metrics.jsonl key -> (tag, factor)
TRAIN_TAGS: dict[str, tuple[str, float]] = {
    "critic_loss": ("losses/qf_loss", 0.5),  # ours is qf1_loss + qf2_loss; CleanRL's qf_loss is their mean
    "qf1_loss": ("losses/qf1_loss", 1.0),
    "qf2_loss": ("losses/qf2_loss", 1.0),
    "actor_loss": ("losses/actor_loss", 1.0),
    "alpha": ("losses/alpha", 1.0),
    "alpha_loss": ("losses/alpha_loss", 1.0),
    "kickstart_loss": ("losses/kickstart_loss", 1.0),
    "self_imitation_loss": ("losses/self_imitation_loss", 1.0),
    "hindsight_aim_loss": ("losses/hindsight_aim_loss", 1.0),
    "anchor_loss": ("losses/anchor_loss", 1.0),
    "entropy": ("losses/entropy", 1.0),
    "q_mean": ("losses/qf_values", 1.0),
}
_NO_RESULT = ("truncated",)  # a round cut short has no winner and no score: out of the windows


def require_tensorboard() -> Any:
    """torch's SummaryWriter class; `UserError` (exit 2) when the tensorboard package is missing."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        raise UserError(
            f"TensorBoard logging needs the tensorboard package: {INSTALL_HINT}", exit_code=2
        ) from None
    return SummaryWriter


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


class TensorBoardSink:
    """TensorBoard event files in `log_dir` fed with sacbot's metric dicts (see the module docstring).

    One thread at a time (the trainer thread of `sacbot play`, the loop of `train-fast`, the campaign's).
    """

    def __init__(self, log_dir: Path, *, start_step: int = 0, window: int = DEFAULT_WINDOW) -> None:
        writer_class = require_tensorboard()
        self.log_dir = Path(log_dir).expanduser()
        try:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            self._writer = writer_class(log_dir=str(self.log_dir))
        except OSError as exc:
            raise UserError(
                f"cannot write TensorBoard logs to {self.log_dir}: {exc.strerror or exc}", exit_code=2
            ) from None
        self.window = window
        self._start_step = start_step
        self._start_time = time.perf_counter()
        self._won: dict[str | None, deque[bool]] = {}
        self._scores: dict[str, deque[tuple[float, float]]] = {}

    # -- the three kinds of record --------------------------------------------------------------------------
    def round_end(self, record: Mapping[str, Any], step: int) -> None:
        """A round as `rounds.jsonl` has it (`sacbot play` and `train-fast` lines alike)."""
        self._scalar("charts/episodic_return", record.get("reward_sum"), step)
        self._scalar("charts/episodic_length", record.get("turns"), step)
        outcome = record.get("outcome")
        if outcome is None or outcome in _NO_RESULT:
            return
        opponent = record.get("opponent")
        opponent = str(opponent) if opponent else None
        won = outcome == "won"
        for key in {None, opponent}:  # every opponent together, then this one
            window = self._won.setdefault(key, deque(maxlen=self.window))
            window.append(won)
            tag = "charts/win_rate" if key is None else f"charts/win_rate/{key}"
            self._writer.add_scalar(tag, sum(window) / len(window), step)
        # play's lines say own_score / enemy_score, train-fast's score / opponent_score.
        own = _number(record.get("own_score", record.get("score")))
        enemy = _number(record.get("enemy_score", record.get("opponent_score")))
        if opponent is not None and own is not None and enemy is not None:
            scores = self._scores.setdefault(opponent, deque(maxlen=self.window))
            scores.append((own, enemy))
            total = sum(o + e for o, e in scores)
            share = 0.5 if total <= 0 else sum(o for o, _ in scores) / total
            self._writer.add_scalar(f"charts/score_share/{opponent}", share, step)

    def train_pass(self, metrics: Mapping[str, Any], step: int) -> None:
        """A `training_metrics.jsonl` line (losses are null in a pass without updates: left out)."""
        for key, (tag, factor) in TRAIN_TAGS.items():
            value = _number(metrics.get(key))
            if value is not None:
                self._writer.add_scalar(tag, value * factor, step)
        elapsed = time.perf_counter() - self._start_time
        if elapsed > 0 and step > self._start_step:
            self._writer.add_scalar("charts/SPS", int((step - self._start_step) / elapsed), step)

    def evaluation(self, records: Iterable[Mapping[str, Any]], composite: float | None, step: int) -> None:
        """One eval: its `eval_log.jsonl` lines (one per opponent) and the campaign's composite."""
        for record in records:
            name = record.get("opponent")
            for key in ("win_rate", "score_share"):
                self._scalar(f"eval/{key}/{name}", record.get(key), step)
        self._scalar("eval/composite", composite, step)

    # -- the file -------------------------------------------------------------------------------------------
    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> TensorBoardSink:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _scalar(self, tag: str, value: Any, step: int) -> None:
        number = _number(value)
        if number is not None:
            self._writer.add_scalar(tag, number, step)


def read_scalars(log_dir: Path) -> dict[str, list[tuple[int, float]]]:
    """Every scalar in the event files of `log_dir` (every writer's, oldest first): tag -> [(step, value)]."""
    require_tensorboard()
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    accumulator = EventAccumulator(str(log_dir), size_guidance={"scalars": 0})  # 0: keep every point
    accumulator.Reload()
    return {
        tag: [(int(e.step), float(e.value)) for e in accumulator.Scalars(tag)]
        for tag in accumulator.Tags()["scalars"]
    }


__all__ = ["INSTALL_HINT", "TRAIN_TAGS", "TensorBoardSink", "read_scalars", "require_tensorboard"]
