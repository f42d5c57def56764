"""Protocol views of the engine state: ticks for bots and observers, and results (`TurnToTickEventFor*Mapper`,
`BotToBotStateMapper`, `ResultsBuilder`, `score/ResultsView.kt`). Built only on demand."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sacbot.engine import events as ev
from sacbot.engine.scoring import Score, rank_scores, round_half_up
from sacbot.engine.state import Bot
from sacbot.protocol import (
    BotState,
    BotStateWithId,
    BulletState,
    ResultsForBot,
    ResultsForObserver,
    TickEventForBot,
    TickEventForObserver,
)

if TYPE_CHECKING:
    from sacbot.engine.game import Game


_NO_COLORS: tuple[str | None, ...] = (None,) * 7


def _colors(bot: Bot) -> tuple[str | None, ...]:
    """The bot's seven colors (body, turret, radar, bullet, scan, tracks, gun) from its persistent intent."""
    i = bot.intent
    if i is None:
        return _NO_COLORS
    return (
        i.body_color,
        i.turret_color,
        i.radar_color,
        i.bullet_color,
        i.scan_color,
        i.tracks_color,
        i.gun_color,
    )


def bot_state(bot: Bot, enemy_count: int) -> BotState:
    body, turret, radar, bullet, scan, tracks, gun = _colors(bot)
    return BotState(
        energy=bot.energy,
        x=bot.x,
        y=bot.y,
        direction=bot.direction,
        gun_direction=bot.gun_direction,
        radar_direction=bot.radar_direction,
        radar_sweep=bot.radar_sweep,
        speed=bot.speed,
        turn_rate=bot.turn_rate,
        gun_turn_rate=bot.gun_turn_rate,
        radar_turn_rate=bot.radar_turn_rate,
        gun_heat=bot.gun_heat,
        enemy_count=enemy_count,
        is_droid=bot.is_droid,
        body_color=body,
        turret_color=turret,
        radar_color=radar,
        bullet_color=bullet,
        scan_color=scan,
        tracks_color=tracks,
        gun_color=gun,
    )


def tick_for_bot(game: Game, bot: Bot, events: list[tuple[Any, ...]]) -> TickEventForBot:
    turn = game.turn_number
    bot_id = bot.id
    return TickEventForBot(
        turn_number=turn,
        round_number=game.round_number,
        bot_state=bot_state(bot, game.enemy_count(bot_id)),
        bullet_states=[
            BulletState(
                bullet_id=b.bullet_id,
                owner_id=b.owner_id,
                power=b.power,
                x=b.x,
                y=b.y,
                direction=b.direction,
                color=b.color,
            )
            for b in game.bullets
            if b.owner_id == bot_id
        ],  # fmt: skip
        events=[ev.to_protocol(e, turn) for e in events],
    )


def tick_for_observer(game: Game, bots: list[Bot], events: list[tuple[Any, ...]]) -> TickEventForObserver:
    turn = game.turn_number
    states = []
    for bot in bots:
        p = game.participant(bot.id)
        body, turret, radar, bullet, scan, tracks, gun = _colors(bot)
        states.append(
            BotStateWithId(
                id=bot.id,
                session_id=p.session_id,
                name=p.name,
                version=p.version,
                energy=bot.energy,
                x=bot.x,
                y=bot.y,
                direction=bot.direction,
                gun_direction=bot.gun_direction,
                radar_direction=bot.radar_direction,
                radar_sweep=bot.radar_sweep,
                speed=bot.speed,
                turn_rate=bot.turn_rate,
                gun_turn_rate=bot.gun_turn_rate,
                radar_turn_rate=bot.radar_turn_rate,
                gun_heat=bot.gun_heat,
                enemy_count=game.enemy_count(bot.id),
                is_droid=bot.is_droid,
                std_out=bot.std_out,
                std_err=bot.std_err,
                debug_graphics=bot.debug_graphics,
                body_color=body,
                turret_color=turret,
                radar_color=radar,
                bullet_color=bullet,
                scan_color=scan,
                tracks_color=tracks,
                gun_color=gun,
            )
        )
    return TickEventForObserver(
        turn_number=turn,
        round_number=game.round_number,
        bot_states=states,
        bullet_states=[
            BulletState(
                bullet_id=b.bullet_id,
                owner_id=b.owner_id,
                power=b.power,
                x=b.x,
                y=b.y,
                direction=b.direction,
                color=b.color,
            )
            for b in game.bullets
        ],  # fmt: skip
        events=[ev.to_protocol(e, turn) for e in events],
    )


def _result_fields(s: Score) -> dict[str, int]:
    """Integers as the server rounds them: half up, except the bullet kill bonus, which is truncated."""
    return {
        "rank": s.rank,
        "survival": round_half_up(s.survival),
        "last_survivor_bonus": round_half_up(s.last_survivor_bonus),
        "bullet_damage": round_half_up(s.bullet_damage),
        "bullet_kill_bonus": int(s.bullet_kill_bonus),
        "ram_damage": round_half_up(s.ram_damage),
        "ram_kill_bonus": round_half_up(s.ram_kill_bonus),
        "total_score": round_half_up(s.total),
        "first_places": s.first_places,
        "second_places": s.second_places,
        "third_places": s.third_places,
    }


def bot_results(scores: dict[int, Score], bot_id: int) -> ResultsForBot:
    """A bot's results with its shared rank among all bots (1.1.0 keeps round 1's order instead)."""
    ranked = rank_scores([s.copy() for s in scores.values()])
    mine = next(s for s in ranked if s.bot_id == bot_id)
    return ResultsForBot(**_result_fields(mine))


def observer_results(game: Game, scores: list[Score]) -> list[ResultsForObserver]:
    """One row per bot, or per team (members summed, id = team id), sorted by total then id, ranked."""
    rows: dict[tuple[bool, int], Score] = {}
    for s in sorted(scores, key=lambda s: s.bot_id):
        p = game.participant(s.bot_id)
        key = (p.team_id is not None, p.team_id if p.team_id is not None else p.id)
        if key in rows:
            rows[key].accumulate(s)
        else:
            rows[key] = s.copy(bot_id=key[1])
    team_of = {key[1]: key[0] for key in rows}
    ranked = rank_scores(sorted(rows.values(), key=lambda s: s.bot_id))
    out = []
    for s in ranked:
        is_team = team_of[s.bot_id]
        if is_team:
            member = next(p for p in game.participants if p.team_id == s.bot_id)
            name = member.team_name or f"Team {s.bot_id}"
            version = member.team_version or member.version
        else:
            member = game.participant(s.bot_id)
            name = member.name
            version = member.version
        out.append(
            ResultsForObserver(id=s.bot_id, name=name, version=version, is_team=is_team, **_result_fields(s))
        )
    return out
