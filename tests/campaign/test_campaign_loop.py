"""The campaign loop's decisions (retries, evals, promotion, resume) with a scripted backend.

The backend here stands in for the game processes only; real checkpoints, logs and the real gate are used. The
same loop over real processes is tested in test_campaign_e2e.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sacbot import jsonl
from sacbot.campaign.config import Campaign, parse_campaign
from sacbot.campaign.log import ResumeState
from sacbot.campaign.loop import CampaignFailed, CampaignLoop, ChunkFailed, ChunkOutcome, GameScore
from sacbot.checkpoint import CheckpointMeta, load_checkpoint, read_meta, save_checkpoint
from sacbot.errors import UserError
from sacbot.records import read_best_score, read_events
from sacbot.rundir import RunPaths

from .campaign_support import ScriptedBackend


def make_campaign(budget: int = 3, every: int = 1, retries: int = 2) -> Campaign:
    return parse_campaign(
        {
            "name": "loop",
            "chunks": {"rounds": 2, "budget": budget},
            "opponents": {"SpinBot": 1, "Walls": 1},
            "eval": {"every": every, "rounds": 2, "opponents": ["SpinBot"]},
            "retry": {"max_retries": retries, "backoff_s": 0.5},
        }
    )


def events(out: Path) -> list[dict[str, Any]]:
    return jsonl.read(out / "campaign_log.jsonl").rows


def test_retries_including_the_final_chunk(tmp_path: Path) -> None:
    backend = ScriptedBackend(tmp_path, ["ok", "crash", "ok", "crash", "crash", "ok"], [0.2, 0.3, 0.4])
    sleeps: list[float] = []
    state = CampaignLoop(make_campaign(), tmp_path, backend, sleep=sleeps.append).run()
    assert state.completed == 3
    log = events(tmp_path)
    failed = [e for e in log if e["event"] == "chunk_failed"]
    assert [(e["chunk"], e["attempt"]) for e in failed] == [(2, 1), (3, 1), (3, 2)]
    assert sleeps == [0.5, 0.5, 1.0]
    assert log[-1]["event"] == "finished" and log[-1]["completed"] == 3
    assert [e["chunk"] for e in log if e["event"] == "chunk_done"] == [1, 2, 3]


def test_gives_up_after_bounded_retries_and_resumes(tmp_path: Path) -> None:
    campaign = make_campaign(budget=2, retries=1)
    backend = ScriptedBackend(tmp_path, ["ok", "crash", "crash"], [0.2])
    with pytest.raises(CampaignFailed) as info:
        CampaignLoop(campaign, tmp_path, backend, sleep=lambda s: None).run()
    assert info.value.exit_code != 0 and "unfinished" in str(info.value)
    assert events(tmp_path)[-1]["event"] == "gave_up"
    # Re-running the same campaign resumes at chunk 2 (chunk 1 and its eval are not repeated).
    again = ScriptedBackend(tmp_path, ["ok"], [0.3])
    state = CampaignLoop(campaign, tmp_path, again, sleep=lambda s: None).run()
    assert state.completed == 2
    assert again.calls == [("chunk", 2), ("eval", "SpinBot")]
    assert ResumeState.from_events(read_events(tmp_path / "campaign_log.jsonl")).runs == 2


def test_worse_eval_never_replaces_the_best(tmp_path: Path) -> None:
    # Composite with window 5: 0.6, then (0.6+0.2)/2=0.4 (worse), then (0.6+0.2+0.9)/3≈0.567 (still worse),
    # then (0.6+0.2+0.9+1.0)/4=0.675 (better).
    backend = ScriptedBackend(tmp_path, ["ok"] * 4, [0.6, 0.2, 0.9, 1.0])
    loop = CampaignLoop(make_campaign(budget=4), tmp_path, backend, sleep=lambda s: None)
    loop.run()
    log = events(tmp_path)
    assert [e["promoted"] for e in log if e["event"] == "eval_done"] == [True, False, False, True]
    arrays, meta = load_checkpoint(tmp_path / "weights" / "best.zip")
    assert meta is not None and meta.score == pytest.approx(0.675)
    assert float(arrays["w"][0]) == 4.0  # the chunk-4 weights, not chunk 2's or 3's
    mirror = read_best_score(RunPaths(tmp_path))  # best_score.json, for people
    assert mirror is not None and mirror.score == pytest.approx(0.675) and mirror.chunk == 4
    assert mirror.kind == meta.score_kind == "campaign-eval-composite:score_share:ma5"
    assert loop.best_composite() == pytest.approx(0.675)


def test_the_stored_best_gates_across_runs(tmp_path: Path) -> None:
    best = tmp_path / "weights" / "best.zip"
    kind = "campaign-eval-composite:score_share:ma5"
    save_checkpoint(best, {"w": np.zeros(3, np.float32)}, CheckpointMeta(score=0.8, score_kind=kind))
    backend = ScriptedBackend(tmp_path, ["ok"], [0.7])
    CampaignLoop(make_campaign(budget=1), tmp_path, backend, sleep=lambda s: None).run()
    meta = read_meta(best)
    assert meta is not None and meta.score == 0.8
    assert not (tmp_path / "best_score.json").exists()


def test_interrupt_is_logged_and_resumable(tmp_path: Path) -> None:
    campaign = make_campaign(budget=2, every=0)
    with pytest.raises(KeyboardInterrupt):
        CampaignLoop(
            campaign, tmp_path, ScriptedBackend(tmp_path, ["ok", "interrupt"], []), sleep=lambda s: None
        ).run()
    assert events(tmp_path)[-1]["event"] == "interrupted"
    again = ScriptedBackend(tmp_path, ["ok"], [])
    assert CampaignLoop(campaign, tmp_path, again, sleep=lambda s: None).run().completed == 2
    assert again.calls == [("chunk", 2)]


def test_an_eval_interrupted_after_its_chunk_runs_first_on_resume(tmp_path: Path) -> None:
    campaign = make_campaign(budget=2, every=1)

    class EvalInterrupted(ScriptedBackend):
        def run_eval(self, checkpoint: Path, opponent: str, rounds: int, report: Any) -> GameScore:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        CampaignLoop(campaign, tmp_path, EvalInterrupted(tmp_path, ["ok"], []), sleep=lambda s: None).run()
    again = ScriptedBackend(tmp_path, ["ok"], [0.5, 0.6])
    CampaignLoop(campaign, tmp_path, again, sleep=lambda s: None).run()
    assert again.calls == [("eval", "SpinBot"), ("chunk", 2), ("eval", "SpinBot")]
    assert [e["chunk"] for e in events(tmp_path) if e["event"] == "eval_done"] == [1, 2]
    assert not list((tmp_path / "eval").glob("candidate-*.zip"))


def test_a_run_folder_of_another_campaign_is_refused(tmp_path: Path) -> None:
    CampaignLoop(make_campaign(budget=1, every=0), tmp_path, ScriptedBackend(tmp_path, ["ok"], [])).run()
    other = parse_campaign({"name": "other", "chunks": {"rounds": 1, "budget": 1}, "opponents": {"Walls": 1}})
    before = (tmp_path / "campaign_log.jsonl").read_text()
    with pytest.raises(UserError, match="holds a run of campaign 'loop'"):
        CampaignLoop(other, tmp_path, ScriptedBackend(tmp_path, [], [])).run()
    assert (tmp_path / "campaign_log.jsonl").read_text() == before


def test_a_run_folder_resumes_only_with_its_seed(tmp_path: Path) -> None:
    campaign = make_campaign(budget=2, every=0)
    with pytest.raises(KeyboardInterrupt):
        CampaignLoop(
            campaign, tmp_path, ScriptedBackend(tmp_path, ["ok", "interrupt"], []), sleep=lambda s: None
        ).run()
    assert [e["seed"] for e in events(tmp_path) if e["event"] == "start"] == [campaign.seed]
    before = (tmp_path / "campaign_log.jsonl").read_text()
    other = campaign.model_copy(update={"seed": campaign.seed + 4})
    refused = ScriptedBackend(tmp_path, ["ok"], [])
    with pytest.raises(UserError, match=f"holds a run with seed {campaign.seed}, not {campaign.seed + 4}"):
        CampaignLoop(other, tmp_path, refused, sleep=lambda s: None).run()
    assert refused.calls == [] and (tmp_path / "campaign_log.jsonl").read_text() == before
    assert CampaignLoop(campaign, tmp_path, ScriptedBackend(tmp_path, ["ok"], [])).run().completed == 2


def test_start_from_and_pretraining_seed_latest_once(tmp_path: Path) -> None:
    seed = tmp_path / "seed.zip"
    save_checkpoint(seed, {"w": np.full(3, 9, np.float32)}, CheckpointMeta())
    base = {"chunks": {"rounds": 1, "budget": 1}, "opponents": {"Walls": 1}}
    seeded = parse_campaign({"name": "s", "start_from": str(seed), **base})
    out = tmp_path / "a"

    class Records(ScriptedBackend):
        def run_chunk(self, chunk: int, opponent: str, rounds: int, report: Any) -> ChunkOutcome:
            arrays, _ = load_checkpoint(self.paths.latest)
            self.calls.append(("latest", float(arrays["w"][0])))
            return super().run_chunk(chunk, opponent, rounds, report)

    backend = Records(out, ["ok"], [])
    CampaignLoop(seeded, out, backend, sleep=lambda s: None).run()
    assert backend.calls[0] == ("latest", 9.0)
    assert [e["event"] for e in events(out)].count("seeded") == 1

    class Pretrains(ScriptedBackend):
        def pretrain(self, report: Any) -> None:
            self.calls.append(("pretrain", 0))
            if len(self.calls) == 1:
                raise ChunkFailed("train-fast exited with code 1")
            save_checkpoint(self.paths.latest, {"w": np.full(3, 5, np.float32)}, CheckpointMeta())

    pre = parse_campaign({"name": "p", "pretrain": {"steps": 10, "opponents": ["SpinBot"]}, **base})
    out = tmp_path / "b"
    pretrains = Pretrains(out, ["ok"], [])
    CampaignLoop(pre, out, pretrains, sleep=lambda s: None).run()
    assert pretrains.calls == [("pretrain", 0), ("pretrain", 0), ("chunk", 1)]
    log_events = [e["event"] for e in events(out)]
    assert log_events.count("pretrain_done") == 1 and log_events.count("chunk_failed") == 1


def test_pretrained_weights_are_evaluated_before_the_first_chunk_also_after_an_interrupt(
    tmp_path: Path,
) -> None:
    campaign = parse_campaign(
        {
            "name": "p0",
            "chunks": {"rounds": 1, "budget": 1},
            "opponents": {"Walls": 1},
            "eval": {"every": 1, "rounds": 1, "opponents": ["SpinBot"]},
            "pretrain": {"steps": 10, "opponents": ["SpinBot"]},
        }
    )

    class Pretrains(ScriptedBackend):
        def pretrain(self, report: Any) -> None:
            self.calls.append(("pretrain", 0))
            save_checkpoint(self.paths.latest, {"w": np.full(3, 5, np.float32)}, CheckpointMeta())

    class EvalInterrupted(Pretrains):
        def run_eval(self, checkpoint: Path, opponent: str, rounds: int, report: Any) -> GameScore:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        CampaignLoop(campaign, tmp_path, EvalInterrupted(tmp_path, [], []), sleep=lambda s: None).run()
    again = Pretrains(tmp_path, ["ok"], [0.7, 0.4])
    CampaignLoop(campaign, tmp_path, again, sleep=lambda s: None).run()
    # Pretraining is not repeated; its weights are scored (eval 0) before chunk 1 trains on.
    assert again.calls == [("eval", "SpinBot"), ("chunk", 1), ("eval", "SpinBot")]
    assert [e["chunk"] for e in events(tmp_path) if e["event"] == "eval_done"] == [0, 1]
    best, _ = load_checkpoint(tmp_path / "weights" / "best.zip")
    assert float(best["w"][0]) == 5.0  # chunk 1 scored worse: best.zip still holds the pretrained weights
