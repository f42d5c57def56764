"""train-fast's saver with a real learner and real files: round lines, the score windows (play's `ShareWindow`
under the fast kind), the gated opponent and global slots, metrics lines, the round counter, resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sacbot.agent.trainer import SacTrainer
from sacbot.agent.trainer_config import TrainerConfig
from sacbot.checkpoint import best_path, opponent_best_path, read_meta
from sacbot.env.fast_saver import FastSaver, resume, resumed_meta
from sacbot.records import read_round_counter
from sacbot.runtime.learner import AgentLearner

TRAINED = {"opponents": ["SpinBot", "Target"], "sampling": "spread"}


def _learner() -> AgentLearner:
    return AgentLearner(SacTrainer(TrainerConfig(batch_size=4, replay_capacity=4000, seed=1, device="cpu")))


def _result(opponent: str, own: float, enemy: float, outcome: str = "lost") -> dict[str, Any]:
    return {"opponent": opponent, "score": own, "opponent_score": enemy, "outcome": outcome, "round": 1}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_rounds_fill_the_windows_and_the_slots_are_gated_by_their_share(tmp_path: Path) -> None:
    learner = _learner()
    saver = FastSaver(tmp_path, ("SpinBot", "Target"), 2, TRAINED)
    saver.round_end(_result("SpinBot", 30, 70), True, 100, reward_sum=1.5)
    saver.round_end(_result("FastSnap1", 50, 0, "won"), True, 200, reward_sum=0.0)  # a snapshot: no window
    saver.round_end(_result("Target", 10, 10), False, 300, reward_sum=0.0)  # truncated: no window either
    saver.save(learner, {"critic_loss": 1.0})
    assert (tmp_path / "latest.zip").is_file() and not (tmp_path / "opponents").exists()
    assert not best_path(tmp_path).exists()  # no window full yet
    saver.round_end(_result("SpinBot", 30, 70, "won"), True, 400, reward_sum=2.0)
    saver.save(learner, {"critic_loss": 0.5})
    meta = read_meta(opponent_best_path(tmp_path, "SpinBot"))
    assert meta is not None and meta.opponent == "SpinBot"
    assert meta.score == 0.3 and meta.score_kind == "fast_score_share_last_2"
    best = read_meta(best_path(tmp_path))
    assert best is not None and best.score == 0.3 and best.score_kind == "fast_score_share_last_2"
    assert best.extra["round_total"] == 4 and best.extra["written_by"] == "sacbot train-fast"
    assert best.extra["opponents"] == ["SpinBot", "Target"]
    assert saver.score_share() == {"SpinBot": 0.3} and saver.wins == {"SpinBot": 1, "Target": 0}
    assert (saver.snapshot_rounds, saver.snapshot_wins) == (1, 1)
    rounds = _lines(tmp_path / "rounds.jsonl")
    assert [r["round_total"] for r in rounds] == [1, 2, 3, 4] and rounds[0]["reward_sum"] == 1.5
    assert {"time", "written_by", "opponent", "score", "opponent_score", "outcome"} <= set(rounds[0])
    metrics = _lines(tmp_path / "training_metrics.jsonl")
    assert [m["critic_loss"] for m in metrics] == [1.0, 0.5]
    assert {"time", "env_steps", "updates", "written_by"} <= set(metrics[0])
    assert read_round_counter(tmp_path / "round_counter.json") == 4


def test_a_new_saver_counts_on_and_resume_restores_latest(tmp_path: Path) -> None:
    assert resumed_meta(tmp_path) is None
    learner = _learner()
    learner.trainer.env_steps = 1234
    saver = FastSaver(tmp_path, ("SpinBot",), 2, TRAINED)
    saver.round_end(_result("SpinBot", 1, 1), True, 0)
    saver.save(learner, {})
    assert FastSaver(tmp_path, ("SpinBot",), 2, TRAINED).rounds_total == 1
    meta = resumed_meta(tmp_path)
    assert meta is not None and meta.env_steps == 1234
    again, said = _learner(), list[str]()
    resume(tmp_path, again, replay_keep=0, say=said.append)
    assert again.env_steps == 1234 and len(said) == 1 and "resumed from" in said[0]
