"""Initial placement (`BotInitializer.kt`): a distinct random 50x50 grid cell per bot, a uniform point at
least 18 from the cell's edges, and one uniform direction for body, gun and radar. Seeded, so reproducible."""

from __future__ import annotations

import random
from collections.abc import Sequence

from sacbot.engine.rules import BOT_DIAMETER, BOT_RADIUS, PLACEMENT_CELL_SIZE, clamp
from sacbot.engine.state import Participant


def place_bots(
    participants: Sequence[Participant],
    width: int,
    height: int,
    rng: random.Random,
    use_initial_positions: bool = False,
) -> dict[int, tuple[float, float, float]]:
    """bot id -> (x, y, direction) for every participant, drawn in participant order."""
    grid_w = width // PLACEMENT_CELL_SIZE
    grid_h = height // PLACEMENT_CELL_SIZE
    cell_count = grid_w * grid_h
    if cell_count < len(participants):
        raise ValueError(f"arena ({width},{height}) is too small to contain {len(participants)} bots")
    cell_w = width // grid_w
    cell_h = height // grid_h
    occupied: set[int] = set()
    placed: dict[int, tuple[float, float, float]] = {}
    for participant in participants:
        while True:
            cell = rng.randrange(cell_count)
            if cell not in occupied:
                occupied.add(cell)
                break
        cell_y = float(cell // grid_w)
        cell_x = cell - cell_y * grid_w
        x = cell_x * cell_w + (BOT_RADIUS + rng.random() * (cell_w - BOT_DIAMETER))
        y = cell_y * cell_h + (BOT_RADIUS + rng.random() * (cell_h - BOT_DIAMETER))
        direction = rng.random() * 360
        initial = participant.initial_position
        if use_initial_positions and initial is not None:
            ix, iy, idir = initial
            x = clamp(ix if ix is not None else x, BOT_RADIUS, width - BOT_RADIUS)
            y = clamp(iy if iy is not None else y, BOT_RADIUS, height - BOT_RADIUS)
            if idir is not None:
                direction = idir
        placed[participant.id] = (x, y, direction)
    return placed
