"""A Tank Royale-compatible arena: the server (`server`, around the sans-I/O `core`), a controller client
(`controller`), a booter for bot directories (`booter`) and one-call battles (`battle`).

    from sacbot.arena.server import EmbeddedArena
    from sacbot.arena.controller import Controller, play_game
    from sacbot.arena.booter import Booter
    from sacbot.arena.battle import run_battle
"""
