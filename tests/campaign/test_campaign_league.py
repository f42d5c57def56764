"""The league (`[league]`): PFSP maths, the snapshot pool on real folders through the real loop, and one real
campaign on the embedded arena that plays a frozen snapshot of its own learner.

The loop tests use a scripted backend in place of the game processes only (as test_campaign_loop.py does); the
snapshots are real `make-twin` folders, the log and checkpoints real files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sacbot import jsonl
from sacbot.campaign.config import Campaign, parse_campaign
from sacbot.campaign.league import CampaignLeague
from sacbot.campaign.loop import CampaignLoop, ChunkFailed, ChunkOutcome, GameScore
from sacbot.campaign.twin import MARKER
from sacbot.checkpoint import CheckpointMeta, load_checkpoint, save_checkpoint
from sacbot.errors import UserError
from sacbot.opponents.sampling import (
    OpponentSampler,
    Record,
    league_draw,
    league_weights,
    pfsp_factor,
    recent_results,
    rounds_since,
    smoothed_win_rate,
)
from sacbot.records import CampaignEvent, read_events
from sacbot.rundir import RunPaths

REPO = Path(__file__).resolve().parents[2]


# -- PFSP maths (pure) -----------------------------------------------------------------------------


def test_pfsp_factor_smoothing_and_window() -> None:
    assert pfsp_factor(0.0, 2.0, 0.05) == 1.0
    assert pfsp_factor(0.5, 2.0, 0.05) == pytest.approx(0.25)
    assert pfsp_factor(1.0, 2.0, 0.05) == 0.05  # never zero: a beaten opponent still comes back
    assert pfsp_factor(0.9, 1.0, 0.2) == 0.2 and pfsp_factor(0.7, 1.0, 0.2) == pytest.approx(0.3)
    # The variance curve peaks at an even record and falls off on both sides, to the floor.
    assert pfsp_factor(0.5, 1.0, 0.05, "variance") == 1.0
    assert pfsp_factor(0.9, 1.0, 0.05, "variance") == pytest.approx(0.36)
    assert pfsp_factor(0.1, 2.0, 0.05, "variance") == pytest.approx(0.36**2)
    assert pfsp_factor(0.0, 1.0, 0.05, "variance") == pfsp_factor(1.0, 1.0, 0.05, "variance") == 0.05
    assert smoothed_win_rate(0, 0) == 0.5 and smoothed_win_rate(9.5, 10) == pytest.approx(10 / 11)
    records = [Record("A", 10, 10), Record("B", 4, 0), Record("A", 10, 0), Record("A", 5, 5)]
    # A's last 12 rounds: the newest 5 (all won), the 10 before (none), then nothing more fits.
    assert recent_results(records, 12) == {"A": (5.0, 12), "B": (0.0, 4)}
    # A record straddling the edge counts with the share that fits, its wins scaled alike.
    assert recent_results([Record("A", 10, 10), Record("A", 4, 0)], 9) == {"A": (5.0, 9)}
    with pytest.raises(ValueError):
        recent_results(records, 0)


def test_league_weights_follow_the_loss_rate_with_a_floor() -> None:
    base = {"Easy": 1.0, "Hard": 1.0, "New": 2.0, "Off": 0.0}
    results = {"Easy": (20.0, 20), "Hard": (0.0, 20)}
    weights, rates, rounds = league_weights(base, results, "pfsp", power=2.0, floor=0.05)
    assert list(weights) == ["Easy", "Hard", "New"]  # pool order; a zero weight is out
    assert weights["Easy"] == 0.05  # (1 - 20.5/21)^2 is below the floor
    assert weights["Hard"] == pytest.approx((1 - 0.5 / 21) ** 2)
    assert weights["New"] == pytest.approx(2.0 * 0.25)  # unplayed: win rate 0.5
    assert rounds == {"Easy": 20, "Hard": 20, "New": 0} and rates["New"] == 0.5
    fixed, _, _ = league_weights(base, results, "weights")
    assert fixed == {"Easy": 1.0, "Hard": 1.0, "New": 2.0}
    even, _, _ = league_weights(base, results, "pfsp", power=1.0, floor=0.05, curve="variance")
    assert even["New"] == 2.0  # unplayed (0.5): the top of the curve
    assert even["Easy"] == pytest.approx(4 * (20.5 / 21) * (0.5 / 21))
    assert even["Hard"] == pytest.approx(even["Easy"])  # all lost and all won weigh the same
    assert fixed == league_weights(base, results, "weights", curve="variance")[0]
    with pytest.raises(ValueError):
        league_weights({"A": 0.0}, {}, "pfsp")
    with pytest.raises(ValueError):
        league_weights(base, results, "pfsp", floor=0.0)


def test_league_draws_are_deterministic_and_follow_the_probabilities() -> None:
    base = {"A": 1.0, "B": 3.0, "Z": 0.0}
    # "weights" draws exactly what the campaign's weighted sampler draws, chunk by chunk.
    sampler = OpponentSampler(base, 5)
    assert all(
        league_draw(base, {}, "weights", f"sacbot-campaign:5:{k}").opponent == sampler.sample(k)
        for k in range(1, 500)
    )
    results = {"A": (0.0, 30), "B": (30.0, 30)}  # loses every round to A, wins every round against B
    picks = [league_draw(base, results, "pfsp", f"k:{k}").opponent for k in range(4000)]
    assert picks == [league_draw(base, results, "pfsp", f"k:{k}").opponent for k in range(4000)]
    probabilities = league_draw(base, results, "pfsp", "x").probabilities
    assert sum(probabilities.values()) == pytest.approx(1.0)
    share = Counter(picks)["A"] / len(picks)
    assert abs(share - probabilities["A"]) < 0.03 and probabilities["A"] > 0.8


# -- the campaign file -----------------------------------------------------------------------------

MINIMAL: dict[str, Any] = {"name": "t", "chunks": {"rounds": 2, "budget": 3}, "opponents": {"SpinBot": 1}}


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({**MINIMAL, "league": {"sampling": "hard"}}, "league.sampling"),
        ({**MINIMAL, "league": {"snapshot_every": -1}}, "league.snapshot_every"),
        ({**MINIMAL, "league": {"snapshot_cap": 0}}, "league.snapshot_cap"),
        ({**MINIMAL, "league": {"pfsp_floor": 0.0}}, "league.pfsp_floor"),
        ({**MINIMAL, "league": {"pfsp_curve": "soft"}}, "league.pfsp_curve"),
        ({**MINIMAL, "league": {"snapshot_every": 1, "snapshot_weight": 0}}, "league: snapshot_weight"),
        ({**MINIMAL, "league": {"typo": 1}}, "league.typo"),
        ({**MINIMAL, "opponents": {"SacSnap2": 1}, "league": {"snapshot_every": 1}}, "opponents: SacSnap2"),
        ({**MINIMAL, "pretrain": {"steps": 5, "opponents": {"SpinBot": -1}}}, "pretrain.opponents"),
        (
            {**MINIMAL, "pretrain": {"steps": 5, "opponents": ["SpinBot"], "league": {"x": 1}}},
            "pretrain.league",
        ),
    ],
)
def test_bad_league_tables_are_one_line(data: dict[str, Any], field: str) -> None:
    with pytest.raises(UserError) as info:
        parse_campaign(data, "c.toml")
    assert str(info.value).startswith(f"c.toml: {field}"), str(info.value)
    assert "\n" not in str(info.value) and info.value.exit_code == 2


def test_pretrain_league_becomes_train_fast_options() -> None:
    plain = parse_campaign({**MINIMAL, "pretrain": {"steps": 5, "opponents": ["SpinBot", "Walls"]}})
    assert plain.pretrain is not None and plain.league is None
    assert (plain.pretrain.sampling, plain.pretrain.opponents_arg()) == ("spread", "SpinBot,Walls")
    weighted = parse_campaign(
        {**MINIMAL, "pretrain": {"steps": 5, "opponents": {"SpinBot": 2, "Walls": 0.5}}}
    )
    assert weighted.pretrain is not None
    assert (weighted.pretrain.sampling, weighted.pretrain.opponents_arg()) == (
        "weights",
        "SpinBot:2,Walls:0.5",
    )
    league = parse_campaign(
        {**MINIMAL, "pretrain": {"steps": 5, "opponents": ["SpinBot"], "league": {"sampling": "pfsp"}}}
    )
    assert league.pretrain is not None and league.pretrain.sampling == "pfsp"


# -- the pool through the real loop ----------------------------------------------------------------


class LeagueBackend:
    """Stands in for the game processes: each chunk writes a new `latest` (w = chunk) and wins the rounds
    `win_rate` says for its opponent (snapshots: half)."""

    def __init__(self, out: Path, win_rate: dict[str, float], crash: set[int] | None = None) -> None:
        self.paths = RunPaths(out)
        self.win_rate = win_rate
        self.crash = set(crash or ())
        self.played: list[tuple[int, str]] = []

    def run_chunk(self, chunk: int, opponent: str, rounds: int, report: Any) -> ChunkOutcome:
        if chunk in self.crash:
            self.crash.discard(chunk)
            raise KeyboardInterrupt  # a kill in the middle of the chunk
        self.played.append((chunk, opponent))
        save_checkpoint(self.paths.latest, {"w": np.full(3, chunk, np.float32)}, CheckpointMeta())
        rate = self.win_rate.get(Path(opponent).name, 0.5)
        return ChunkOutcome(rounds=rounds, wins=round(rate * rounds), score_share=rate, seconds=0.01)

    def run_eval(self, checkpoint: Path, opponent: str, rounds: int, report: Any) -> GameScore:
        raise ChunkFailed("no evals here")

    def pretrain(self, report: Any) -> None:
        raise AssertionError("no pretraining here")

    def close(self) -> None:
        pass


def league_campaign(
    budget: int, league: dict[str, Any], opponents: dict[str, float] | None = None
) -> Campaign:
    return parse_campaign(
        {
            "name": "league",
            "seed": 11,
            "chunks": {"rounds": 10, "budget": budget},
            "opponents": opponents or {"SpinBot": 1, "Walls": 1},
            "league": league,
        }
    )


def events(out: Path) -> list[dict[str, Any]]:
    return jsonl.read(out / "campaign_log.jsonl").rows


def test_snapshots_rotate_on_real_folders_and_resume_rebuilds_the_pool(tmp_path: Path) -> None:
    league = {"snapshot_every": 2, "snapshot_cap": 2, "snapshot_weight": 2.0}
    backend = LeagueBackend(tmp_path, {})
    CampaignLoop(league_campaign(6, league), tmp_path, backend).run()
    log = events(tmp_path)
    snaps = [e for e in log if e["event"] == "snapshot"]
    assert [(e["chunk"], e["name"], e["pool"], e["removed"]) for e in snaps] == [
        (2, "SacSnap2", ["SacSnap2"], []),
        (4, "SacSnap4", ["SacSnap2", "SacSnap4"], []),
        (6, "SacSnap6", ["SacSnap4", "SacSnap6"], ["SacSnap2"]),
    ]
    folder = tmp_path / "league"
    assert sorted(p.name for p in folder.iterdir()) == ["SacSnap4", "SacSnap6"]  # the oldest is gone
    for name, chunk in (("SacSnap4", 4), ("SacSnap6", 6)):
        twin = folder / name
        assert json.loads((twin / MARKER).read_text())["learning"] is False
        assert json.loads((twin / f"{name}.json").read_text())["name"] == name
        frozen, _ = load_checkpoint(twin / "frozen.zip")  # the weights `latest` held after that chunk
        assert float(frozen["w"][0]) == chunk
    # Each chunk logged the pool it drew from: the snapshots share snapshot_weight evenly.
    draws = {e["chunk"]: e for e in log if e["event"] == "league_draw"}
    assert draws[1]["pool"] == {"SpinBot": 0.5, "Walls": 0.5} and draws[1]["snapshots"] == []
    assert draws[3]["pool"] == {"SpinBot": 0.25, "Walls": 0.25, "SacSnap2": 0.5}
    assert draws[5]["pool"] == {"SpinBot": 0.25, "Walls": 0.25, "SacSnap2": 0.25, "SacSnap4": 0.25}
    assert all(draws[c]["opponent"] == Path(o).name for c, o in backend.played)
    snapshot_games = [o for _, o in backend.played if "SacSnap" in o]
    assert snapshot_games and all(Path(o).is_absolute() for o in snapshot_games)  # booted by folder

    # A kill after a snapshot event but before its clean-up: a stale folder; one before the event: a
    # half-written folder of the next snapshot. Resuming (budget raised) cleans both and rebuilds the pool.
    stale = folder / "SacSnap2"
    stale.mkdir()
    (stale / MARKER).write_text("{}")
    (folder / "SacSnap8").mkdir()
    (folder / "SacSnap8" / "frozen.zip").write_bytes(b"torn")
    again = LeagueBackend(tmp_path, {})
    CampaignLoop(league_campaign(8, league), tmp_path, again).run()
    assert sorted(p.name for p in folder.iterdir()) == ["SacSnap6", "SacSnap8"]
    assert CampaignLeague(league_campaign(8, league), RunPaths(tmp_path)).pool_snapshots(
        read_events(tmp_path / "campaign_log.jsonl")
    ) == [
        "SacSnap6",
        "SacSnap8",
    ]
    frozen, _ = load_checkpoint(folder / "SacSnap8" / "frozen.zip")
    assert float(frozen["w"][0]) == 8


def test_a_snapshot_a_kill_missed_is_taken_on_resume_from_the_same_latest(tmp_path: Path) -> None:
    league = {"snapshot_every": 1, "snapshot_cap": 3}
    CampaignLoop(league_campaign(2, league), tmp_path, LeagueBackend(tmp_path, {})).run()
    # As if the run died between chunk 2's chunk_done and its snapshot event.
    log_path = tmp_path / "campaign_log.jsonl"
    kept = [
        line for line in log_path.read_text().splitlines() if '"snapshot"' not in line or '"chunk": 1' in line
    ]
    log_path.write_text("\n".join(kept) + "\n")
    CampaignLoop(league_campaign(2, league), tmp_path, LeagueBackend(tmp_path, {})).run()
    snaps = [e["name"] for e in events(tmp_path) if e["event"] == "snapshot"]
    assert snaps == ["SacSnap1", "SacSnap2"]
    frozen, _ = load_checkpoint(tmp_path / "league" / "SacSnap2" / "frozen.zip")
    assert float(frozen["w"][0]) == 2


def test_pfsp_meets_the_opponent_it_loses_to_and_a_resumed_chunk_its_first_draw(tmp_path: Path) -> None:
    campaign = league_campaign(40, {"sampling": "pfsp", "pfsp_window": 20, "pfsp_floor": 0.05})
    backend = LeagueBackend(tmp_path, {"SpinBot": 1.0, "Walls": 0.0}, crash={25})
    with pytest.raises(KeyboardInterrupt):
        CampaignLoop(campaign, tmp_path, backend).run()
    resumed = LeagueBackend(tmp_path, {"SpinBot": 1.0, "Walls": 0.0})
    CampaignLoop(campaign, tmp_path, resumed).run()
    played = backend.played + resumed.played
    assert [c for c, _ in played] == list(range(1, 41))
    counts = Counter(o for _, o in played)
    assert counts["Walls"] > 3 * counts["SpinBot"] and counts["SpinBot"] >= 1
    log = events(tmp_path)
    draws = [e for e in log if e["event"] == "league_draw"]
    first, second = [e for e in draws if e["chunk"] == 25]
    assert first["opponent"] == second["opponent"] and second["resumed"] is True
    assert first["pool"] == second["pool"]  # the inputs of chunk 25's draw did not change with the kill
    late = draws[-1]
    assert late["win_rates"]["SpinBot"] > 0.9 and late["win_rates"]["Walls"] < 0.1
    assert late["pool"]["Walls"] > 0.9 and late["sampling"] == "pfsp"
    # The draw is a function of the log: recomputing chunk 40's gives the same probabilities and opponent.
    before_40 = read_events(tmp_path / "campaign_log.jsonl")[: log.index(late)]
    opponent, fields = CampaignLeague(campaign, RunPaths(tmp_path)).draw(40, before_40)
    assert (opponent, fields["pool"]) == (late["opponent"], late["pool"])


def test_pfsp_revisit_counts_rounds_since_each_opponents_last() -> None:
    records = [Record("A", 10, 10), Record("B", 4, 0), Record("A", 0, 0), Record("B", 30, 0)]
    since = rounds_since(records)
    assert (since.since("A"), since.since("B"), since.since("C")) == (34, 0, 44)  # C: never met
    assert since.stale(["A", "B", "C"], 34) == ["A", "C"] and since.stale(["A", "B", "C"], 0) == []
    results = recent_results(records, 30)
    # A, beaten in all its rounds, sits at the floor until it is stale; then it draws at factor 1.
    plain, _, _ = league_weights({"A": 1.0, "B": 2.0}, results, "pfsp")
    revisited, _, _ = league_weights({"A": 1.0, "B": 2.0}, results, "pfsp", stale=["A"])
    assert plain["A"] == 0.05 and revisited["A"] == 1.0 and revisited["B"] == plain["B"]
    assert league_weights({"A": 1.0}, results, "weights", stale=["A"])[0] == {"A": 1.0}


def test_pfsp_revisit_brings_a_beaten_opponent_back_in_a_campaign(tmp_path: Path) -> None:
    """All SpinBot rounds won, all Walls rounds lost: plain PFSP keeps SpinBot at the floor; with
    `pfsp_revisit = 50` it is met again once 50 rounds (5 chunks) have passed without it."""
    league = {"sampling": "pfsp", "pfsp_window": 20}
    plain = LeagueBackend(tmp_path / "plain", {"SpinBot": 1.0, "Walls": 0.0})
    CampaignLoop(league_campaign(60, league), tmp_path / "plain", plain).run()
    backend = LeagueBackend(tmp_path / "revisit", {"SpinBot": 1.0, "Walls": 0.0})
    CampaignLoop(league_campaign(60, {**league, "pfsp_revisit": 50}), tmp_path / "revisit", backend).run()
    spin = [c for c, o in backend.played if o == "SpinBot"]
    assert len(spin) > 2 * sum(1 for _, o in plain.played if o == "SpinBot")
    draws = {e["chunk"]: e for e in events(tmp_path / "revisit") if e["event"] == "league_draw"}
    for chunk, draw in draws.items():
        unmet = chunk - 1 - max([c for c in spin if c < chunk], default=0)
        assert draw["stale"] == (["SpinBot"] if unmet >= 5 else [])
        if unmet >= 5 and chunk > 10:
            assert draw["pool"]["SpinBot"] == pytest.approx(1.0 / (1.0 + pfsp_factor(0.5 / 21, 2.0, 0.05)))
    plain_draws = [e for e in events(tmp_path / "plain") if e["event"] == "league_draw"]
    assert all(e["stale"] == [] for e in plain_draws)  # pfsp_revisit = 0: off


# -- a real campaign -------------------------------------------------------------------------------

OPPONENT = "TrackFire"


def test_smoke_league_campaign_plays_its_own_snapshot(tmp_path: Path) -> None:
    """Chunk 1 against TrackFire, then `SacSnap1` (a frozen twin of `latest`) joins the pool and chunk 2 plays
    it; a `[pretrain.league]` fast phase runs first with PFSP and in-process snapshots."""
    cfg = tmp_path / "league.toml"
    # seed 2: chunk 2 draws the snapshot whatever chunk 1's result (0, 1 or 2 wins of 2): asserted below.
    cfg.write_text(
        f"""
name = "league-smoke"
seed = 2
bots_dirs = ["{REPO / "bots"}"]
[game]
type = "1v1"
setup = {{ arena_width = 400, arena_height = 400, max_inactivity_turns = 150 }}
[chunks]
rounds = 2
budget = 2
[opponents]
{OPPONENT} = 1
[league]
sampling = "pfsp"
snapshot_every = 1
snapshot_cap = 1
snapshot_weight = 1.0
[liveness]
boot_timeout_s = 60
round_timeout_s = 60
[pretrain]
steps = 600
envs = 2
updates_per_step = 0.0
rounds_per_game = 1
opponents = {{ {OPPONENT} = 1, Target = 1 }}
[pretrain.league]
sampling = "pfsp"
snapshot_every = 200
snapshot_cap = 2
pfsp_curve = "variance"
pfsp_revisit = 2
"""
    )
    campaign = parse_campaign(tomllib.loads(cfg.read_text()))
    league = CampaignLeague(campaign, RunPaths(tmp_path / "probe"))
    for wins in (0, 1, 2):
        done = [CampaignEvent(event="chunk_done", time=1.0, chunk=1, opponent=OPPONENT, rounds=2, wins=wins)]
        snap = [CampaignEvent(event="snapshot", time=2.0, name="SacSnap1")]
        (tmp_path / "probe" / "league" / "SacSnap1").mkdir(parents=True, exist_ok=True)
        for f in (MARKER, "frozen.zip", "SacSnap1.json"):
            (tmp_path / "probe" / "league" / "SacSnap1" / f).write_text("{}")
        assert league.draw(2, done + snap)[1]["opponent"] == "SacSnap1"

    out = tmp_path / "run"
    result = subprocess.run(
        [sys.executable, "-m", "sacbot", "train-campaign", str(cfg), "--out", str(out), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    log = events(out)
    played = [(e["chunk"], e["opponent"]) for e in log if e["event"] == "chunk_done"]
    assert played == [(1, OPPONENT), (2, "SacSnap1")]
    draws = [e for e in log if e["event"] == "league_draw"]
    assert [d["pool"] for d in draws][0] == {OPPONENT: 1.0}
    assert set(draws[1]["pool"]) == {OPPONENT, "SacSnap1"} and draws[1]["sampling"] == "pfsp"
    assert draws[1]["rounds"] == {OPPONENT: 2, "SacSnap1": 0}
    snaps = [(e["name"], e["pool"], e["removed"]) for e in log if e["event"] == "snapshot"]
    assert snaps == [("SacSnap1", ["SacSnap1"], []), ("SacSnap2", ["SacSnap2"], ["SacSnap1"])]
    assert sorted(p.name for p in (out / "league").iterdir()) == ["SacSnap2"]
    # The snapshot played as a frozen twin: eval mode writes nothing into its weights folder.
    assert json.loads((out / "weights" / "round_counter.json").read_text())["rounds"] == 4
    assert not (out / "league" / "SacSnap2" / "weights" / "rounds.jsonl").exists()
    # The fast phase got the same league: PFSP draws per game and in-process snapshots.
    start = next(e for e in log if e["event"] == "pretrain_start")
    assert "--sampling pfsp" in start["command"] and "--snapshot-every 200" in start["command"]
    assert "--pfsp-curve variance" in start["command"] and "--pfsp-revisit 2" in start["command"]
    assert f"--opponents {OPPONENT}:1,Target:1" in start["command"]
    fast = [json.loads(line) for line in (out / "pretrain" / "league.jsonl").read_text().splitlines()]
    assert [e["name"] for e in fast if e["event"] == "snapshot"] == [
        "FastSnap200",
        "FastSnap400",
        "FastSnap600",
    ]
    pool = [e for e in fast if e["event"] == "pool"][-1]
    assert pool["sampling"] == "pfsp" and set(pool["pool"]) == {
        OPPONENT,
        "Target",
        "FastSnap400",
        "FastSnap600",
    }
    assert sorted(p.name for p in (out / "pretrain" / "league").iterdir()) == [
        "FastSnap400.zip",
        "FastSnap600.zip",
    ]
