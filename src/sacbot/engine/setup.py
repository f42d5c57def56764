"""Game setups: the built-in presets (`GameTypePreset.kt`) and the checks the server makes on a StartGame."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from sacbot.errors import UserError
from sacbot.protocol import GameSetup

_READY_TIMEOUT = 10_000_000  # µs

# name -> (width, height, min, max, rounds, locked: width, height, min, max, rounds, cooling, inactivity)
_PRESETS: dict[str, dict[str, Any]] = {
    "custom": dict(
        arena_width=800, arena_height=600, min_number_of_participants=2, max_number_of_participants=None,
        number_of_rounds=10, locked=(False, False, False, False, False, False, False),
    ),
    "classic": dict(
        arena_width=800, arena_height=600, min_number_of_participants=2, max_number_of_participants=None,
        number_of_rounds=10, locked=(True, True, True, True, True, True, True),
    ),
    "melee": dict(
        arena_width=1000, arena_height=1000, min_number_of_participants=10, max_number_of_participants=None,
        number_of_rounds=10, locked=(True, True, True, False, False, False, False),
    ),
    "1v1": dict(
        arena_width=800, arena_height=600, min_number_of_participants=2, max_number_of_participants=2,
        number_of_rounds=10, locked=(True, True, True, True, False, False, False),
    ),
    "twinduel": dict(
        arena_width=800, arena_height=800, min_number_of_participants=4, max_number_of_participants=4,
        number_of_rounds=75, locked=(True, True, True, True, False, False, False),
    ),
}  # fmt: skip

PRESETS: tuple[str, ...] = tuple(_PRESETS)
_FIELDS = {f.name for f in fields(GameSetup)}


def game_setup_for(game_type: str, **overrides: Any) -> GameSetup:
    """The preset for `game_type` with snake_case GameSetup fields overridden (locks are not enforced)."""
    preset = _PRESETS.get(game_type)
    if preset is None:
        raise UserError(f"unknown game type {game_type!r}; choose one of {', '.join(PRESETS)}", 2)
    unknown = sorted(set(overrides) - _FIELDS)
    if unknown:
        raise UserError(f"unknown game setup field(s): {', '.join(unknown)}", 2)
    lw, lh, lmin, lmax, lrounds, lcool, linact = preset["locked"]
    values: dict[str, Any] = dict(
        game_type=game_type,
        arena_width=preset["arena_width"],
        is_arena_width_locked=lw,
        arena_height=preset["arena_height"],
        is_arena_height_locked=lh,
        min_number_of_participants=preset["min_number_of_participants"],
        is_min_number_of_participants_locked=lmin,
        max_number_of_participants=preset["max_number_of_participants"],
        is_max_number_of_participants_locked=lmax,
        number_of_rounds=preset["number_of_rounds"],
        is_number_of_rounds_locked=lrounds,
        gun_cooling_rate=0.1,
        is_gun_cooling_rate_locked=lcool,
        max_inactivity_turns=450,
        is_max_inactivity_turns_locked=linact,
        turn_timeout=30_000,
        is_turn_timeout_locked=False,
        ready_timeout=_READY_TIMEOUT,
        is_ready_timeout_locked=False,
        default_turns_per_second=30,
    )
    values.update(overrides)
    return GameSetup(**values)


def validate_setup(setup: Any, participant_count: int) -> None:
    """The server's StartGame checks plus the placement grid: raises UserError naming the problem."""
    if setup.number_of_rounds < 1:
        raise UserError(f"numberOfRounds must be >= 1 (got {setup.number_of_rounds})", 2)
    if setup.arena_width <= 0 or setup.arena_height <= 0:
        raise UserError(f"arena size must be positive (got {setup.arena_width}x{setup.arena_height})", 2)
    if setup.min_number_of_participants < 1:
        raise UserError("minNumberOfParticipants must be >= 1", 2)
    if not setup.gun_cooling_rate > 0:
        raise UserError(f"gunCoolingRate must be > 0 (got {setup.gun_cooling_rate})", 2)
    if setup.max_inactivity_turns < 0:
        raise UserError("maxInactivityTurns must be >= 0", 2)
    if participant_count < setup.min_number_of_participants:
        raise UserError(
            f"{setup.game_type} needs at least {setup.min_number_of_participants} participants "
            f"(got {participant_count})",
            2,
        )
    maximum = setup.max_number_of_participants
    if maximum is not None and participant_count > maximum:
        raise UserError(
            f"{setup.game_type} allows at most {maximum} participants (got {participant_count})", 2
        )
    cells = (setup.arena_width // 50) * (setup.arena_height // 50)
    if cells < participant_count:
        raise UserError(
            f"arena {setup.arena_width}x{setup.arena_height} is too small to place {participant_count} bots",
            2,
        )


def assign_bot_ids(session_ids: Sequence[str]) -> dict[str, int]:
    """Bot ids as the server gives them: participants sorted by session id, numbered 1..N."""
    return {session_id: index + 1 for index, session_id in enumerate(sorted(session_ids))}
