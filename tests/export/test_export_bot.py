"""`sacbot export-bot`: the exported folder plays exactly as `sacbot play --eval` does, on the official Python
Bot API, with neither sacbot nor torch; it boots by its script or with no script; it refuses bad input and
damaged weights with one line.

The reference is play's eval path built as `sacbot.runtime.app.run_play` builds it (`choose_start`,
`radar_mode_for`, `AgentFeatures`, `make_fast_actor`, a deterministic `RealtimePolicy`), run in-process
(`LocalBattle`) with the same seed and bot ids as the arena game it is compared with. The arena numbers
bots by random session ids. Every round is reproducible there: the next round waits for the answers to the
last tick (the official API sends none to that tick, so each round's end waits the turn timeout).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from sacbot.agent.sizes import NetworkSizes
from sacbot.agent.trainer import SacTrainer
from sacbot.agent.trainer_config import TrainerConfig
from sacbot.arena.battle import run_battle
from sacbot.arena.booter import Booter, launch_command, read_bot_dir
from sacbot.arena.controller import play_game
from sacbot.arena.server import EmbeddedArena
from sacbot.checkpoint import save_trainer
from sacbot.engine import game_setup_for
from sacbot.errors import UserError
from sacbot.export.policy import DESCRIPTION_FILE, WEIGHTS_FILE, ExportLoadError, read_description
from sacbot.export.writer import LIB, VENV, export_bot
from sacbot.opponents import make_opponent
from sacbot.opponents.local import LocalBattle
from sacbot.protocol import (
    BotIntent,
    GameEndedEventForBot,
    GameSetup,
    GameStartedEventForBot,
    GameStartedEventForObserver,
    Message,
    RoundEndedEventForBot,
    RoundStartedEvent,
    TickEventForBot,
    TickEventForObserver,
    encode,
)
from sacbot.runtime.learner import AgentFeatures, make_fast_actor
from sacbot.runtime.policy import RealtimePolicy
from sacbot.runtime.startup import actor_specs, choose_start, radar_mode_for

NAME = "ExpBot"
REPO = Path(__file__).resolve().parents[2]
SPIN_BOT = REPO / "bots" / "SpinBot"
# A slow bot on a loaded test machine must never turn into a skipped turn: the arena still runs each turn
# as soon as both bots answered.
LONG_TURN_TIMEOUT = 2_000_000


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh-init archive written by the project's own saver, trained (it says) with a locked radar. The
    mean's biases are set so that it drives, turns its gun and fires (a bare fresh init hardly does)."""
    path = tmp_path_factory.mktemp("ckpt") / "fresh.zip"
    trainer = SacTrainer(TrainerConfig(seed=11, device="cpu", replay_capacity=64))
    with torch.no_grad():
        trainer.actor.mu.bias.copy_(torch.tensor([0.2, 0.8, 0.4, 1.5]))
    save_trainer(path, trainer, extra={"radar_mode": "lock"})
    return path


@pytest.fixture(scope="module")
def exported(checkpoint: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    result = export_bot(checkpoint, NAME, tmp_path_factory.mktemp("bots"))
    assert result.radar_mode == "lock" and result.radar_source == "the checkpoint's"
    return result.folder


@pytest.fixture(scope="module")
def installed(exported: Path) -> Path:
    """The folder after its own script made venv/ and installed requirements.txt from the package index
    (no sacbot, no torch there). No server listens, so the bot then ends with one line and exit code 1."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["SERVER_URL"] = "ws://127.0.0.1:9"
    done = subprocess.run(
        ["sh", str(exported / f"{NAME}.sh")], capture_output=True, text=True, env=env, timeout=600
    )
    assert "installing requirements.txt" in done.stderr, done.stderr[-2000:]
    assert "radar lock, actions mean, actor step in" in done.stderr, done.stderr[-2000:]
    assert done.returncode == 1 and f"{NAME}: error: " in done.stderr.splitlines()[-1], done.stderr[-2000:]
    python = exported / VENV / "bin" / "python"
    check = "import importlib.util as u; print([bool(u.find_spec(m)) for m in ('sacbot', 'torch', 'numpy')])"
    found = subprocess.run([str(python), "-c", check], capture_output=True, text=True, cwd="/", timeout=60)
    assert found.stdout.strip() == "[False, False, True]", found.stdout + found.stderr
    return exported


# --- the reference: play's eval path -------------------------------------------------------------------


class RecordingFeatures(AgentFeatures):
    """play's feature object, keeping every state, reward and action it handled."""

    def __init__(self, radar_mode: Any, sizes: NetworkSizes) -> None:
        super().__init__(radar_mode, sizes, training=False)  # the eval path: no critics' inputs
        self.states: list[np.ndarray] = []
        self.rewards: list[float] = []
        self.actions: list[np.ndarray] = []

    def observe(self, tick: Any) -> np.ndarray:
        state = super().observe(tick)
        self.states.append(state.copy())
        return state

    def reward(self, tick: Any) -> float:
        value = super().reward(tick)
        self.rewards.append(value)
        return value

    def to_intent(self, action: np.ndarray) -> Any:
        self.actions.append(np.array(action))
        return super().to_intent(action)


def play_eval_policy(
    checkpoint: Path, sizes: NetworkSizes | None = None
) -> tuple[RealtimePolicy, RecordingFeatures]:
    """`sacbot play --eval` with SACBOT_CHECKPOINT=checkpoint (networks of `sizes`), as `run_play` assembles
    it."""
    sac = SacTrainer(TrainerConfig(sizes=sizes or NetworkSizes(), device="cpu", replay_capacity=64))
    start = choose_start(checkpoint, checkpoint.parent, None, sac.array_specs(), actor_only=True)
    assert start.arrays is not None
    radar_mode, _ = radar_mode_for(None, start.meta)
    wanted = actor_specs(sac.array_specs())
    frozen = make_fast_actor({k: v for k, v in start.arrays.items() if k in wanted}, sac.config.sizes)
    features = RecordingFeatures(radar_mode, sac.config.sizes)
    return RealtimePolicy(features, lambda: frozen, None, None, actions="mean"), features


class Recorder:
    """A LocalBattle policy: play's eval policy, writing down every message it was sent and its intents."""

    def __init__(self, policy: RealtimePolicy) -> None:
        self.policy = policy
        self.messages: list[tuple[str, str]] = []
        self.intents: list[BotIntent] = []

    def on_game_started(self, event: GameStartedEventForBot) -> None:
        self.messages.append(("game", encode(event)))
        self.policy.on_game_started(event)

    def on_round_started(self, event: RoundStartedEvent) -> None:
        self.messages.append(("round", encode(event)))
        self.policy.on_round_started(event)

    def on_tick(self, tick: TickEventForBot) -> BotIntent:
        self.messages.append(("tick", encode(tick)))
        intent: BotIntent = self.policy.on_tick(tick)
        self.intents.append(intent)
        return intent

    def on_round_ended(self, event: RoundEndedEventForBot) -> None:
        self.policy.on_round_ended(event)

    def on_game_ended(self, event: GameEndedEventForBot) -> None:
        self.policy.on_game_ended(event)


Trace = list[tuple[int, int, tuple[tuple[float, ...], ...]]]


def _trace_row(tick: TickEventForObserver) -> tuple[int, int, tuple[tuple[float, ...], ...]]:
    bots = sorted((b.id, b.x, b.y, b.direction, b.energy) for b in tick.bot_states)
    return tick.round_number, tick.turn_number, tuple(tuple(map(float, b)) for b in bots)


def reference_game(checkpoint: Path, setup: GameSetup, seed: int, ids: dict[str, int]) -> Trace:
    """Every turn of play --eval against SpinBot in-process, with the arena game's seed and ids."""
    policy, _ = play_eval_policy(checkpoint)
    ours = next(bid for name, bid in ids.items() if name != "SpinBot")
    battle = LocalBattle(setup, {ours: policy, ids["SpinBot"]: make_opponent("SpinBot")}, seed=seed)
    trace: Trace = []

    def on_turn(game: Any) -> None:
        trace.append(_trace_row(game.tick_for_observer()))

    while not battle.game.game_over:
        assert battle.play_round(on_turn=on_turn)
    return trace


def arena_game(
    bot_dir: Path, setup: GameSetup, seed: int, python: Path | None = None
) -> tuple[dict[str, int], Trace]:
    """One game of `bot_dir` against SpinBot on the embedded arena: the ids and every turn, as observed."""
    ids: dict[str, int] = {}
    trace: Trace = []

    def on_event(message: Message) -> None:
        if isinstance(message, GameStartedEventForObserver):
            ids.update({p.name: p.id for p in message.participants})

    def on_tick(tick: TickEventForObserver) -> None:
        trace.append(_trace_row(tick))

    if python is None:
        run_battle([bot_dir, SPIN_BOT], setup, seed=seed, on_event=on_event, on_tick=on_tick)
    else:  # a booter whose Python is `python` (the official one runs `python3 <Name>.py` from PATH)
        with (
            EmbeddedArena(bot_secrets={"b"}, controller_secrets={"c"}, seed=seed) as arena,
            Booter(arena.url, "b", python=str(python), log_dir=bot_dir.parent / "logs") as booter,
        ):
            booter.boot_all([bot_dir, SPIN_BOT])
            names = [read_bot_dir(bot_dir).name, "SpinBot"]
            play_game(arena.url, setup, names, secret="c", on_event=on_event, on_tick=on_tick)
    return ids, trace


def assert_same_game(got: Trace, want: Trace) -> None:
    assert [r[:2] for r in got] == [r[:2] for r in want]  # the same turns of the same rounds
    np.testing.assert_allclose(
        np.array([r[2] for r in got]), np.array([r[2] for r in want]), rtol=0, atol=1e-6
    )


# --- 1. the same actions as play --eval on recorded ticks ------------------------------------------------

# Runs in the exported folder's own terms: its lib/ first on sys.path, its <Name>.py as a module. Each
# recorded wire message goes through the official API's own parsing and mapping, as the API's websocket
# handler does, then to the exported bot's handlers; what the API would send is read from its intent.
DRIVER = textwrap.dedent(
    """
    import importlib.util, json, sys
    from pathlib import Path

    folder, messages, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    spec = importlib.util.spec_from_file_location("exported_bot", folder / (folder.name + ".py"))
    bot_file = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bot_file)
    sys.path.insert(0, str(folder / "lib"))  # as the bot's main() does

    import sacbot
    from sacbot.agent import features
    from sacbot.export.policy import load_policy, wire_view
    from robocode_tank_royale.bot_api.bot_info import BotInfo
    from robocode_tank_royale.bot_api.events.game_started_event import GameStartedEvent
    from robocode_tank_royale.bot_api.initial_position import InitialPosition
    from robocode_tank_royale.bot_api.internal.json_util import from_json, to_json
    from robocode_tank_royale.bot_api.mapper.event_mapper import EventMapper
    from robocode_tank_royale.bot_api.mapper.game_setup_mapper import GameSetupMapper

    policy = load_policy(folder)
    bot = bot_file.make_bot(policy, BotInfo.from_file(str(folder / (folder.name + ".json"))))
    rows, memory, my_id = [], None, None
    for line in messages.read_text().splitlines():
        kind, text = json.loads(line)
        message = from_json(text)
        if kind == "game":
            my_id = message.my_id
            bot._internals.my_id = my_id
            setup = GameSetupMapper.map(message.game_setup)
            start = InitialPosition(message.start_x, message.start_y, message.start_direction)
            bot.on_game_started(GameStartedEvent(my_id, start, setup))
            memory = features.RoundMemory(float(setup.arena_width), float(setup.arena_height), my_id)
        elif kind == "round":
            memory.new_round()  # the rewards' memory only: the bot itself resets on the tick's round number
        else:
            tick = EventMapper.map_tick_event(message, bot)
            bot._internals.tick_event = tick  # what the API's websocket handler does with a tick
            bot.on_tick(tick)
            rows.append({
                "state": policy.state.tolist(),
                "action": policy.action.tolist(),
                "intent": json.loads(to_json(bot._internals.bot_intent)),
                "reward": features.reward(wire_view(tick, my_id), memory),
            })
    heavy = sorted({m.split(".")[0] for m in sys.modules} & {"torch", "pydantic", "pydantic_core"})
    result = {"rows": rows, "sacbot": sacbot.__file__, "heavy": heavy, "native": policy.actor.native}
    out.write_text(json.dumps(result))
    """
)


@pytest.fixture(scope="module")
def recorded(
    checkpoint: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Recorder, RecordingFeatures]:
    """play --eval's game against TrackFire: every message it was sent (a JSONL file), its intents and what
    its features saw."""
    policy, seen = play_eval_policy(checkpoint)
    messages, recorder = record_game(policy, tmp_path_factory.mktemp("recorded"))
    return messages, recorder, seen


def record_game(policy: RealtimePolicy, folder: Path) -> tuple[Path, Recorder]:
    """The policy's game against TrackFire, every message written to a JSONL file in `folder`."""
    recorder = Recorder(policy)
    # Two rounds against a gunner that hits: scans, deaths and hits happen, and the round reset is crossed.
    setup = game_setup_for("1v1", number_of_rounds=2, arena_width=400, arena_height=400, gun_cooling_rate=1.0)
    LocalBattle(setup, {1: recorder, 2: make_opponent("TrackFire", seed=1)}, seed=5).play()
    messages = folder / "messages.jsonl"
    messages.write_text("".join(json.dumps(m) + "\n" for m in recorder.messages))
    return messages, recorder


def exported_run(folder: Path, messages: Path, tmp_path: Path, env: dict[str, str]) -> dict[str, Any]:
    """The exported folder's bot, on the official API in a subprocess, fed the recorded messages."""
    driver, out = tmp_path / "driver.py", tmp_path / "exported.json"
    driver.write_text(DRIVER)
    done = subprocess.run(
        [sys.executable, str(driver), str(folder), str(messages), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(out.read_text())
    assert Path(result["sacbot"]).is_relative_to(folder / LIB)  # the folder's own copy, not this sacbot
    assert result["heavy"] == []  # no torch, no pydantic
    return result


def test_exported_actions_equal_play_eval_on_recorded_ticks(
    exported: Path, recorded: tuple[Path, Recorder, RecordingFeatures], tmp_path: Path
) -> None:
    messages, recorder, seen = recorded
    # Where no C compiler is found (an empty PATH, an empty kernel cache) the actor steps in numpy.
    (tmp_path / "no-tools").mkdir()
    bare = {**os.environ, "PATH": str(tmp_path / "no-tools"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    bare.pop("CC", None)
    fallback = exported_run(exported, messages, tmp_path, bare)
    assert not fallback["native"]
    np.testing.assert_allclose(
        [r["action"] for r in fallback["rows"]], np.stack(seen.actions), rtol=0, atol=1e-5
    )
    result = exported_run(exported, messages, tmp_path, dict(os.environ))
    assert result["native"]  # the compiled kernel, as play uses here (this suite expects a C compiler)
    rows = result["rows"]

    ticks = sum(kind == "tick" for kind, _ in recorder.messages)
    assert len(rows) == ticks == len(recorder.intents) == len(seen.states) > 100
    np.testing.assert_allclose([r["state"] for r in rows], np.stack(seen.states), rtol=0, atol=1e-6)
    np.testing.assert_allclose([r["action"] for r in rows], np.stack(seen.actions), rtol=0, atol=1e-5)
    np.testing.assert_allclose([r["reward"] for r in rows], seen.rewards, rtol=0, atol=1e-9)

    tick_states = [json.loads(text)["botState"] for kind, text in recorder.messages if kind == "tick"]
    fired = 0
    for row, want, state in zip(rows, recorder.intents, tick_states, strict=True):
        got = row["intent"]
        for wire, field in (
            ("turnRate", "turn_rate"),
            ("gunTurnRate", "gun_turn_rate"),
            ("radarTurnRate", "radar_turn_rate"),
            ("targetSpeed", "target_speed"),
        ):
            assert got[wire] == pytest.approx(getattr(want, field), abs=1e-4), (wire, got, want)
        assert got["adjustGunForBodyTurn"] and got["adjustRadarForBodyTurn"] and got["adjustRadarForGunTurn"]
        assert not got.get("fireAssist") and not got.get("rescan")
        # The server reads firepower only while the gun is cool, and fires only with more energy than that.
        if state["gunHeat"] == 0:
            power = want.firepower or 0.0
            expected = power if power <= state["energy"] else 0.0
            assert (got.get("firepower") or 0.0) == pytest.approx(expected, abs=1e-5)
            fired += expected > 0
    assert fired > 0  # the firing path was exercised
    # The locked radar turned toward the enemy at times (not only the spin's +-45).
    assert any(abs(abs(r["intent"]["radarTurnRate"]) - 45.0) > 1e-6 for r in rows)


def exported_with(
    sizes: NetworkSizes, bias: list[float], tmp_path: Path, constant: bool = False
) -> tuple[Path, Path]:
    """A fresh checkpoint of `sizes` whose actor's mean leans by `bias` (with `constant`, is tanh(bias) on
    every state), trained with the locked radar, and its exported folder."""
    path = tmp_path / "policy.zip"
    trainer = SacTrainer(TrainerConfig(sizes=sizes, seed=11, device="cpu", replay_capacity=64))
    with torch.no_grad():
        if constant:
            trainer.actor.mu.weight.zero_()
        trainer.actor.mu.bias.copy_(torch.tensor(bias))
    save_trainer(path, trainer, extra={"radar_mode": "lock"})
    return path, export_bot(path, NAME, tmp_path / "bots").folder


def test_an_export_with_wave_and_threat_inputs_sees_and_acts_as_play_eval(tmp_path: Path) -> None:
    """The wave and threat inputs come from the official API's `bullet_states` and events in an exported bot
    as from play's own ticks: the same 44-entry states (the record of shots that reached the enemy, the
    enemy's shots in flight; the aim entry by virtual guns, described so), the same actions (and the lead
    inputs the actor computes from the state with them)."""
    sizes = NetworkSizes(wave_inputs=True, threat_inputs=True, lead_inputs=True, wave_aim="virtual")
    path, folder = exported_with(sizes, [0.2, 0.8, 0.4, 1.5], tmp_path)  # drives, turns its gun, fires
    described = json.loads((folder / DESCRIPTION_FILE).read_text())["network_sizes"]
    assert described["wave_inputs"] is True and described["threat_inputs"] is True
    assert described["lead_inputs"] is True and described["wave_aim"] == "virtual"
    policy, seen = play_eval_policy(path, sizes)
    messages, _ = record_game(policy, tmp_path)
    rows = exported_run(folder, messages, tmp_path, dict(os.environ))["rows"]
    states = np.stack(seen.states)
    assert states.shape[1] == 17 + 12 + 15 and np.count_nonzero(states[:, 17]) > 0  # waves reached the enemy
    assert np.count_nonzero(states[:, 29]) > 0  # the enemy's shots in flight
    np.testing.assert_allclose([r["state"] for r in rows], states, rtol=0, atol=1e-6)
    np.testing.assert_allclose([r["action"] for r in rows], np.stack(seen.actions), rtol=0, atol=1e-5)


def test_an_export_with_the_gun_offset_turns_its_gun_as_play_eval(tmp_path: Path) -> None:
    """A checkpoint whose gun entry is an offset from the enemy's bearing (`NetworkSizes.gun_offset`) is
    exported so: the exported bot turns its gun as play's eval does, toward the enemy, not at a fixed rate."""
    sizes = NetworkSizes(gun_offset=True)
    # A constant action: drive, turn, aim 4.5 degrees ahead of the enemy's bearing, fire.
    path, folder = exported_with(sizes, [0.2, 0.8, 0.1, 1.5], tmp_path, constant=True)
    assert json.loads((folder / DESCRIPTION_FILE).read_text())["network_sizes"]["gun_offset"] is True
    policy, _ = play_eval_policy(path, sizes)
    messages, recorder = record_game(policy, tmp_path)
    rows = exported_run(folder, messages, tmp_path, dict(os.environ))["rows"]
    got = [r["intent"]["gunTurnRate"] for r in rows]
    assert got == pytest.approx([i.gun_turn_rate for i in recorder.intents], abs=1e-4)
    # The same entry every turn (a turn entry would turn 2 degrees a turn), yet the gun follows the bearing.
    assert len(set(np.round(got, 3))) > 20


def test_a_speed_export_draws_its_speed_and_plays_the_mean_elsewhere(
    checkpoint: Path, recorded: tuple[Path, Recorder, RecordingFeatures], tmp_path: Path
) -> None:
    messages, _, seen = recorded
    folder = export_bot(checkpoint, NAME, tmp_path / "bots", actions="speed").folder
    assert json.loads((folder / DESCRIPTION_FILE).read_text())["actions"] == "speed"
    assert "target speed drawn" in json.loads((folder / f"{NAME}.json").read_text())["description"]
    rows = exported_run(folder, messages, tmp_path, dict(os.environ))["rows"]
    got, mean = np.array([r["action"] for r in rows]), np.stack(seen.actions)
    # The same ticks give the same states and GRU states: turn, gun turn and fire are the mean's.
    np.testing.assert_allclose(got[:, [0, 2, 3]], mean[:, [0, 2, 3]], rtol=0, atol=1e-5)
    assert np.mean(np.abs(got[:, 1] - mean[:, 1]) > 1e-3) > 0.5  # the speed is drawn


# --- 2. the folder on the official API in its own venv: the same games as play --eval -------------------


def test_exported_bot_plays_the_same_games_as_play_eval(checkpoint: Path, installed: Path) -> None:
    # Two rounds: the second starts only once the answers to the first one's last tick are in.
    setup = game_setup_for("1v1", number_of_rounds=2, turn_timeout=LONG_TURN_TIMEOUT)
    wins = {"exported": 0, "reference": 0}
    for seed in (1, 2):
        ids, got = arena_game(installed, setup, seed)
        assert set(ids) == {NAME, "SpinBot"}
        want = reference_game(checkpoint, setup, seed, ids)
        assert len(got) > 50
        assert_same_game(got, want)
        for key, trace in (("exported", got), ("reference", want)):
            final = {bot[0]: bot[4] for bot in trace[-1][2]}  # a dead bot has energy < 0 or is gone
            wins[key] += final.get(ids[NAME], -1.0) > final.get(ids["SpinBot"], -1.0)
    assert wins["exported"] == wins["reference"]


# --- 3. the official booter's no-script rule: <Name>.json plus <Name>.py ---------------------------------


def test_exported_bot_boots_without_a_script(checkpoint: Path, installed: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bots" / NAME
    shutil.copytree(installed, bare, ignore=shutil.ignore_patterns(VENV, f"{NAME}.sh", f"{NAME}.cmd"))
    assert sorted(p.name for p in bare.iterdir() if p.is_file()) == sorted(
        [f"{NAME}.json", f"{NAME}.py", DESCRIPTION_FILE, WEIGHTS_FILE, "requirements.txt"]
    )
    python = installed / VENV / "bin" / "python"  # a Python with requirements.txt installed
    assert launch_command(read_bot_dir(bare), str(python)) == [str(python), str(bare / f"{NAME}.py")]
    setup = game_setup_for("1v1", number_of_rounds=1, turn_timeout=LONG_TURN_TIMEOUT)
    ids, got = arena_game(bare, setup, 3, python=python)
    assert_same_game(got, reference_game(checkpoint, setup, 3, ids))


# --- 4. a missing or damaged weights file: one line at start, exit code 1 --------------------------------


def _start_bot(folder: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SERVER_URL": "ws://127.0.0.1:9"}
    return subprocess.run(
        [sys.executable, f"{NAME}.py"], cwd=folder, capture_output=True, text=True, env=env, timeout=120
    )


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        ("delete weights", "weights.npz: missing"),
        ("flip a byte", "weights.npz: damaged"),
        ("truncate", "weights.npz: damaged"),
        ("delete description", "policy.json: missing"),
        ("garble description", "policy.json: unreadable"),
    ],
)
def test_damaged_weights_end_the_bot_with_one_line(
    exported: Path, tmp_path: Path, damage: str, says: str
) -> None:
    folder = tmp_path / NAME
    shutil.copytree(exported, folder, ignore=shutil.ignore_patterns(VENV))
    weights, description = folder / WEIGHTS_FILE, folder / DESCRIPTION_FILE
    if damage == "delete weights":
        weights.unlink()
    elif damage == "flip a byte":
        data = bytearray(weights.read_bytes())
        data[len(data) // 2] ^= 0x01
        weights.write_bytes(bytes(data))
    elif damage == "truncate":
        weights.write_bytes(weights.read_bytes()[:1000])
    elif damage == "delete description":
        description.unlink()
    else:
        description.write_text("{not json")
    done = _start_bot(folder)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{NAME}: error: ") and says in lines[0], done.stderr


def test_a_description_without_actions_plays_the_mean(exported: Path, tmp_path: Path) -> None:
    data = json.loads((exported / DESCRIPTION_FILE).read_text())
    assert data["actions"] == "mean"
    del data["actions"]  # as an export from before the action modes wrote it
    (tmp_path / DESCRIPTION_FILE).write_text(json.dumps(data))
    assert read_description(tmp_path).actions == "mean"
    (tmp_path / DESCRIPTION_FILE).write_text(json.dumps({**data, "actions": "wild"}))
    with pytest.raises(ExportLoadError, match="actions must be one of mean, sampled, speed"):
        read_description(tmp_path)


# --- the command: bad input is one line, nothing on disk is lost -----------------------------------------


def test_bad_input_is_one_clear_error(checkpoint: Path, exported: Path, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such file"):
        export_bot(tmp_path / "missing.zip", NAME, tmp_path)
    corrupt = tmp_path / "corrupt.zip"
    corrupt.write_bytes(checkpoint.read_bytes()[:5000])
    with pytest.raises(UserError, match="corrupt.zip"):
        export_bot(corrupt, NAME, tmp_path)
    for bad in ("", "1Bot", "my bot", "../Up", "A" * 31):
        with pytest.raises(UserError, match="invalid bot name") as info:
            export_bot(checkpoint, bad, tmp_path)
        assert info.value.exit_code == 2
    with pytest.raises(UserError, match="--radar-mode"):
        export_bot(checkpoint, NAME, tmp_path, radar_mode="sideways")
    with pytest.raises(UserError, match="--actions"):
        export_bot(checkpoint, NAME, tmp_path, actions="greedy")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corrupt.zip"]  # nothing was written

    # An existing folder: refused without --force, untouched.
    before = {p: p.read_bytes() for p in exported.rglob("*") if p.is_file() and VENV not in p.parts}
    with pytest.raises(UserError, match="--force"):
        export_bot(checkpoint, NAME, exported.parent)
    assert {p: p.read_bytes() for p in before} == before

    cli = subprocess.run(
        [sys.executable, "-m", "sacbot", "export-bot", "--checkpoint", str(corrupt), "--name", NAME]
        + ["--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cli.returncode == 1 and "Traceback" not in cli.stderr
    assert len(cli.stderr.strip().splitlines()) == 1 and cli.stderr.startswith("sacbot: error: ")


def test_force_replaces_the_folder_and_keeps_its_venv(checkpoint: Path, tmp_path: Path) -> None:
    first = export_bot(checkpoint, NAME, tmp_path).folder
    (first / VENV).mkdir()
    (first / VENV / "marker").write_text("installed")
    (first / "stray.txt").write_text("old")
    second = export_bot(checkpoint, NAME, tmp_path, force=True, radar_mode="spin")
    assert second.folder == first and second.radar_mode == "spin" and second.radar_source == "--radar-mode"
    assert (first / VENV / "marker").read_text() == "installed" and not (first / "stray.txt").exists()
    assert json.loads((first / DESCRIPTION_FILE).read_text())["radar_mode"] == "spin"
    assert sorted(p.name for p in tmp_path.iterdir()) == [NAME]  # no temporary folder left behind
    identity = json.loads((first / f"{NAME}.json").read_text())
    assert identity["name"] == NAME and identity["platform"] == "Python" and "base" not in identity
    assert os.access(first / f"{NAME}.sh", os.X_OK)
