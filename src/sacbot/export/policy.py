"""The exported bot's policy: the project's features and numpy actor, fed with the official Bot API's ticks.

Shipped unchanged in every exported bot folder (`lib/sacbot/export/policy.py`), beside the project modules it
imports (features, inference and their own imports, also unchanged); it imports neither torch nor pydantic nor
the Bot API. Per tick it does what `sacbot play --eval` does (`RealtimePolicy` with `AgentFeatures`):
`features.stored_observation` (the state, and the wave and threat inputs the actor reads), one actor step
with the GRU hidden state, which every round starts from zero, then `features.action_to_intent` with the
radar mode the export recorded. The step acts as the export's
`ActionMode` says: tanh of the mean (deterministic, the default), or with the target speed or every entry
drawn from the policy.

The official API hands a bot its own event classes (`TickEvent.events`, without the wire `type` field, and
with a few reshaped: DeathEvent, HitByBulletEvent, HitWallEvent); `wire_view` presents them the way the
features read wire events (and its bullets in flight as `bullet_states`). The folder's files are described in
`policy.json` (`FORMAT`, `VERSION`): the radar mode, the action mode, the network sizes and the SHA-256 of
`weights.npz`, the actor's arrays.
`load_policy` checks both before a bot connects and raises `ExportLoadError` (one line) when either is missing
or damaged.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from sacbot.agent.features import ACTION_DIM, RadarMode, RoundMemory, action_to_intent, stored_observation
from sacbot.agent.inference import ACTION_MODES, ActionMode, FastActor, as_action_mode, drawn_entries
from sacbot.agent.sizes import NetworkSizes
from sacbot.protocol import BotIntent

FORMAT = "sacbot-export"
VERSION = 1
DESCRIPTION_FILE = "policy.json"
WEIGHTS_FILE = "weights.npz"
ACTOR_PREFIX = "actor."


class ExportLoadError(Exception):
    """An exported folder whose description or weights are missing or damaged (the message is one line)."""


@dataclass(frozen=True)
class PolicyDescription:
    """What `policy.json` says: how to play the weights beside it."""

    radar_mode: RadarMode
    sizes: NetworkSizes
    weights_sha256: str
    source: Mapping[str, Any]
    actions: ActionMode = "mean"

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "radar_mode": self.radar_mode,
            "actions": self.actions,
            "network_sizes": self.sizes.as_dict(),
            "weights": WEIGHTS_FILE,
            "weights_sha256": self.weights_sha256,
            "source": dict(self.source),
        }


def sizes_from_dict(data: Mapping[str, Any]) -> NetworkSizes:
    """NetworkSizes from a JSON object (unknown keys ignored); ValueError when a value does not fit."""
    known = {f.name for f in fields(NetworkSizes)}
    try:
        return NetworkSizes(**{k: v for k, v in data.items() if k in known})
    except (TypeError, ValueError) as exc:
        raise ValueError(str(exc)) from None


def read_description(folder: Path) -> PolicyDescription:
    path = folder / DESCRIPTION_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ExportLoadError(f"{path}: missing; export the bot again with `sacbot export-bot`") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ExportLoadError(f"{path}: unreadable ({exc}); export the bot again") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ExportLoadError(f"{path}: not a {FORMAT} description; export the bot again")
    if data.get("version") != VERSION:
        raise ExportLoadError(f"{path}: version {data.get('version')!r}, this bot reads {VERSION}")
    radar = data.get("radar_mode")
    actions = data.get("actions", "mean")  # an export from before the action modes plays the mean
    sizes = data.get("network_sizes")
    digest = data.get("weights_sha256")
    source = data.get("source", {})
    if radar not in ("spin", "lock"):
        raise ExportLoadError(f"{path}: radar_mode must be 'spin' or 'lock', got {radar!r}")
    mode = as_action_mode(actions)
    if mode is None:
        raise ExportLoadError(f"{path}: actions must be one of {', '.join(ACTION_MODES)}, got {actions!r}")
    if not isinstance(sizes, dict) or not isinstance(digest, str) or not isinstance(source, dict):
        raise ExportLoadError(f"{path}: network_sizes, weights_sha256 or source missing or malformed")
    try:
        network_sizes = sizes_from_dict(sizes)
    except ValueError as exc:
        raise ExportLoadError(f"{path}: bad network_sizes ({exc})") from None
    return PolicyDescription("lock" if radar == "lock" else "spin", network_sizes, digest, source, mode)


def read_weights(folder: Path, description: PolicyDescription) -> dict[str, np.ndarray]:
    """The actor's arrays from `weights.npz`, after its SHA-256 matched (never unpickles)."""
    path = folder / WEIGHTS_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ExportLoadError(f"{path}: missing; export the bot again with `sacbot export-bot`") from None
    except OSError as exc:
        raise ExportLoadError(f"{path}: unreadable ({exc.strerror or exc})") from None
    if hashlib.sha256(data).hexdigest() != description.weights_sha256:
        raise ExportLoadError(
            f"{path}: damaged (its SHA-256 differs from {DESCRIPTION_FILE}'s); export again"
        )
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            return {name: np.asarray(archive[name]) for name in archive.files}
    except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise ExportLoadError(f"{path}: not a readable weights archive ({exc})") from None


def load_policy(folder: Path) -> ExportedPolicy:
    """The folder's policy, checked: its description, the weights' checksum, the arrays against the sizes."""
    description = read_description(folder)
    arrays = read_weights(folder, description)
    try:
        actor = FastActor(arrays, description.sizes)
    except KeyError as exc:
        raise ExportLoadError(f"{folder / WEIGHTS_FILE}: array {exc} is missing") from None
    except ValueError as exc:
        raise ExportLoadError(f"{folder / WEIGHTS_FILE}: {exc}") from None
    return ExportedPolicy(actor, description.radar_mode, description)


# --- the official API's ticks, seen as the features read wire ticks ---------------------------------------


class _WireEvent:
    """An official-API event with the wire `type` of the event it was made from; other attributes are the
    event's own (the API keeps the wire names for the fields the features read)."""

    __slots__ = ("type", "source")

    def __init__(self, wire_type: str, source: Any) -> None:
        self.type = wire_type
        self.source = source

    def __getattr__(self, name: str) -> Any:
        return getattr(self.source, name)


class _OwnEvent:
    """An event the API reshaped for the receiving bot (DeathEvent, HitWallEvent): its victim is us."""

    __slots__ = ("type", "victim_id", "source")

    def __init__(self, wire_type: str, victim_id: int | None, source: Any) -> None:
        self.type = wire_type
        self.victim_id = victim_id
        self.source = source

    def __getattr__(self, name: str) -> Any:
        return getattr(self.source, name)


# API class name -> the wire event it came from (the rest keep their name). HitByBulletEvent stays: the
# features read it under the official APIs' name.
_RENAMED = {"HitBotEvent": "BotHitBotEvent"}
_OWN = {"DeathEvent": "BotDeathEvent", "HitWallEvent": "BotHitWallEvent"}


@dataclass(frozen=True, slots=True)
class WireTick:
    """A tick as `sacbot.agent.features` reads it: our bot state, the turn, the wire-typed events and our
    bullets in flight."""

    turn_number: int
    bot_state: Any
    events: Sequence[Any]
    bullet_states: Sequence[Any] = ()


def wire_view(tick: Any, my_id: int | None) -> WireTick:
    """An official-API TickEvent (`turn_number`, `bot_state`, `events`) as the features read a wire tick."""
    events: list[Any] = []
    for event in tick.events or ():
        kind = type(event).__name__
        own = _OWN.get(kind)
        if own is not None:
            events.append(_OwnEvent(own, my_id, event))
        else:
            events.append(_WireEvent(_RENAMED.get(kind, kind), event))
    bullets = [b for b in tick.bullet_states or () if b is not None]
    return WireTick(int(tick.turn_number), tick.bot_state, events, bullets)


class ExportedPolicy:
    """One bot's policy: the per-round feature memory, the GRU hidden state and the frozen actor."""

    def __init__(
        self,
        actor: FastActor,
        radar_mode: RadarMode,
        description: PolicyDescription | None = None,
    ) -> None:
        self.actor = actor
        self.radar_mode: RadarMode = radar_mode
        self.actions: ActionMode = description.actions if description is not None else "mean"
        self.deterministic, self.drawn = drawn_entries(self.actions, ACTION_DIM)
        self.description = description
        self.memory = RoundMemory.for_sizes(actor.sizes)
        self.hidden = actor.initial_hidden()
        self.state: np.ndarray | None = None  # the last observation and action (diagnostics, tests)
        self.action: np.ndarray | None = None

    def start_game(self, arena_width: float, arena_height: float, my_id: int) -> None:
        self.memory.start_game(float(arena_width), float(arena_height), int(my_id))  # a new wave record
        self.start_round()

    def start_round(self) -> None:
        self.memory.new_round()
        self.hidden = self.actor.initial_hidden()

    def act(self, tick: Any) -> BotIntent:
        """The complete intent for a wire-shaped tick (`wire_view` of an official one)."""
        sizes = self.actor.sizes
        state = stored_observation(tick, self.memory, sizes.wave_inputs, sizes.threat_inputs, False)
        action, self.hidden = self.actor.step(state, self.hidden, self.deterministic, self.drawn)
        self.state, self.action = state, action
        return action_to_intent(action, self.radar_mode, self.memory)
