"""`sacbot bench engine`: engine turns per second between scripted policies, in-process.

A 1v1 (tracker vs spinner) and a 10-bot melee (a mix of the scripted policies), each run for a fixed number of
turns over as many rounds/games as needed; the median of 5 runs. The timing covers the policies and
`Game.turn`; no protocol views are built (that is what fast in-process training does).

The main figures are wall-clock turns per second, as the targets are (20,000 1v1, 2,000 melee on a 2-core
machine). The machines are shared, so wall-clock rates also measure the other processes; the `*_cpu` keys give
turns per CPU-second of this process (`time.process_time`): what one free core sustains.
"""

from __future__ import annotations

import statistics
import time

from sacbot.engine.game import Game
from sacbot.engine.scripted import POLICIES, Policy
from sacbot.engine.setup import game_setup_for
from sacbot.engine.state import Participant


def run_turns(game_type: str, policies: list[Policy], turns: int, seed: int) -> tuple[float, float]:
    """Plays `turns` turns (starting new rounds and games as needed); returns turns per CPU-second and per
    wall-clock second."""
    setup = game_setup_for(game_type, number_of_rounds=1000)
    participants = [Participant(i + 1, f"Bot{i + 1}") for i in range(len(policies))]
    game = Game(setup, participants, seed=seed)
    played = 0
    cpu_start = time.process_time()
    start = time.perf_counter()
    while played < turns:
        if game.game_over:
            seed += 1
            game = Game(setup, participants, seed=seed)
        if not game._running:
            game.start_round()
            game.turn({})
            played += 1
            continue
        intents = {bot_id: policies[bot_id - 1](game, bot_id) for bot_id in game.alive_ids}
        game.turn(intents)
        played += 1
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    return turns / max(cpu, 1e-9), turns / wall


def bench_engine(runs: int = 5, turns_1v1: int = 20_000, turns_melee: int = 4_000) -> dict[str, float]:
    one_v_one = [POLICIES["tracker"], POLICIES["spinner"]]
    names = ["tracker", "spinner", "rammer", "wall_runner"]
    melee = [POLICIES[names[i % len(names)]] for i in range(10)]
    r1 = [run_turns("1v1", one_v_one, turns_1v1, seed=run) for run in range(runs)]
    r10 = [run_turns("melee", melee, turns_melee, seed=run) for run in range(runs)]
    return {
        "turns_per_s_1v1": round(statistics.median(r[1] for r in r1), 1),
        "turns_per_s_melee10": round(statistics.median(r[1] for r in r10), 1),
        "turns_per_s_1v1_cpu": round(statistics.median(r[0] for r in r1), 1),
        "turns_per_s_melee10_cpu": round(statistics.median(r[0] for r in r10), 1),
    }
