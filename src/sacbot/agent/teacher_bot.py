"""`TeacherBot`: the scripted teacher (`sacbot.agent.teacher`) as a bot, through SacBot's own features.

It sees what SacBot sees (the 17-entry state of `sacbot.agent.features`, the same per-round memory), acts with
`teacher_action` on that state, and answers with the same action mapping and the lock radar SacBot's
checkpoints use (`action_to_intent`). So `sacbot opponent Teacher`, `bots/Teacher` and the in-process pool all
play the policy the student is distilled toward, and a tournament shows what the student adds beyond it.
Deterministic: the teacher has no randomness.
"""

from __future__ import annotations

import torch

from sacbot.agent.features import RoundMemory, action_to_intent, observe
from sacbot.agent.teacher import teacher_action
from sacbot.opponents.base import ClassicBot
from sacbot.protocol import BotIntent, GameStartedEventForBot, TickEventForBot


class TeacherBot(ClassicBot):
    name = "Teacher"
    colors = {
        "body_color": "#566573",
        "turret_color": "#2C3E50",
        "radar_color": "#D5D8DC",
        "gun_color": "#2C3E50",
        "bullet_color": "#ABB2B9",
    }

    memory: RoundMemory

    def __init__(self, seed: int | None = None) -> None:
        self.memory = RoundMemory(800.0, 600.0)
        super().__init__(seed)

    def on_game_started(self, event: GameStartedEventForBot) -> None:
        super().on_game_started(event)
        self.memory = RoundMemory(self.arena_width, self.arena_height, my_id=event.my_id)

    def on_new_round(self) -> None:
        self.memory.new_round()

    def on_tick(self, tick: TickEventForBot) -> BotIntent:
        self.take_state(tick)  # a new round resets the features' memory (on_new_round)
        obs = observe(tick, self.memory)
        with torch.no_grad():
            action = teacher_action(torch.from_numpy(obs), self.arena_width, self.arena_height)
        return self.with_colors(action_to_intent(action.numpy(), "lock", self.memory))


__all__ = ["TeacherBot"]
