"""The learner's named choices, as `Literal` types without torch: the trainer (`TrainerConfig`), the
settings (`SACBOT_*`) and the campaign files validate against these same lists."""

from __future__ import annotations

from typing import Literal

# The hindsight term's distance from its labels (`TrainerConfig.hindsight_distance`).
HindsightDistance = Literal["squared", "absolute", "hit"]
# What the gun labels before the aiming step point at (`sacbot.agent.hindsight.hindsight_aim(target=...)`).
HindsightTarget = Literal["direction", "bearing"]
# Where the teacher's gun aims (`TrainerConfig.teacher_gun`): linear targeting, or the wave inputs' peak.
TeacherGun = Literal["linear", "wave"]
# What the wave inputs' aim entry points at (`NetworkSizes.wave_aim`): the histogram's peak, or whichever of
# it and a linear aim would have hit more of our past waves (virtual guns).
WaveAim = Literal["peak", "virtual"]
