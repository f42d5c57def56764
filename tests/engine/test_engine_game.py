"""Rounds, game end, placement, setups, views, teams, inactivity and determinism."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from sacbot.engine import PRESETS, Game, Intent, Participant, assign_bot_ids, game_setup_for
from sacbot.engine.scripted import POLICIES
from sacbot.errors import UserError
from sacbot.protocol import BotStateWithId, decode, encode


def test_presets_match_the_official_table() -> None:
    assert set(PRESETS) == {"classic", "1v1", "melee", "twinduel", "custom"}
    s = game_setup_for("melee")
    assert (s.arena_width, s.arena_height, s.min_number_of_participants, s.number_of_rounds) == (
        1000,
        1000,
        10,
        10,
    )
    s = game_setup_for("twinduel")
    assert (s.arena_width, s.arena_height, s.max_number_of_participants, s.number_of_rounds) == (
        800,
        800,
        4,
        75,
    )
    s = game_setup_for("1v1", number_of_rounds=3)
    assert (s.max_number_of_participants, s.number_of_rounds, s.gun_cooling_rate) == (2, 3, 0.1)
    assert (s.turn_timeout, s.ready_timeout, s.max_inactivity_turns) == (30_000, 10_000_000, 450)
    assert game_setup_for("classic").is_arena_width_locked is True


def test_bad_setups_are_user_errors() -> None:
    with pytest.raises(UserError, match="unknown game type"):
        game_setup_for("chess")
    with pytest.raises(UserError, match="unknown game setup field"):
        game_setup_for("1v1", arena_depth=3)
    with pytest.raises(UserError, match="at least 10"):
        Game(game_setup_for("melee"), [(1, "A"), (2, "B")])
    with pytest.raises(UserError, match="at most 2"):
        Game(game_setup_for("1v1"), [(1, "A"), (2, "B"), (3, "C")])
    with pytest.raises(UserError, match="too small"):
        Game(game_setup_for("custom", arena_width=100, arena_height=100), [(i, "x") for i in range(1, 6)])
    with pytest.raises(UserError, match="unique"):
        Game(game_setup_for("custom"), [(1, "A"), (1, "B")])


def test_bot_ids_follow_sorted_session_ids() -> None:
    assert assign_bot_ids(["zeta", "alpha", "mid"]) == {"alpha": 1, "mid": 2, "zeta": 3}


def test_placement_uses_distinct_grid_cells_and_is_told_before_the_round() -> None:
    participants = [Participant(i, f"B{i}") for i in range(1, 11)]
    game = Game(game_setup_for("melee"), participants, seed=11)
    starts = {i: game.start_position(i) for i in range(1, 11)}
    started = game.game_started_for_bot(3)
    assert (started.my_id, started.start_x, started.start_y, started.start_direction) == (3, *starts[3])
    cells = set()
    for x, y, direction in starts.values():
        cx, cy = int(x // 50), int(y // 50)
        assert 18 <= x - cx * 50 <= 32 and 18 <= y - cy * 50 <= 32
        assert 0 <= direction < 360
        cells.add((cx, cy))
    assert len(cells) == 10
    game.start_round()
    game.turn({})
    for i, (x, y, direction) in starts.items():
        bot = game.bot(i)
        assert (bot.x, bot.y, bot.direction, bot.gun_direction, bot.radar_direction) == (
            x,
            y,
            direction,
            direction,
            direction,
        )


def test_same_seed_same_game_and_another_seed_another() -> None:
    def play(seed: int) -> list[tuple[float, ...]]:
        game = Game(game_setup_for("1v1", number_of_rounds=1), [(1, "A"), (2, "B")], seed=seed)
        game.start_round()
        trace = []
        while not game.round_over and game.turn_number < 400:
            intents = {1: POLICIES["tracker"](game, 1), 2: POLICIES["spinner"](game, 2)}
            game.turn(intents)
            trace.append(tuple(v for i in (1, 2) for v in (game.bot(i).x, game.bot(i).y, game.bot(i).energy)))
        return trace

    assert play(4) == play(4)
    assert play(4) != play(5)


def test_rounds_and_game_end() -> None:
    game = Game(game_setup_for("custom", number_of_rounds=2), [(1, "A"), (2, "B")], seed=1)
    with pytest.raises(RuntimeError):
        game.turn({})
    for round_number in (1, 2):
        assert game.start_round() == round_number
        with pytest.raises(RuntimeError):
            game.start_round()
        game.turn({})
        game.bot(2).energy = -0.5
        game.turn({})
        assert game.round_over and game.winner_ids == [1]
    assert game.game_over
    with pytest.raises(RuntimeError):
        game.start_round()
    results = game.game_ended_for_observer()
    assert results.number_of_rounds == 2
    assert results.results[0].id == 1 and results.results[0].first_places == 2


def test_all_disabled_and_no_bullets_is_a_draw(scene: Callable[..., Game]) -> None:
    game = scene((200.0, 300.0, 0.0), (600.0, 300.0, 0.0))
    game.bot(1).energy = 0.0
    game.bot(2).energy = 0.0
    game.turn({})
    assert game.round_over
    assert game.winner_ids == [1, 2]  # equal (zero) totals share rank 1


def test_inactivity_zaps_everyone_after_max_inactivity_turns(scene: Callable[..., Game]) -> None:
    game = scene((200.0, 300.0, 0.0), (600.0, 300.0, 0.0), max_inactivity_turns=5)
    # Turn 1 ran with counter 0 -> 1; turns 2..6 take it to 6; turn 7 sees 6 > 5.
    for _ in range(5):
        game.turn({})
    assert game.bot(1).energy == 100.0
    game.turn({})
    assert game.bot(1).energy == pytest.approx(99.9) and game.bot(2).energy == pytest.approx(99.9)


def test_teams_end_the_round_when_one_team_is_left_and_report_team_rows() -> None:
    participants = [Participant(i, f"B{i}", team_id=1 if i <= 2 else 2, team_name=f"T{1 if i <= 2 else 2}")
                    for i in range(1, 5)]  # fmt: skip
    game = Game(game_setup_for("twinduel", number_of_rounds=1), participants, seed=8)
    assert game.game_started_for_bot(1).teammate_ids == [2]
    game.start_round()
    game.turn({})
    assert game.tick_for_bot(1).bot_state.enemy_count == 2
    game.bot(3).energy = -1.0
    game.turn({})
    assert not game.round_over and game.tick_for_bot(1).bot_state.enemy_count == 1
    game.bot(4).energy = -1.0
    game.turn({})
    assert game.round_over
    rows = game.results_for_observer()
    assert [(r.id, r.name, r.is_team, r.rank) for r in rows] == [(1, "T1", True, 1), (2, "T2", True, 2)]
    assert rows[0].survival == 200  # two members, 50 for each of two death turns


def test_ticks_are_valid_wire_messages(scene: Callable[..., Game]) -> None:
    game = scene((200.0, 300.0, 0.0), (300.0, 300.0, 0.0))
    game.bot(1).gun_heat = 0.0
    game.turn({1: Intent(firepower=3.0, radar_turn_rate=10.0, body_color="#123456")})
    tick = game.tick_for_bot(1)
    assert tick.turn_number == 2 and tick.round_number == 1
    assert [b.bullet_id for b in tick.bullet_states] == [1]
    assert decode(encode(tick)) == tick
    observer = game.tick_for_observer()
    assert all(isinstance(s, BotStateWithId) for s in observer.bot_states)
    assert [s.id for s in observer.bot_states] == [1, 2]
    assert decode(encode(observer)) == observer
    assert game.tick_for_bot(2).bullet_states == []  # only its own bullets


def test_observer_tick_shows_the_bot_that_died_this_turn(scene: Callable[..., Game]) -> None:
    game = scene((200.0, 300.0, 0.0), (600.0, 300.0, 0.0), (400.0, 500.0, 0.0))
    game.bot(3).energy = -0.1
    game.turn({})
    observer = game.tick_for_observer()
    assert [s.id for s in observer.bot_states] == [1, 2, 3]
    assert [type(e).__name__ for e in observer.events] == ["BotDeathEvent"]
    game.turn({})
    assert [s.id for s in game.tick_for_observer().bot_states] == [1, 2]


def test_team_messages_reach_teammates_or_the_named_receiver(scene: Callable[..., Game]) -> None:
    from sacbot.protocol import BotIntent, TeamMessage, TeamMessageEvent

    game = scene((100.0, 100.0, 0.0), (300.0, 100.0, 0.0), (500.0, 400.0, 0.0), teams=(1, 1, None))
    too_long = "x" * 4097
    messages = [
        TeamMessage(message="hi", message_type="str"),
        TeamMessage(message=too_long, message_type="str"),
        TeamMessage(message="psst", message_type="str", receiver_id=3),
    ]
    game.turn({1: BotIntent(team_messages=messages)})
    to_2 = [e for e in game.tick_for_bot(2).events if isinstance(e, TeamMessageEvent)]
    to_3 = [e for e in game.tick_for_bot(3).events if isinstance(e, TeamMessageEvent)]
    assert [(e.message, e.sender_id) for e in to_2] == [("hi", 1)]
    assert [e.message for e in to_3] == ["psst"]
    game.turn({})  # one-shot: not repeated with the persistent intent
    assert not [e for e in game.tick_for_bot(2).events if isinstance(e, TeamMessageEvent)]


def test_initial_positions_override_placement_when_enabled() -> None:
    parts = [Participant(1, "A", initial_position=(50.0, 5000.0, 90.0)), Participant(2, "B")]
    game = Game(game_setup_for("1v1"), parts, seed=1, use_initial_positions=True)
    assert game.start_position(1) == (50.0, 582.0, 90.0)  # y clamped to H - 18
    plain = Game(game_setup_for("1v1"), parts, seed=1)
    assert plain.start_position(1) != (50.0, 582.0, 90.0)


def test_bots_overlapping_in_turn_one_are_separated_at_random() -> None:
    game = Game(game_setup_for("custom", number_of_rounds=1), [(1, "A"), (2, "B")], seed=6)
    game.start_round()
    game.bot(2).x, game.bot(2).y = game.bot(1).x + 10.0, game.bot(1).y
    game.turn({})
    assert [type(e).__name__ for e in game.tick_for_bot(1).events] == ["BotHitBotEvent"]
    assert game.bot(1).energy == pytest.approx(99.4)
    b2 = game.bot(2)
    assert (b2.x, b2.y) != (game.bot(1).x + 10.0, game.bot(1).y)
    assert 18 <= b2.x <= 782 and 18 <= b2.y <= 582
