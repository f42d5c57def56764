"""The pure parts of campaigns: the file model, sampler, scoring, log/resume state, retries, liveness."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sacbot.campaign.config import load_campaign, parse_campaign
from sacbot.campaign.liveness import LivenessWatch
from sacbot.campaign.log import CampaignLog, ResumeState
from sacbot.campaign.retry import RetryPolicy
from sacbot.campaign.scoring import (
    RoundWins,
    composite,
    moving_average,
    should_promote,
    summarize_results,
)
from sacbot.errors import UserError
from sacbot.opponents.sampling import OpponentSampler
from sacbot.records import CampaignEvent, EvalRecord, MetricsLine, RoundLine

REPO = Path(__file__).resolve().parents[2]

MINIMAL = {"name": "t", "chunks": {"rounds": 2, "budget": 3}, "opponents": {"SpinBot": 1}}
PRE = {"steps": 100, "opponents": ["SpinBot"]}


def test_shipped_campaigns_load() -> None:
    smoke = load_campaign(REPO / "campaigns" / "smoke.toml")
    standard = load_campaign(REPO / "campaigns" / "standard.toml")
    assert smoke.server.embedded and smoke.chunks.budget >= 2
    assert standard.chunks.budget * standard.chunks.rounds > smoke.chunks.budget * smoke.chunks.rounds
    assert standard.eval.every > 0 and standard.eval.opponents


def test_defaults_and_full_file(tmp_path: Path) -> None:
    c = parse_campaign(MINIMAL)
    assert c.server.embedded and c.server.tps == -1
    assert c.game.type == "1v1" and c.eval.every == 0 and c.pretrain is None
    assert c.out_dir() == Path("runs/t") and c.out_dir(tmp_path) == tmp_path
    path = tmp_path / "c.toml"
    path.write_text(
        """
name = "full"
out = "somewhere"
seed = 7
[server]
url = "ws://127.0.0.1:7654"
controller_secret = "c"
bot_secret = "b"
[game]
type = "classic"
setup = { turn_timeout = 40000 }
[chunks]
rounds = 5
budget = 10
[opponents]
Corners = 1
SacTwin = 3
"elsewhere/MyBot" = 0.5
[eval]
every = 2
rounds = 4
opponents = ["Corners", "Walls"]
[pretrain]
steps = 1000
opponents = ["SpinBot"]
[bot]
radar_mode = "lock"
kickstart = 2.5
kickstart_anneal = 6000
kickstart_anneal_from = 2000
kickstart_floor = 0.5
kickstart_movement = 0.2
kickstart_movement_from = 3000
kickstart_filter = true
teacher_surf = true
teacher_gun = "wave"
anchor = 5.0
anchor_movement = 10.0
self_imitation = 2.0
hindsight_aim = 3.0
hindsight_steps = 4
hindsight_trigger = 0.5
hindsight_distance = "absolute"
hindsight_target = "bearing"
n_step = 5
angle_inputs = true
energy_inputs = true
lead_inputs = true
wave_inputs = true
threat_inputs = true
bullet_inputs = true
gun_offset = true
wave_decay = 0.5
wave_aim = "virtual"
threat_visits = 0.3
log_std_max = 0.0
target_entropy = -8.0
behaviour_log_std_min = -1.5
fresh_fraction = 0.5
gun_spread = 4.0
eval_actions = "speed"
"""
    )
    c = load_campaign(path)
    assert c.bot.environment() == {
        "SACBOT_RADAR_MODE": "lock",
        "SACBOT_KICKSTART": "2.5",
        "SACBOT_KICKSTART_ANNEAL": "6000",
        "SACBOT_KICKSTART_ANNEAL_FROM": "2000",
        "SACBOT_KICKSTART_FLOOR": "0.5",
        "SACBOT_KICKSTART_MOVEMENT": "0.2",
        "SACBOT_KICKSTART_MOVEMENT_FROM": "3000",
        "SACBOT_KICKSTART_FILTER": "1",
        "SACBOT_TEACHER_SURF": "1",
        "SACBOT_TEACHER_GUN": "wave",
        "SACBOT_ANCHOR": "5.0",
        "SACBOT_ANCHOR_MOVEMENT": "10.0",
        "SACBOT_SELF_IMITATION": "2.0",
        "SACBOT_HINDSIGHT_AIM": "3.0",
        "SACBOT_HINDSIGHT_STEPS": "4",
        "SACBOT_HINDSIGHT_TRIGGER": "0.5",
        "SACBOT_HINDSIGHT_DISTANCE": "absolute",
        "SACBOT_HINDSIGHT_TARGET": "bearing",
        "SACBOT_N_STEP": "5",
        "SACBOT_ANGLE_INPUTS": "1",
        "SACBOT_ENERGY_INPUTS": "1",
        "SACBOT_LEAD_INPUTS": "1",
        "SACBOT_WAVE_INPUTS": "1",
        "SACBOT_THREAT_INPUTS": "1",
        "SACBOT_BULLET_INPUTS": "1",
        "SACBOT_GUN_OFFSET": "1",
        "SACBOT_WAVE_DECAY": "0.5",
        "SACBOT_WAVE_AIM": "virtual",
        "SACBOT_THREAT_VISITS": "0.3",
        "SACBOT_LOG_STD_MAX": "0.0",
        "SACBOT_TARGET_ENTROPY": "-8.0",
        "SACBOT_BEHAVIOUR_LOG_STD_MIN": "-1.5",
        "SACBOT_FRESH_FRACTION": "0.5",
        "SACBOT_GUN_SPREAD": "4.0",
        "SACBOT_EVAL_ACTIONS": "speed",
    }
    assert parse_campaign(MINIMAL).bot.environment() == {}  # unset: the environment's own settings hold
    assert c.server.url == "ws://127.0.0.1:7654" and c.server.bot_secret == "b"
    assert c.game.setup == {"turn_timeout": 40000}
    assert c.opponents["SacTwin"] == 3 and c.eval.opponents == ["Corners", "Walls"]
    assert c.pretrain is not None and c.pretrain.envs == 8


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({**MINIMAL, "chunks": {"rounds": 0, "budget": 3}}, "chunks.rounds"),
        ({**MINIMAL, "chunks": {"rounds": 2}}, "chunks.budget"),
        ({**MINIMAL, "opponents": {"Walls": -1}}, "opponents"),
        ({**MINIMAL, "opponents": {"SacBot": 1}}, "opponents"),
        ({**MINIMAL, "opponents": {}}, "opponents"),
        ({**MINIMAL, "server": {"url": "http://x"}}, "server.url"),
        ({**MINIMAL, "game": {"type": "2v2"}}, "game.type"),
        ({**MINIMAL, "eval": {"every": 2}}, "eval"),
        ({**MINIMAL, "chunkz": 1}, "chunkz"),
        ({**MINIMAL, "bot": {"kickstart": -1}}, "bot.kickstart"),
        ({**MINIMAL, "bot": {"radar_mode": "sweep"}}, "bot.radar_mode"),
        ({**MINIMAL, "bot": {"radar": "lock"}}, "bot.radar"),
        ({**MINIMAL, "bot": {"kickstart": float("inf")}}, "bot.kickstart"),
        ({**MINIMAL, "bot": {"n_step": 17}}, "bot.n_step"),
        ({**MINIMAL, "bot": {"kickstart_anneal": -5}}, "bot.kickstart_anneal"),
        ({**MINIMAL, "bot": {"kickstart_floor": -1.0}}, "bot.kickstart_floor"),
        ({**MINIMAL, "bot": {"log_std_max": 2.5}}, "bot.log_std_max"),
        ({**MINIMAL, "bot": {"fresh_fraction": 1.5}}, "bot.fresh_fraction"),
        ({**MINIMAL, "bot": {"gun_spread": 0.5}}, "bot.gun_spread"),
        ({**MINIMAL, "bot": {"kickstart": 5.0}, "game": {"setup": {"arena_width": 1000}}}, "bot.kickstart"),
        ({k: v for k, v in MINIMAL.items() if k != "name"}, "name"),
        ({**MINIMAL, "pretrain": {**PRE, "stages": [{"name": "a b", "steps": 9}]}}, "pretrain.stages.0.name"),
        ({**MINIMAL, "pretrain": {**PRE, "stages": [{"name": "a", "steps": 0}]}}, "pretrain.stages.0.steps"),
        ({**MINIMAL, "pretrain": {**PRE, "stages": [{"name": "a", "steps": 9}] * 2}}, "pretrain.stages"),
        (
            {**MINIMAL, "pretrain": {**PRE, "stages": [{"name": "a", "steps": 9, "bot": {"anchor": -1}}]}},
            "pretrain.stages.0.bot.anchor",
        ),
        (
            {
                **MINIMAL,
                "game": {"setup": {"arena_width": 1000}},
                "pretrain": {**PRE, "stages": [{"name": "a", "steps": 9, "bot": {"kickstart": 5.0}}]},
            },
            "bot.kickstart",
        ),  # fmt: skip
    ],
)
def test_bad_campaign_names_the_field(data: dict[str, object], field: str) -> None:
    with pytest.raises(UserError) as info:
        parse_campaign(data, "c.toml")
    message = str(info.value)
    assert message.startswith(f"c.toml: {field}")
    assert "\n" not in message and info.value.exit_code == 2


def test_each_stage_changes_the_bot_from_there_on() -> None:
    """`bot_for(n)`: `[bot]` with the first n stages' changes over it, in order; None: all (the chunks')."""
    stages = [
        {"name": "surf", "steps": 9, "bot": {"teacher_surf": True, "anchor": 50.0, "anchor_movement": 0.0}},
        {"name": "gun", "steps": 9, "runs": 3, "bot": {"anchor": 5.0, "teacher_gun": "wave"}},
    ]
    c = parse_campaign({**MINIMAL, "pretrain": {**PRE, "stages": stages}, "bot": {"kickstart": 50.0}})
    assert c.bot_for(0) == c.bot and c.bot_for(0).environment() == {"SACBOT_KICKSTART": "50.0"}
    assert c.bot_for(1).environment() == {
        "SACBOT_KICKSTART": "50.0", "SACBOT_TEACHER_SURF": "1", "SACBOT_ANCHOR": "50.0",
        "SACBOT_ANCHOR_MOVEMENT": "0.0",
    }  # fmt: skip
    assert c.bot_for() == c.bot_for(2) and c.bot_for().environment() == {
        "SACBOT_KICKSTART": "50.0", "SACBOT_TEACHER_SURF": "1", "SACBOT_TEACHER_GUN": "wave",
        "SACBOT_ANCHOR": "5.0", "SACBOT_ANCHOR_MOVEMENT": "0.0",
    }  # fmt: skip
    assert (
        c.pretrain is not None
        and c.pretrain.stages[1].runs == 3
        and c.pretrain.stages[0].critic_warmup == 2000
    )
    assert parse_campaign(MINIMAL).bot_for() == parse_campaign(MINIMAL).bot  # no pretraining, no stages


def test_bad_toml_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \n")
    with pytest.raises(UserError, match="not valid TOML"):
        load_campaign(bad)
    with pytest.raises(UserError, match="cannot read"):
        load_campaign(tmp_path / "missing.toml")


def test_sampler_is_seeded_per_chunk_and_weighted() -> None:
    weights = {"A": 1.0, "B": 3.0, "Z": 0.0}
    s1, s2 = OpponentSampler(weights, 5), OpponentSampler(weights, 5)
    picks = [s1.sample(k) for k in range(1, 2001)]
    assert picks == [s2.sample(k) for k in range(1, 2001)]
    assert s1.sample(17) == s1.sample(17)  # a retried or resumed chunk plays the same opponent
    counts = Counter(picks)
    assert "Z" not in counts
    assert 0.70 < counts["B"] / len(picks) < 0.80
    other = OpponentSampler(weights, 6)
    assert [other.sample(k) for k in range(1, 2001)] != picks
    with pytest.raises(ValueError):
        OpponentSampler({"A": 0.0}, 1)


def rec(opponent: str, chunk: int, share: float, win_rate: float = 0.0) -> EvalRecord:
    return EvalRecord(
        opponent=opponent,
        rounds=10,
        wins=int(win_rate * 10),
        win_rate=win_rate,
        score_share=share,
        chunk=chunk,
        time=0.0,
    )


def test_composite_is_mean_of_moving_averages() -> None:
    history = [rec("A", c, share) for c, share in enumerate([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6])]
    history += [rec("B", 1, 0.9)]
    assert moving_average(history, "A", "score_share", 5) == pytest.approx(0.4)  # last five: .2 .. .6
    assert composite(history, ["A", "B"], "score_share", 5) == pytest.approx((0.4 + 0.9) / 2)
    assert composite(history, ["A", "C"], "score_share", 5) is None  # C never evaluated
    assert composite(history, ["A"], "win_rate", 5) == 0.0
    assert composite(history, [], "score_share", 5) is None


def test_promotion_is_strict() -> None:
    assert should_promote(0.5, None)
    assert should_promote(0.51, 0.5)
    assert not should_promote(0.5, 0.5)
    assert not should_promote(0.49, 0.5)
    assert not should_promote(None, None)


def test_summarize_results_from_observer_results() -> None:
    results = [
        {"name": "SacBot", "totalScore": 300, "firstPlaces": 3, "bulletDamage": 120},
        {"name": "Walls", "totalScore": 100, "firstPlaces": 1, "bulletDamage": 40},
    ]
    assert summarize_results(results, "SacBot", 4, 3) == (3, 0.75, 0.75, 120.0)
    assert summarize_results(results, "Nobody", 4, 0) == (0, 0.0, 0.0, 0.0)


def test_a_round_won_is_a_round_survived_last_not_a_shared_first_place() -> None:
    wins = RoundWins("SacBot")
    # Round 1: SacBot is the last survivor. Round 2: both die together (equal totals share rank 1, so both get
    # a first place). Round 3: Walls wins.
    rounds = [
        [{"name": "SacBot", "lastSurvivorBonus": 10, "firstPlaces": 1}, {"name": "Walls", "firstPlaces": 0}],
        [{"name": "SacBot", "lastSurvivorBonus": 10, "firstPlaces": 2}, {"name": "Walls", "firstPlaces": 1}],
        [
            {"name": "SacBot", "lastSurvivorBonus": 10, "firstPlaces": 2},
            {"name": "Walls", "lastSurvivorBonus": 10, "firstPlaces": 2},
        ],
    ]
    counted = []
    for accumulated in rounds:
        wins.absorb(accumulated)
        counted.append(wins.wins)
    assert counted == [1, 1, 1]


def test_log_resume_state_skips_torn_lines(tmp_path: Path) -> None:
    log = CampaignLog(tmp_path / "campaign_log.jsonl")
    log.write("start")
    for chunk in (1, 2):
        log.write("chunk_start", chunk=chunk, attempt=1)
        log.write("chunk_done", chunk=chunk)
    log.write("chunk_failed", chunk=3, attempt=1, reason="x")
    log.write("chunk_done", chunk=4)  # out of order: does not count until 3 is done
    log.write("eval_done", chunk=2)
    with open(log.path, "a") as fh:
        fh.write('{"event": "chunk_done", "chu')  # a kill mid-write
    state = ResumeState.from_events(log.events())
    assert state.completed == 2 and state.evaluated == {2} and state.retries == 1 and state.runs == 1
    assert all(isinstance(e, CampaignEvent) for e in log.events()) and len(log.events()) == 8
    assert CampaignLog(tmp_path / "absent.jsonl").events() == []


def test_retry_policy_is_bounded_with_backoff() -> None:
    policy = RetryPolicy(max_retries=2, backoff_s=1.0, factor=3.0, max_backoff_s=5.0)
    assert policy.may_retry(1) and policy.may_retry(2) and not policy.may_retry(3)
    assert [policy.delay(n) for n in (0, 1, 2, 3)] == [0.0, 1.0, 3.0, 5.0]


def test_liveness_needs_both_round_events_and_counter() -> None:
    watch = LivenessWatch(timeout_s=10, now=0.0, counter_baseline=4)
    watch.round_event(1, False, now=5.0)
    watch.counter(4, now=8.0)  # unchanged: no news
    assert watch.hung(9.0) is None
    watch.round_event(1, True, now=12.0)
    reason = watch.hung(12.5)
    assert reason is not None and "round counter" in reason  # server plays on, the bot is frozen
    watch.counter(5, now=13.0)
    assert watch.hung(14.0) is None
    watch.round_event(1, True, now=20.0)  # a repeat is not progress
    reason = watch.hung(23.5)
    assert reason is not None and "no round event" in reason
    unwatched = LivenessWatch(timeout_s=10, now=0.0)
    unwatched.round_event(3, False, now=9.0)
    assert unwatched.hung(15.0) is None


def test_fault_spec_and_bot_dir_lookup(tmp_path: Path) -> None:
    from sacbot.campaign.bot_env import resolve_bot_dir
    from sacbot.campaign.faults import parse_faults

    assert parse_faults("kill_bot@2.1, hang_bot@3,server_crash@1.2") == {
        (2, 1): "kill_bot",
        (3, 1): "hang_bot",
        (1, 2): "server_crash",
    }
    assert parse_faults(None) == {}
    with pytest.raises(UserError):
        parse_faults("explode@1.1")
    (tmp_path / "b" / "Walls").mkdir(parents=True)
    (tmp_path / "b" / "Walls" / "Walls.json").write_text("{}")
    assert resolve_bot_dir("Walls", [tmp_path / "a", tmp_path / "b"]) == tmp_path / "b" / "Walls"
    assert resolve_bot_dir(f"{tmp_path}/b/Walls", []) == tmp_path / "b" / "Walls"
    with pytest.raises(UserError, match="no bot directory"):
        resolve_bot_dir("Nobody", [tmp_path / "b"])


def test_live_stats_from_the_bots_lines() -> None:
    from sacbot.campaign.watch import LiveStats

    rounds = [
        RoundLine.model_validate({"round": r, "skipped_turns": n}) for r, n in ((2, 1), (3, 2), (4, "x"))
    ]
    metrics = [
        MetricsLine.model_validate(
            {"time": 10.0, "env_steps": 500, "updates": 100, "alpha": 0.2, "critic_loss": 1.5}
        ),
        MetricsLine.model_validate(
            {"time": 12.0, "env_steps": 700, "updates": 300, "alpha": 0.1, "actor_loss": -2, "qf1_loss": None}
        ),
    ]
    stats = LiveStats()
    stats.absorb(rounds, metrics[:1])
    stats.absorb([], metrics[1:])
    assert stats.skipped_turns == 3 and stats.alpha == 0.1
    assert stats.losses == {"actor_loss": -2.0} and stats.updates_per_s == pytest.approx(100.0)


def test_view_folds_events_and_renders() -> None:
    from rich.console import Console

    from sacbot.campaign.view import CampaignView

    view = CampaignView("t", 2)
    for event in [
        {"event": "start", "completed": 0},
        {"event": "chunk_start", "chunk": 1, "attempt": 1, "opponent": "Walls"},
        {
            "event": "round",
            "round": 1,
            "rounds": 2,
            "win_rate": 0.5,
            "alpha": 0.2,
            "losses": {"critic_loss": 1.0},
        },
        {"event": "chunk_failed", "chunk": 1, "attempt": 1, "reason": "hung", "retry_in_s": 1.0},
        {"event": "chunk_done", "chunk": 1, "attempt": 2, "opponent": "Walls", "rounds": 2, "wins": 1}
        | {"win_rate": 0.5, "score_share": 0.4, "seconds": 3.0},
        {"event": "eval_result", "opponent": "Walls", "chunk": 1, "rounds": 2, "wins": 1}
        | {"win_rate": 0.5, "score_share": 0.4},
        {"event": "eval_done", "chunk": 1, "composite": 0.4, "best": 0.4, "promoted": True},
    ]:
        view.update(event)
    console = Console(width=120, record=True)
    console.print(view.render())
    console.print(view.summary())
    text = console.export_text()
    assert "1 of 2" in text and "Walls" in text and "critic_loss" in text and "retries 1" in text


def test_view_names_the_pretraining_phase_and_each_stage() -> None:
    from rich.console import Console

    from sacbot.campaign.view import CampaignView

    view = CampaignView("t", 2)
    seen = []
    events: list[dict[str, Any]] = [
        {"event": "start", "completed": 0},
        {"event": "pretrain_start", "command": "python -m sacbot train-fast --out runs/x/pretrain"},
        {"event": "pretrain_start", "command": "python -m sacbot train-fast", "name": "stage-surf"},
        {"event": "pretrain_progress", "name": "stage-surf", "env_steps": 12000, "updates": 900}
        | {"until": 160000},
        {"event": "pretrain_done"},
    ]
    for event in events:
        view.update(event)
        console = Console(width=120, record=True)
        console.print(view.render())
        seen.append(console.export_text())
    assert "- of 2" in seen[0] and "(starting)" in seen[0]
    assert "pretraining: sacbot train-fast, its output in logs/pretrain.log" in seen[1]
    assert "stage surf: sacbot train-fast, its output in logs/stage-surf.log" in seen[2]
    assert "stage surf: env steps 12,000 of 160,000, updates 900 (logs/stage-surf.log)" in seen[3]
    assert "(pretraining done)" in seen[4]


@pytest.mark.parametrize(
    "path", sorted((Path(__file__).resolve().parents[2] / "campaigns").glob("*.toml")), ids=lambda p: p.name
)
def test_the_shipped_campaign_files_are_valid_and_name_known_opponents(path: Path) -> None:
    from sacbot.opponents import opponent_class

    campaign = load_campaign(path)
    for name in [*campaign.opponents, *campaign.eval.opponents]:
        assert opponent_class(name).name == name  # each one a built-in opponent, spelled as the registry does
