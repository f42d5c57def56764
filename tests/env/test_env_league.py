"""train-fast's league: per-game draws (weights, PFSP), frozen snapshots of the learner as opponents."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sacbot.agent.features import RoundMemory, action_to_intent, stored_observation
from sacbot.agent.inference import FastActor
from sacbot.agent.sizes import NetworkSizes
from sacbot.agent.trainer import SacTrainer
from sacbot.agent.trainer_config import TrainerConfig
from sacbot.checkpoint import load_checkpoint
from sacbot.env import TankRoyaleEnv
from sacbot.env.league import FastLeague, FrozenActorBot, parse_weighted_opponents
from sacbot.env.train import train_fast
from sacbot.errors import UserError
from sacbot.opponents import ClassicBot
from sacbot.opponents.sampling import LeagueConfig
from sacbot.protocol import BotIntent, GameStartedEventForBot, TickEventForBot
from sacbot.settings import load_sacbot_settings


@pytest.fixture(scope="module")
def trainer() -> SacTrainer:
    return SacTrainer(TrainerConfig(device="cpu", seed=3))


class RecordingSnapshot(FrozenActorBot):
    """A FrozenActorBot that also runs the learner's own per-tick path (features, deterministic actor, action
    mapping) on every tick it gets, with a memory and hidden state of its own, and keeps both intents."""

    def __init__(self, actor: FastActor, reference: FastActor) -> None:
        super().__init__(actor, "Snap", radar_mode="lock", seed=1)
        self.reference = reference
        self.pairs: list[tuple[BotIntent, BotIntent]] = []
        self.ref_memory: RoundMemory | None = None
        self.ref_hidden = reference.initial_hidden()
        self.ref_round = 0

    def on_game_started(self, event: GameStartedEventForBot) -> None:
        super().on_game_started(event)
        setup = event.game_setup
        self.ref_memory = RoundMemory(
            float(setup.arena_width),
            float(setup.arena_height),
            event.my_id,
            gun_offset=self.reference.sizes.gun_offset,  # the gun entry read as the learner reads it
        )

    def on_tick(self, tick: TickEventForBot) -> BotIntent:
        memory = self.ref_memory
        assert memory is not None
        if tick.round_number != self.ref_round:
            self.ref_round = tick.round_number
            memory.new_round()
            self.ref_hidden = self.reference.initial_hidden()
        sizes = self.reference.sizes
        observed = stored_observation(
            tick, memory, sizes.wave_inputs, sizes.threat_inputs, False
        )  # as the learner
        action, self.ref_hidden = self.reference.step(observed, self.ref_hidden, deterministic=True)
        expected = action_to_intent(action, "lock", memory)
        got = super().on_tick(tick)
        self.pairs.append((got, expected))
        return got


@pytest.mark.parametrize("extra", ["", "wave_inputs", "threat_inputs", "gun_offset"])
def test_a_frozen_snapshot_plays_the_learners_deterministic_policy(trainer: SacTrainer, extra: str) -> None:
    """A snapshot acts as the learner would on its ticks, with the wave or threat inputs too when its
    networks read them, and its gun entry read as an offset from the enemy's bearing when they were trained
    so."""
    if extra:
        waves, threats, offset = (extra == name for name in ("wave_inputs", "threat_inputs", "gun_offset"))
        sizes = NetworkSizes(wave_inputs=waves, threat_inputs=threats, gun_offset=offset)
        trainer = SacTrainer(TrainerConfig(sizes=sizes, device="cpu", seed=3))
    sizes = trainer.config.sizes
    arrays = trainer.actor_arrays()
    bots: list[RecordingSnapshot] = []

    def source(seed: int) -> tuple[str, ClassicBot]:
        bots.append(RecordingSnapshot(FastActor(arrays, sizes), FastActor(arrays, sizes, native=False)))
        return "Snap", bots[-1]

    env = TankRoyaleEnv("SpinBot", rounds_per_game=2, max_turns=120, opponent_source=source)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=5)
    assert info["opponent"] == "Snap"
    ends = 0
    while ends < 3:  # two rounds of one game, then a new game: a new snapshot bot from the source
        obs, _, terminated, truncated, info = env.step(rng.uniform(-1, 1, 4).astype(np.float32))
        if terminated or truncated:
            assert info["round_result"]["opponent"] == "Snap"
            ends += 1
            env.reset()
    assert len(bots) >= 2
    pairs = [p for bot in bots for p in bot.pairs]
    assert len(pairs) > 100
    for got, expected in pairs:  # the native kernel against numpy: equal to float32 rounding
        for field in ("turn_rate", "target_speed", "gun_turn_rate", "radar_turn_rate", "firepower"):
            assert getattr(got, field) == pytest.approx(getattr(expected, field), abs=1e-4)
    assert any(abs(got.target_speed or 0.0) > 0.5 for got, _ in pairs)  # it acts, it is not a sitting duck


def test_parse_weighted_opponents() -> None:
    assert parse_weighted_opponents("spinbot:2, Walls") == [("SpinBot", 2.0), ("Walls", 1.0)]
    assert parse_weighted_opponents({"Target": 0.5}) == [("Target", 0.5)]
    for bad in ("SpinBot:x", "SpinBot:-1", "SpinBot:0", "Nobody:1", ""):
        with pytest.raises(UserError) as info:
            parse_weighted_opponents(bad)
        assert info.value.exit_code == 2 and "\n" not in str(info.value)


PFSP_20 = LeagueConfig(sampling="pfsp", pfsp_window=20)


def test_pfsp_draws_follow_the_in_process_results_and_resume_from_rounds_jsonl(
    tmp_path: Path, trainer: SacTrainer
) -> None:
    league = FastLeague([("SpinBot", 1.0), ("Walls", 1.0)], PFSP_20, tmp_path, seed=1)
    league.start(0, trainer.actor_arrays(), trainer.config.sizes, "lock")
    rows = []
    # It beats SpinBot every round and loses every round to Walls; truncated rounds do not count.
    for _ in range(40):
        for opponent, outcome in (("SpinBot", "won"), ("Walls", "lost"), ("Walls", "truncated")):
            rows.append({"written_by": "sacbot train-fast", "opponent": opponent, "outcome": outcome})
    for row in rows:
        league.record(row)
    weights, rates, rounds = league.weights()
    assert rounds == {"SpinBot": 20, "Walls": 20}
    assert rates["SpinBot"] > 0.95 and rates["Walls"] < 0.05
    draws = Counter(league.opponent_for(0, seed)[0] for seed in range(600))
    assert draws["Walls"] > 0.9 * 600 and draws["SpinBot"] > 0  # the floor keeps SpinBot in play
    line = league.pool_line(0)
    assert line["pool"]["Walls"] == pytest.approx(weights["Walls"] / sum(weights.values()), abs=1e-6)
    assert line["games"] == dict(draws) and league.pool_line(0)["games"] == {}
    # A resumed run refills the windows from rounds.jsonl, and draws the same as any run started there.
    (tmp_path / "rounds.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"torn')
    resumed = FastLeague([("SpinBot", 1.0), ("Walls", 1.0)], PFSP_20, tmp_path, seed=1)
    resumed.start(4000, trainer.actor_arrays(), trainer.config.sizes, "lock")
    assert resumed.weights() == league.weights()
    twin = FastLeague([("SpinBot", 1.0), ("Walls", 1.0)], PFSP_20, tmp_path, seed=1)
    twin.start(4000, trainer.actor_arrays(), trainer.config.sizes, "lock")
    assert [resumed.opponent_for(0, s)[0] for s in range(50)] == [
        twin.opponent_for(0, s)[0] for s in range(50)
    ]


def test_pfsp_revisit_draws_an_opponent_unmet_for_n_rounds_again_and_resumes(
    tmp_path: Path, trainer: SacTrainer
) -> None:
    config = LeagueConfig(sampling="pfsp", pfsp_window=20, pfsp_revisit=30)
    league = FastLeague([("SpinBot", 1.0), ("Walls", 1.0)], config, tmp_path, seed=1)
    league.start(0, trainer.actor_arrays(), trainer.config.sizes, "lock")
    rows = [{"written_by": "sacbot train-fast", "opponent": "SpinBot", "outcome": "won"}] * 20
    rows += [{"written_by": "sacbot train-fast", "opponent": "Walls", "outcome": o} for o in ["lost"] * 29]
    rows += [{"written_by": "sacbot train-fast", "opponent": "Walls", "outcome": "truncated"}] * 5
    for row in rows:
        league.record(row)
    assert league.stale() == [] and league.weights()[0]["SpinBot"] == 0.05  # 29 finished rounds without it
    rows.append({"written_by": "sacbot train-fast", "opponent": "Walls", "outcome": "lost"})
    league.record(rows[-1])
    weights, rates, _ = league.weights()
    assert league.stale() == ["SpinBot"] and weights["SpinBot"] == 1.0 and rates["SpinBot"] > 0.95
    draws = Counter(league.opponent_for(0, seed)[0] for seed in range(400))
    assert 0.4 * 400 < draws["SpinBot"] < 0.6 * 400  # about even with Walls, which it always loses to
    assert league.pool_line(0)["stale"] == ["SpinBot"]
    # A resumed run counts the same rounds from rounds.jsonl.
    (tmp_path / "rounds.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    resumed = FastLeague([("SpinBot", 1.0), ("Walls", 1.0)], config, tmp_path, seed=1)
    resumed.start(4000, trainer.actor_arrays(), trainer.config.sizes, "lock")
    assert resumed.stale() == ["SpinBot"] and resumed.weights() == league.weights()
    # One finished round against it, and its record sets its weight again.
    league.record({"opponent": "SpinBot", "outcome": "won"})
    assert league.stale() == [] and league.weights()[0]["SpinBot"] == 0.05


def test_pfsp_variance_curve_sends_the_games_where_the_record_is_even(
    tmp_path: Path, trainer: SacTrainer
) -> None:
    config = LeagueConfig(sampling="pfsp", pfsp_window=20, pfsp_curve="variance", pfsp_power=1.0)
    league = FastLeague([("SpinBot", 1.0), ("Walls", 1.0), ("Crazy", 1.0)], config, tmp_path, seed=1)
    league.start(0, trainer.actor_arrays(), trainer.config.sizes, "lock")
    # All won against SpinBot, all lost to Walls, every other round against Crazy.
    for k in range(20):
        crazy = "won" if k % 2 else "lost"
        for opponent, outcome in (("SpinBot", "won"), ("Walls", "lost"), ("Crazy", crazy)):
            league.record({"written_by": "sacbot train-fast", "opponent": opponent, "outcome": outcome})
    draws = Counter(league.opponent_for(0, seed)[0] for seed in range(600))
    assert draws["Crazy"] > 0.75 * 600 and draws["SpinBot"] > 0 and draws["Walls"] > 0
    assert league.pool_line(0)["pool"]["SpinBot"] == pytest.approx(league.pool_line(0)["pool"]["Walls"])


def rounds_of(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "rounds.jsonl").read_text().splitlines()]


def test_train_fast_plays_frozen_snapshots_of_itself(tmp_path: Path) -> None:
    def run(out: Path, steps: int = 1200) -> Any:
        return train_fast(
            "SpinBot:1,Target:1", out, steps=steps, envs=4, seed=2, updates_per_step=0.1, warmup_steps=200,
            save_every=600, max_turns=60, rounds_per_game=1,
            league_config=LeagueConfig(
                sampling="pfsp", snapshot_every=300, snapshot_cap=2, snapshot_weight=2.0
            ),
            settings=load_sacbot_settings().model_copy(
                update={"radar_mode": "lock", "aim_shaping": 0.0, "kickstart": 0.0}
            ),
        )  # fmt: skip

    out = tmp_path / "a"
    summary = run(out)
    assert summary.updates > 0
    rounds = rounds_of(out)
    played = Counter(r["opponent"] for r in rounds)
    snapshots_played = {name for name in played if name.startswith("FastSnap")}
    assert snapshots_played and {"SpinBot", "Target"} <= set(played)
    assert summary.snapshots == ["FastSnap900", "FastSnap1200"]
    assert sorted(p.name for p in (out / "league").iterdir()) == ["FastSnap1200.zip", "FastSnap900.zip"]
    arrays, meta = load_checkpoint(out / "league" / "FastSnap900.zip")  # actor only, verified
    assert meta is not None and meta.contents == "actor" and meta.env_steps == 900
    assert all(name.startswith("actor.") for name in arrays)
    log = [json.loads(line) for line in (out / "league.jsonl").read_text().splitlines()]
    snaps = [(e["name"], e["removed"]) for e in log if e["event"] == "snapshot"]
    assert snaps == [("FastSnap300", []), ("FastSnap600", []), ("FastSnap900", ["FastSnap300"]),
                     ("FastSnap1200", ["FastSnap600"])]  # fmt: skip
    pools = [e for e in log if e["event"] == "pool"]
    assert [p["env_steps"] for p in pools] == [600, 1200]
    assert pools[-1]["pool"].keys() == {"SpinBot", "Target", "FastSnap900", "FastSnap1200"}
    assert sum(sum(p["games"].values()) for p in pools) >= len(rounds)
    # Snapshot rounds stay out of the best slots.
    assert not list(out.glob("opponents/FastSnap*"))

    # Reproducible: the same settings in another folder play the same games.
    again = tmp_path / "b"
    run(again)
    key = [(r["opponent"], r["outcome"], r["turns"]) for r in rounds]
    assert [(r["opponent"], r["outcome"], r["turns"]) for r in rounds_of(again)] == key

    # A resumed run keeps the pool it left and goes on snapshotting.
    more = run(out, steps=300)
    assert more.snapshots == ["FastSnap1200", "FastSnap1500"]


def test_cli_refuses_league_options_that_do_not_fit(tmp_path: Path) -> None:
    cases = [
        (["--opponents", "SpinBot:2"], "--sampling"),
        (["--snapshot-every", "10"], "--sampling"),
        (["--sampling", "pfsp", "--workers", "1"], "--workers 0"),
        (["--sampling", "pfsp", "--pfsp-floor", "0"], "--pfsp-floor"),
        (["--sampling", "pfsp", "--pfsp-curve", "soft"], "--pfsp-curve"),
        (["--sampling", "pfsp", "--pfsp-revisit", "-1"], "--pfsp-revisit"),
        (["--sampling", "elo"], "--sampling"),
    ]
    for args, says in cases:
        out = tmp_path / "out"
        command = [sys.executable, "-m", "sacbot", "train-fast", *args, "--out", str(out)]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120, env={**os.environ})
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr.count("\n") == 1 and says in result.stderr, result.stderr
        assert not out.exists()
