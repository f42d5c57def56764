"""The layout of a weights folder and of a campaign run folder, as the docs and older runs have it."""

from __future__ import annotations

from pathlib import Path

from sacbot.checkpoint import best_path, latest_path, opponent_best_path
from sacbot.rundir import RunPaths, WeightsPaths


def test_a_weights_folder(tmp_path: Path) -> None:
    w = WeightsPaths.of(str(tmp_path))
    names = {
        w.latest: "latest.zip",
        w.best: "best.zip",
        w.opponent("Walls"): "opponents/Walls.zip",
        w.replay: "replay.npz",
        w.training_metrics: "training_metrics.jsonl",
        w.rounds: "rounds.jsonl",
        w.round_counter: "round_counter.json",
        w.league_log: "league.jsonl",
        w.league: "league",
    }
    assert {path.relative_to(tmp_path).as_posix(): name for path, name in names.items()} == {
        name: name for name in names.values()
    }
    assert (latest_path(tmp_path), best_path(tmp_path)) == (w.latest, w.best)
    assert opponent_best_path(tmp_path, "Walls") == w.opponent("Walls")


def test_a_campaign_run_folder() -> None:
    run = RunPaths(Path("run"))
    assert [
        p.as_posix() for p in (run.latest, run.best, run.weights.rounds, run.campaign_log, run.eval_log)
    ] == [
        "run/weights/latest.zip",
        "run/weights/best.zip",
        "run/weights/rounds.jsonl",
        "run/campaign_log.jsonl",
        "run/eval_log.jsonl",
    ]
    assert [p.as_posix() for p in (run.best_score, run.legacy_best_score, run.candidate(7), run.logs)] == [
        "run/best_score.json",
        "run/best_score",
        "run/eval/candidate-00007.zip",
        "run/logs",
    ]
    assert run.eval_weights.folder.as_posix() == "run/eval/weights"
    assert run.pretrain.league_log.as_posix() == "run/pretrain/league.jsonl"
    assert (run.league.as_posix(), run.report.as_posix()) == ("run/league", "run/report")
