"""An exported sacbot policy on the official Tank Royale Python Bot API (written by `sacbot export-bot`).

This file is the bot folder's `<Name>.py`. It needs Python 3.10+ with the packages in requirements.txt
(`robocode-tank-royale`, `numpy`): no sacbot, no torch. The policy code is sacbot's own, copied into `lib/`;
`policy.json` says which checkpoint the weights (`weights.npz`) came from and how the radar plays. A booter
starts it with this folder as the working directory: by `<Name>.sh` / `<Name>.cmd` (which install the
requirements into `venv/` first), or with no script as `python3 <Name>.py`.

It plays as `sacbot play --eval` does: the same state features, the actions `policy.json` names (`actions`:
tanh of the mean, deterministic, unless the export drew the target speed or every entry from the policy),
the GRU state reset every round, one complete intent per turn. A missing or damaged `policy.json` or
`weights.npz` ends it at start with one line on stderr and exit code 1.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
NAME = Path(__file__).stem


def _say(line: str) -> None:
    print(f"{NAME}: {line}", file=sys.stderr, flush=True)


def _num(value: float | None) -> float:
    return 0.0 if value is None else float(value)


def apply_intent(bot: Any, intent: Any) -> None:
    """Put a complete sacbot intent (`BotIntent`) into the official API's intent; the next `go()` sends it."""
    bot.turn_rate = _num(intent.turn_rate)
    bot.gun_turn_rate = _num(intent.gun_turn_rate)
    bot.radar_turn_rate = _num(intent.radar_turn_rate)
    bot.target_speed = _num(intent.target_speed)
    bot.adjust_gun_for_body_turn = bool(intent.adjust_gun_for_body_turn)
    bot.adjust_radar_for_body_turn = bool(intent.adjust_radar_for_body_turn)
    bot.adjust_radar_for_gun_turn = bool(
        intent.adjust_radar_for_gun_turn
    )  # also sets fire assist: reset below
    bot.set_fire_assist(bool(intent.fire_assist))
    # set_fire refuses (and keeps the earlier request) while the gun is hot or the energy is below the power.
    # The server fires only with a cool gun and more energy than the power, so asking for 0 instead gives
    # what play's intent gives in that turn: no shot.
    if not bot.set_fire(_num(intent.firepower)):
        bot.set_fire(0.0)
    if intent.rescan:
        bot.set_rescan()


def make_bot(policy: Any, bot_info: Any) -> Any:
    """The official `Bot` that plays `policy` (a `sacbot.export.policy.ExportedPolicy`)."""
    from robocode_tank_royale.bot_api.bot import Bot
    from robocode_tank_royale.bot_api.events.game_started_event import GameStartedEvent
    from robocode_tank_royale.bot_api.events.tick_event import TickEvent

    from sacbot.export.policy import wire_view

    class ExportedBot(Bot):
        def __init__(self) -> None:
            super().__init__(bot_info=bot_info)
            self.round_seen = -1

        def run(self) -> None:
            while self.running:
                self.go()  # sends the intent on_tick set for this turn, then waits for the next tick

        def on_game_started(self, game_started_event: GameStartedEvent) -> None:
            setup = game_started_event.game_setup
            policy.start_game(setup.arena_width, setup.arena_height, game_started_event.my_id)
            self.round_seen = -1

        def on_tick(self, tick_event: TickEvent) -> None:
            if tick_event.bot_state is None:
                return
            if tick_event.round_number != self.round_seen:  # the first tick of a round
                self.round_seen = tick_event.round_number
                policy.start_round()
            apply_intent(self, policy.act(wire_view(tick_event, policy.memory.my_id)))

    return ExportedBot()


def main() -> int:
    if sys.version_info < (3, 10):  # noqa: UP036 - this file runs outside sacbot, on any Python
        _say("error: needs Python 3.10 or newer (the official Bot API's minimum)")
        return 1
    sys.path.insert(0, str(HERE / "lib"))  # sacbot's policy modules, shipped in this folder
    try:
        from sacbot.export.policy import ExportLoadError, load_policy
    except ImportError as exc:
        _say(f"error: cannot import the policy ({exc}); install requirements.txt (pip install -r ...)")
        return 1
    try:
        policy = load_policy(HERE)
    except ExportLoadError as exc:
        _say(f"error: {exc}")
        return 1
    try:
        from robocode_tank_royale.bot_api.bot_info import BotInfo
    except ImportError as exc:
        _say(f"error: the official Bot API is missing ({exc}); pip install -r requirements.txt")
        return 1
    identity = HERE / f"{NAME}.json"
    try:
        bot_info = BotInfo.from_file(str(identity))
    except (OSError, ValueError, KeyError) as exc:
        _say(f"error: cannot read {identity} ({exc})")
        return 1
    source = policy.description.source if policy.description is not None else {}
    step = "compiled C" if policy.actor.native else "numpy"
    _say(
        f"policy from {source.get('checkpoint', '?')} (updates {source.get('updates', '?')}), "
        f"radar {policy.radar_mode}, actions {policy.actions}, actor step in {step}"
    )
    try:
        make_bot(policy, bot_info).start()
    except KeyboardInterrupt:
        os._exit(130)
    except Exception as exc:  # noqa: BLE001 - e.g. the API's BotException: no server at SERVER_URL
        _say(f"error: {exc}")
        os._exit(1)  # the API's websocket thread is not a daemon: a plain exit would wait for it
    return 0


if __name__ == "__main__":
    sys.exit(main())
