"""Data shared by the report tests (the fixtures are in conftest.py): the scripted eval results of the
campaign run that the `build_run` fixture writes."""

from __future__ import annotations

EVAL_OPPONENTS = ("SpinBot", "Walls")
# (wins, score share) per eval chunk and opponent, out of EVAL_ROUNDS rounds.
EVAL_RESULTS: dict[int, dict[str, tuple[int, float]]] = {
    1: {"SpinBot": (8, 0.41), "Walls": (4, 0.30)},
    2: {"SpinBot": (15, 0.66), "Walls": (9, 0.52)},
    3: {"SpinBot": (19, 0.81), "Walls": (15, 0.66)},
}
EVAL_ROUNDS = 20
