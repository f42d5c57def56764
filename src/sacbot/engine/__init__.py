"""The Tank Royale rules as a pure, deterministic library: no I/O, no asyncio, no threads, no clock.

The same seed, participants and intents give the same game, turn for turn. One module per rule area, like
the server: `setup` (presets, checks), `placement`, `intents` (merge rules), `state` (bots, bullets),
`movement`, `guns`, `collisions`, `scans`, `bullets`, `scoring`, `events` (event records), `views` (protocol
objects, built lazily), `game` (the turn pipeline) and `scripted` (simple policies).

Quick start
-----------
::

    from sacbot.engine import Game, Intent, Participant, game_setup_for

    setup = game_setup_for("1v1", number_of_rounds=3)             # a sacbot.protocol.GameSetup
    game = Game(setup, [Participant(1, "SacBot"), Participant(2, "SpinBot")], seed=7)
    while not game.game_over:
        game.start_round()                                        # -> round number (1-based)
        game.turn({})                                             # turn 1: nobody acts (see below)
        while not game.round_over:
            intents = {i: policies[i](game.tick_for_bot(i)) for i in game.alive_ids}  # BotIntent or Intent
            game.turn(intents)
    results = game.results_for_observer()                         # accumulated ResultsForObserver rows

Setups
------
- `game_setup_for(game_type, **overrides) -> GameSetup`: the presets of `GameTypePreset.kt` ("classic",
  "1v1", "melee", "twinduel", "custom"; names in `PRESETS`); overrides are snake_case GameSetup fields
  (`arena_width=1000, number_of_rounds=1, ...`). An unknown game type or field raises `UserError` (exit 2).
  Note: melee needs >= 10 participants, twinduel exactly 4, 1v1 exactly 2 (override the min/max to relax).
- `Game(setup, participants, seed=0, use_initial_positions=False)` checks the setup like the server (rounds
  >= 1, arena > 0, participant count within min/max, a 50x50 grid cell per bot) and raises `UserError`.
  `setup` may be any object with the GameSetup attributes.

Participants and bot ids
------------------------
- `Participant(id, name, version="1.0", session_id="", team_id=None, is_droid=False, initial_position=None,
  team_name=None, team_version=None)`; a plain `(id, name)` tuple works too. The caller gives the ids
  (unique, >= 1); the engine keeps them sorted.
- `assign_bot_ids(session_ids) -> dict[str, int]`: ids as the server gives them (sorted by session id, 1..N).
  The arena uses it; in-process users number their bots 1..N.
- `team_id` groups teammates (twinduel): they are not enemies for `enemy_count` and round end, and observer
  results sum them into one team row; bullets still hit teammates and radars still see them (as the server).
- Droids (`is_droid=True`) start with 120 energy and never scan.

Rounds and turns
----------------
- `game.start_round() -> int` starts the next round: bots placed, bullet ids restart at 1, intents, bullets,
  round scores and the inactivity counter cleared. `RuntimeError` if a round is running or the game is over.
  `game.round_number`, `game.turn_number`: 1-based; turn_number is 0 until the round's first `turn()`.
- Placement (BotInitializer.kt): a distinct random 50x50 grid cell per bot, a uniform point 18 inside the
  cell, one uniform direction for body, gun and radar; participants' `initial_position` (x, y, direction,
  each may be None) overrides it with `use_initial_positions=True`. Round r's placement is drawn when round
  r-1 ends (round 1's in `__init__`), so `game.start_position(bot_id) -> (x, y, direction)` is known before
  the round starts (while a round runs: that round's start). `game.game_started_for_bot(bot_id)` builds
  GameStartedEventForBot with myId, teammateIds, gameSetup and round 1's startX/startY/startDirection.
- `game.turn(intents: Mapping[int, BotIntent | Intent]) -> None` runs one turn in the server's order: guns,
  speed, move along the old heading, turn, bot-wall, bot-bot, constrain, scans, bullets advance,
  bullet-wall, bullet-bullet and bullet-bot, inactivity, disabled bots, deaths, round end. `intents` holds
  only the bots whose intent arrived for this turn.
  * Turn 1 of a round has no intents: whatever the first `turn()` after `start_round()` gets is dropped (the
    server clears intents in `nextRound`), so nobody moves, fires or scans and guns cool 3.0 -> 2.9. With
    the default cooling the first shot is possible in turn 31.
  * A bot in `intents` gets that intent as its new persistent intent, omitted (None) fields reset to the
    defaults: numbers 0.0, `adjust_*`/`rescan` False, `fire_assist` True (the server's "first intent after a
    tick" rule). Colors and debug_graphics are sticky: None keeps the old value, "" clears a color.
  * A bot absent from `intents` repeats its persistent intent (it keeps moving, turning and firing). A bot
    that never sent one does nothing.
  * Several intents from one bot within one turn: fold them with `merge_intents([first, second, ...])`
    (the first resets omitted fields, later ones change only their non-None fields) and pass the result.
  * Intents for unknown or dead bots are ignored. `RuntimeError` when no round is running.
- `Intent` is the engine's slots class with the snake_case fields of `BotIntent` (turn_rate, gun_turn_rate,
  radar_turn_rate, target_speed, firepower, adjust_gun_for_body_turn, adjust_radar_for_body_turn,
  adjust_radar_for_gun_turn, rescan, fire_assist, the seven colors, std_out, std_err, team_messages,
  debug_graphics); its constructor defaults are the reset defaults. Any object with these attributes works.
- `game.round_over` turns True in the turn where at most one bot or team is left alive, or no bullet flies and
  every alive bot (or team) is disabled (a draw). Then WonRoundEvent goes to the round's rank-1 bot(s)
  (`game.winner_ids`, sorted), the round scores are added to the accumulated ones and the next placement is
  drawn. `game.game_over` is True once a round ends with `round_number >= number_of_rounds`. There is no
  turn limit: inactivity damage (0.1 to all after max_inactivity_turns without a bullet hit) ends rounds.

Reading state
-------------
- `game.alive_ids -> list[int]` (sorted), `game.bot_ids` (all), `game.participants`, `game.setup`.
- `game.bot(bot_id) -> Bot`: the live state (read it, never write it): x, y, direction, gun_direction,
  radar_direction, radar_sweep, speed, turn_rate, gun_turn_rate, radar_turn_rate, energy, gun_heat, intent,
  alive, disabled, team_id, is_droid. `game.bullets -> list[Bullet]` (bullet_id, owner_id, power, x, y,
  direction, speed). For fast in-process consumers; everyone else uses the protocol views below.
- `game.events_for(bot_id)` / `game.observer_events()`: the last turn's raw event tuples (layouts in
  `sacbot.engine.events`), cheap to scan without building protocol objects.
- `game.tick_bot_ids() -> list[int]`: who gets a tick for the last turn: the bots alive at its start (those
  that died in it get one last tick, which holds their BotDeathEvent).
- `game.tick_for_bot(bot_id) -> TickEventForBot`: round and turn number, its BotState (enemy_count = alive
  bots not in its team; colors from its intent), its own bullets' BulletStates, its events of the last turn.
- `game.tick_for_observer() -> TickEventForObserver`: a BotStateWithId for every bot alive at the start of
  the turn (id, session_id, name, version, std_out/std_err/debug_graphics), every bullet, all events.
- `game.tick_for_bot_dict(bot_id)` / `game.tick_for_observer_dict()`: the same ticks as wire dicts (exactly
  `sacbot.protocol.to_dict` of the objects), built straight from the state for `encode_dict_bytes`: the
  arena's per-turn path.
- Events per recipient, as the server sends them: ScannedBotEvent (scanner), BulletFiredEvent (shooter),
  BulletHitBotEvent (shooter and victim), BulletHitBulletEvent (each bullet's owner), BulletHitWallEvent
  (owner), BotHitWallEvent (that bot), BotHitBotEvent (both bots), BotDeathEvent (every bot alive at the
  start of the turn, the victim included: the intended behaviour, which 1.1.0 fails to deliver),
  WonRoundEvent (round winners, in the last tick), TeamMessageEvent (receivers). The order of events in a
  tick is deterministic (the server's is unspecified).

Results
-------
- `game.results_for_observer() -> list[ResultsForObserver]`: accumulated over the finished rounds, sorted by
  total (descending) then id, shared ranks on equal totals; a row per bot, or per team when teams exist
  (is_team=True, id = team id, team name/version). Integers rounded as the server does (half up; the bullet
  kill bonus truncated).
- `game.results_for_bot(bot_id) -> ResultsForBot`: accumulated, with the bot's current shared rank.
- `game.round_results() -> list[ResultsForObserver]`: the last finished round alone.
- `game.round_scores() -> dict[int, Score]`: raw float scores of the running (or last) round so far;
  `game.accumulated_scores() -> dict[int, Score]`: raw float sums over the finished rounds.
- Messages: `game.round_started()`, `game.round_ended_for_bot(bot_id)`, `game.round_ended_for_observer()`,
  `game.game_ended_for_bot(bot_id)`, `game.game_ended_for_observer()` (numberOfRounds = rounds played).
"""

from sacbot.engine.game import Game
from sacbot.engine.intents import merge_intents, to_persistent
from sacbot.engine.scoring import Score
from sacbot.engine.setup import PRESETS, assign_bot_ids, game_setup_for, validate_setup
from sacbot.engine.state import Bot, Bullet, Intent, Participant

__all__ = [
    "PRESETS",
    "Bot",
    "Bullet",
    "Game",
    "Intent",
    "Participant",
    "Score",
    "assign_bot_ids",
    "game_setup_for",
    "merge_intents",
    "to_persistent",
    "validate_setup",
]
