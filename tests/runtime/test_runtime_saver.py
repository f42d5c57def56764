"""The round-end saver with a real learner and real files: latest, the opponent's gated slot, metrics."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

from sacbot.checkpoint import load_checkpoint, opponent_best_path, read_meta
from sacbot.records import read_round_counter
from sacbot.runtime.learner import AgentLearner
from sacbot.runtime.records import RoundReport
from sacbot.runtime.saver import RoundEndSaver, read_opponent_history

PASS = {"critic_loss": 1.0, "actor_loss": 2.0, "alpha_loss": 0.1, "alpha": 0.2, "replay_size": 0}


def test_every_round_leaves_a_loadable_latest_metrics_and_counter(
    tmp_path: Path, small_learner: Callable[..., AgentLearner], report: Callable[..., RoundReport]
) -> None:
    learner = small_learner()
    log = io.StringIO()
    saver = RoundEndSaver(tmp_path, None, best_window=3, log=log)
    for r in (1, 2, 3):
        saver.save_round(learner, report(r), PASS)
        arrays, meta = load_checkpoint(tmp_path / "latest.zip", learner.trainer.array_specs())
        assert meta is not None and meta.extra["round_total"] == r
        assert read_round_counter(tmp_path / "round_counter.json") == r
    assert log.getvalue().count("saved") == 3  # one stderr line per save
    rounds = [json.loads(line) for line in (tmp_path / "rounds.jsonl").read_text().splitlines()]
    assert [row["round"] for row in rounds] == [1, 2, 3]
    assert {"tick_to_intent_p99_ms", "skipped_turns", "dropped_transitions", "reward_sum", "outcome"} <= set(
        rounds[0]
    )
    metrics = [json.loads(line) for line in (tmp_path / "training_metrics.jsonl").read_text().splitlines()]
    assert [m["epoch"] for m in metrics] == [1, 2, 3]
    assert metrics[0]["critic_loss"] == 1.0
    counter = json.loads((tmp_path / "round_counter.json").read_text())
    assert counter["rounds"] == 3 and counter["time"] > 0
    assert not (tmp_path / "opponents").exists()  # no opponent key: no per-opponent slot


def test_opponent_slot_is_gated_by_the_score_share_window(
    tmp_path: Path, small_learner: Callable[..., AgentLearner], report: Callable[..., RoundReport]
) -> None:
    learner = small_learner()
    saver = RoundEndSaver(tmp_path, "SpinBot", best_window=2, log=io.StringIO())
    slot = opponent_best_path(tmp_path, "SpinBot")
    saver.save_round(learner, report(1, own=30, enemy=70), PASS)
    assert not slot.exists()  # the window is not full yet
    saver.save_round(learner, report(2, own=30, enemy=70), PASS)
    meta = read_meta(slot)
    assert meta is not None and meta.score == 0.3 and meta.score_kind == "play_score_share_last_2"
    saver.save_round(learner, report(3, own=10, enemy=90), PASS)  # share 0.2: worse, the slot keeps 0.3
    meta = read_meta(slot)
    assert meta is not None and meta.score == 0.3
    saver.save_round(learner, report(4, own=90, enemy=10), PASS)  # share 0.5: better
    meta = read_meta(slot)
    assert meta is not None and meta.score == 0.5
    assert not (tmp_path / "best.zip").exists()  # the global best is not play's to write
    rounds = [json.loads(line) for line in (tmp_path / "rounds.jsonl").read_text().splitlines()]
    # the logged share is the gate's window (the last 2 rounds), not the round's own: round 4 alone is 0.9
    assert [row["window_score_share"] for row in rounds] == [0.3, 0.3, 0.2, 0.5]
    assert "score_share" not in rounds[0]


def test_window_and_counter_survive_a_restart_and_a_torn_line(
    tmp_path: Path, small_learner: Callable[..., AgentLearner], report: Callable[..., RoundReport]
) -> None:
    learner = small_learner()
    saver = RoundEndSaver(tmp_path, "Walls", best_window=3, log=io.StringIO())
    for r, own in ((1, 10.0), (2, 20.0)):
        saver.save_round(learner, report(r, own=own, enemy=50.0), PASS)
    with (tmp_path / "rounds.jsonl").open("a") as handle:
        # train-fast's in-process round scores are not play's to gate with
        handle.write(
            '{"opponent": "Walls", "score": 99.0, "opponent_score": 1.0, "written_by": "sacbot train-fast"}\n'
        )
        handle.write('{"opponent": "Walls", "own_sc')  # a kill in the middle of a line
    assert read_opponent_history(tmp_path, "Walls", 3) == [(10.0, 50.0), (20.0, 50.0)]
    again = RoundEndSaver(tmp_path, "Walls", best_window=3, log=io.StringIO())
    assert again.rounds_total == 2 and len(again.window) == 2
    assert read_opponent_history(tmp_path, "Other", 3) == []
