"""Win table of built-in opponents in seeded in-process engine games (docs/opponents.md).

    python scripts/opponent_table.py Orbiter,StopGo,Gunner,Surfer,Rammer [ENEMIES] [--rounds 50]

ENEMIES defaults to the ten classics. Each pairing plays 5 games of rounds/5 rounds (the sides swap every
other game, engine seeds 0..4), so opponents that learn across rounds do. A cell: rounds won / rounds (score
share).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from sacbot.engine import game_setup_for
from sacbot.opponents import CLASSIC_NAMES, make_opponent
from sacbot.opponents.local import LocalBattle

GAMES = 5


def duel(name: str, enemy: str, rounds: int) -> tuple[int, float]:
    """Rounds `name` won against `enemy` and its score share over them."""
    return duel_with(lambda game: make_opponent(name, seed=game), enemy, rounds)


def duel_with(make_bot: Callable[[int], Any], enemy: str, rounds: int) -> tuple[int, float]:
    """Rounds the bot `make_bot(game)` makes won against `enemy` and its score share over them."""
    won, own, theirs = 0, 0.0, 0.0
    for game in range(GAMES):
        me, them = (1, 2) if game % 2 == 0 else (2, 1)
        policies = {me: make_bot(game), them: make_opponent(enemy, seed=game + 50)}
        battle = LocalBattle(game_setup_for("1v1", number_of_rounds=rounds // GAMES), policies, seed=game)
        while not battle.game.game_over and battle.play_round(max_turns=5000):
            won += list(battle.game.winner_ids) == [me]
            for row in battle.game.round_results():
                if row.id == me:
                    own += row.total_score
                else:
                    theirs += row.total_score
    return won, own / max(own + theirs, 1e-9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bots")
    parser.add_argument("enemies", nargs="?", default=",".join(CLASSIC_NAMES))
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    enemies = args.enemies.split(",")
    print("| bot | " + " | ".join(enemies) + " |")
    print("|---" * (len(enemies) + 1) + "|")
    for name in args.bots.split(","):
        cells = [f"{w}/{args.rounds} ({s:.2f})" for w, s in (duel(name, e, args.rounds) for e in enemies)]
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
