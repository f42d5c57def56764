"""The per-opponent score share that gates the opponent's best slot."""

from __future__ import annotations

import pytest

from sacbot.runtime.scoring import RoundTally, ShareWindow, score_share


def test_enemy_points_follow_the_scoring_rules() -> None:
    assert RoundTally().enemy_points() == 0.0
    hurt = RoundTally(damage_taken=30.0, rammed_turns=5)
    assert hurt.enemy_points() == pytest.approx(30.0 + 6.0)
    dead = RoundTally(damage_taken=100.0, died=True)
    # bullet damage + 20 % kill bonus + 50 survival + 10 last-survivor bonus
    assert dead.enemy_points() == pytest.approx(100.0 + 20.0 + 60.0)


def test_share_is_own_over_total_and_even_when_nobody_scored() -> None:
    assert score_share([]) == 0.5
    assert score_share([(0.0, 0.0)]) == 0.5
    assert score_share([(30.0, 10.0), (10.0, 30.0)]) == pytest.approx(0.5)
    assert score_share([(90.0, 10.0)]) == pytest.approx(0.9)


def test_window_keeps_the_last_rounds_only() -> None:
    window = ShareWindow(3, [(0.0, 100.0)] * 5)
    assert len(window) == 3 and window.full
    assert window.share() == 0.0
    for _ in range(3):
        window.add(100.0, 0.0)
    assert window.share() == 1.0
    assert window.score_kind() == "play_score_share_last_3"
    assert ShareWindow(3, kind="fast_score_share").score_kind() == "fast_score_share_last_3"
    assert not ShareWindow(10).full
