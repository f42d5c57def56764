"""Whole seeded games between scripted policies must match the stored golden summary turn for turn."""

from __future__ import annotations

import json

from .engine_support import GAMES, GOLDEN, play


def test_games_match_the_golden_summary() -> None:
    golden = json.loads(GOLDEN.read_text())
    assert set(golden) == {name for name, *_ in GAMES}
    for name, game_type, rounds, seed, policies, teams in GAMES:
        summary = json.loads(json.dumps(play(game_type, rounds, seed, policies, teams)))
        assert summary == golden[name], f"{name} differs from {GOLDEN.name}"
