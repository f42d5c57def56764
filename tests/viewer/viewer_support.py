"""Data shared by the viewer tests (the fixtures are in conftest.py): a recorded game, the debug graphics its
painter draws, and the page's style."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sacbot.viewer.pages import style
from sacbot.viewer.recording import RecordingWriter

if TYPE_CHECKING:
    from sacbot.viewer.painter import Painter

# Drawn when the bot may debug: a 40x40 red square with its lower-left corner at arena (100, 100), in the
# official Bot API's SVG form (viewBox 0 0 5000 5000, arena units, y up).
DEBUG_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 5000 5000">\n'
    '<rect x="100" y="100" width="40" height="40" fill="#ff0000" stroke="none" stroke-width="0" />\n'
    "</svg>\n"
)

STYLE = style()
PAD = STYLE["canvas"]["padding"]


def screen(painter: Painter, x: float, y: float) -> tuple[float, float]:
    """Arena (y up) to the painter's final image pixels (y down), where a test samples a colour:
    `Painter.to_px` without the supersampling."""
    return (painter.ox / painter.ss + x * painter.k, painter.oy / painter.ss - y * painter.k)


@dataclass
class Played:
    writer: RecordingWriter  # closed
    observed: list[str]  # every text the controller received, in order

    @property
    def path(self) -> Path:
        assert len(self.writer.files) == 1
        return self.writer.files[0]
