"""The gating table (pure rule) and the slot shell: layout, load order, promote/offer_best on real files."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sacbot.checkpoint import (
    CheckpointMeta,
    best_path,
    decide,
    latest_path,
    list_slots,
    load_checkpoint,
    load_for_game,
    load_order,
    offer_best,
    opponent_best_path,
    promote,
    rank,
    read_meta,
    save_checkpoint,
    slot_path,
)
from sacbot.errors import UserError

SCORED = CheckpointMeta(score=5.0, score_kind="eval_return")


@pytest.mark.parametrize(
    ("case", "stored", "exists", "score", "replace", "reason"),
    [
        ("better", SCORED, True, 6.0, True, "6 > stored 5"),
        ("tie", SCORED, True, 5.0, False, "ties the stored 5; the incumbent stays"),
        ("worse", SCORED, True, 4.0, False, "4 < stored 5"),
        ("older layout", None, True, -1e9, True, "no meta.json (older layout ranks -inf)"),
        ("unscored", CheckpointMeta(), True, -1e9, True, "no score"),
        (
            "other kind",
            CheckpointMeta(score=1e9, score_kind="win_rate"),
            True,
            -1.0,
            True,
            "measures 'win_rate'",
        ),
        ("no stored best", None, False, -1e9, True, "no stored best"),
    ],
)
def test_gating_table(
    case: str, stored: CheckpointMeta | None, exists: bool, score: float, replace: bool, reason: str
) -> None:
    decision = decide(score, "eval_return", stored, exists)
    assert decision.replace is replace, case
    assert reason in decision.reason, case


def test_rank_and_bad_candidate_scores() -> None:
    assert rank(SCORED, "eval_return") == 5.0
    assert rank(SCORED, "win_rate") == -math.inf and rank(None, "eval_return") == -math.inf
    with pytest.raises(ValueError, match="finite"):
        decide(float("nan"), "eval_return", SCORED, True)
    with pytest.raises(ValueError, match="score_kind"):
        decide(1.0, "", SCORED, True)


def test_layout_and_load_order(tmp_path: Path) -> None:
    assert latest_path(tmp_path) == tmp_path / "latest.zip"
    assert best_path(tmp_path) == slot_path(tmp_path, "best") == tmp_path / "best.zip"
    assert opponent_best_path(tmp_path, "SpinBot") == tmp_path / "opponents" / "SpinBot.zip"
    assert load_order(tmp_path, "SpinBot") == [tmp_path / "opponents" / "SpinBot.zip", tmp_path / "best.zip"]
    assert load_order(tmp_path, None) == [tmp_path / "best.zip"]


@pytest.mark.parametrize(
    "name", ["../best", "a/b", "..", ".hidden", "best", "LATEST", "", "x" * 65, "nul", "a."]
)
def test_opponent_names_cannot_escape_or_collide(tmp_path: Path, name: str) -> None:
    with pytest.raises(UserError, match="invalid opponent name"):
        opponent_best_path(tmp_path, name)


def test_load_for_game_prefers_the_opponent_slot_then_best_then_fresh(
    tmp_path: Path,
    make_arrays: Callable[..., dict[str, np.ndarray]],
    make_meta: Callable[..., CheckpointMeta],
    specs_of: Callable[..., dict[str, Any]],
) -> None:
    specs = specs_of(make_arrays())
    warnings: list[str] = []
    assert load_for_game(tmp_path, "SpinBot", specs, warn=warnings.append) is None  # fresh init
    save_checkpoint(best_path(tmp_path), make_arrays(seed=1), make_meta())
    loaded = load_for_game(tmp_path, "SpinBot", specs, warn=warnings.append)
    assert loaded is not None and loaded.slot == "best"
    save_checkpoint(opponent_best_path(tmp_path, "SpinBot"), make_arrays(seed=2), make_meta())
    loaded = load_for_game(tmp_path, "SpinBot", specs, warn=warnings.append)
    assert loaded is not None and loaded.slot == "opponents/SpinBot"
    assert np.array_equal(loaded.arrays["log_alpha"], make_arrays(seed=2)["log_alpha"])
    other = load_for_game(tmp_path, "Walls", specs, warn=warnings.append)
    assert other is not None and other.slot == "best"
    # A damaged opponent slot is skipped with a warning, and the global best is used.
    opponent_best_path(tmp_path, "SpinBot").write_bytes(b"garbage")
    loaded = load_for_game(tmp_path, "SpinBot", specs, warn=warnings.append)
    assert loaded is not None and loaded.slot == "best"
    assert warnings and "skipping opponents/SpinBot" in warnings[-1]
    assert [name for name, _ in list_slots(tmp_path)] == ["best", "opponents/SpinBot"]


def test_offer_best_stores_only_strict_improvements_and_the_score_survives(
    tmp_path: Path,
    make_arrays: Callable[..., dict[str, np.ndarray]],
    make_meta: Callable[..., CheckpointMeta],
) -> None:
    lines: list[str] = []
    slot = best_path(tmp_path)
    assert promote(slot, make_arrays(seed=1), make_meta(), 1.0, "eval_return", warn=lines.append).promoted
    assert lines == [f"stored new best: score 1 (eval_return) in {slot}"]
    assert not offer_best(slot, make_arrays(seed=2), make_meta(), 1.0, "eval_return")  # tie
    assert not offer_best(slot, make_arrays(seed=3), make_meta(), 0.5, "eval_return")  # worse
    assert offer_best(slot, make_arrays(seed=4), make_meta(), 2.0, "eval_return")  # better
    stored, meta = load_checkpoint(slot)
    assert meta is not None and meta.score == 2.0 and meta.score_kind == "eval_return"
    assert np.array_equal(stored["actor.fc.weight"], make_arrays(seed=4)["actor.fc.weight"])
    # Another kind of score ranks the stored one -inf for that kind.
    assert offer_best(slot, make_arrays(seed=5), make_meta(), -3.0, "win_rate")
    # Each opponent slot is gated on its own: a stored Walls best does not block SpinBot, nor touch best.zip.
    walls = opponent_best_path(tmp_path, "Walls")
    assert offer_best(walls, make_arrays(), make_meta(opponent="Walls"), 100.0, "win_rate")
    assert offer_best(opponent_best_path(tmp_path, "SpinBot"), make_arrays(), make_meta(), 1.0, "win_rate")
    final = read_meta(slot)
    assert final is not None and (final.score, final.score_kind) == (-3.0, "win_rate")


def test_force_overrides_the_gate_with_a_warning(
    tmp_path: Path,
    make_arrays: Callable[..., dict[str, np.ndarray]],
    make_meta: Callable[..., CheckpointMeta],
) -> None:
    lines: list[str] = []
    slot = best_path(tmp_path)
    promote(slot, make_arrays(), make_meta(), 5.0, "eval_return", warn=lines.append)
    result = promote(
        slot, make_arrays(seed=9), make_meta(), 1.0, "eval_return", force=True, warn=lines.append
    )
    assert result.promoted and result.forced
    assert "--force overrides the gate for best: 1 < stored 5" in lines[1]
    assert read_meta(slot).score == 1.0  # type: ignore[union-attr]


def test_an_older_layout_best_is_replaced_and_an_unreadable_one_is_kept_aside(
    tmp_path: Path,
    make_arrays: Callable[..., dict[str, np.ndarray]],
    make_meta: Callable[..., CheckpointMeta],
) -> None:
    slot = best_path(tmp_path)
    save_checkpoint(slot, make_arrays(), None)
    assert offer_best(slot, make_arrays(seed=1), make_meta(), -100.0, "eval_return")
    slot.write_bytes(b"this is not a zip")
    lines: list[str] = []
    result = promote(slot, make_arrays(seed=2), make_meta(), -100.0, "eval_return", warn=lines.append)
    assert result.promoted and "unreadable" in result.reason
    kept = [p for p in tmp_path.iterdir() if p.name.startswith("best.zip.unreadable-")]
    assert len(kept) == 1 and kept[0].read_bytes() == b"this is not a zip"
    assert read_meta(slot).score == -100.0  # type: ignore[union-attr]
