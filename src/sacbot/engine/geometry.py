"""Intersection tests of the server (`model/math.kt`), ported for exact agreement on the edge cases."""

from __future__ import annotations


def is_point_on_line(px: float, py: float, x1: float, y1: float, x2: float, y2: float) -> bool:
    """Point on segment: cross product near 0 (1e-6), then within the segment's dominant extent."""
    dxl = x2 - x1
    dyl = y2 - y1
    cross = (px - x1) * dyl - (py - y1) * dxl
    if abs(cross) >= 1e-6:
        return False
    if abs(dxl) >= abs(dyl):
        return x1 <= px <= x2 if dxl > 0 else x2 <= px <= x1
    return y1 <= py <= y2 if dyl > 0 else y2 <= py <= y1


def is_line_intersecting_circle(
    x1: float, y1: float, x2: float, y2: float, cx: float, cy: float, radius: float
) -> bool:
    """Segment (x1,y1)-(x2,y2) touches the circle: an end inside, or the closest point inside and on it."""
    r2 = radius * radius
    ex = x1 - cx
    ey = y1 - cy
    if ex * ex + ey * ey <= r2:
        return True
    ex = x2 - cx
    ey = y2 - cy
    if ex * ex + ey * ey <= r2:
        return True
    dx = x2 - x1
    dy = y2 - y1
    len2 = dx * dx + dy * dy
    if len2 == 0.0:
        return False  # Kotlin divides to NaN here, and every NaN comparison is false
    dot = ((cx - x1) * dx + (cy - y1) * dy) / len2
    px = x1 + dot * dx
    py = y1 + dot * dy
    if not is_point_on_line(px, py, x1, y1, x2, y2):
        return False
    ex = px - cx
    ey = py - cy
    return ex * ex + ey * ey <= r2


def is_line_intersecting_line(
    a1x: float, a1y: float, a2x: float, a2y: float, b1x: float, b1y: float, b2x: float, b2y: float
) -> bool:
    """Franklin Antonio's segment test with Keith Woodward's collinear case, as the server has it."""
    ax = a2x - a1x
    ay = a2y - a1y
    bx = b1x - b2x
    by = b1y - b2y
    cx = a1x - b1x
    cy = a1y - b1y
    alpha = by * cx - bx * cy
    denom = ay * bx - ax * by
    if denom > 0 and (alpha < 0 or alpha > denom):
        return False
    if denom < 0 and (alpha > 0 or alpha < denom):
        return False
    beta = ax * cy - ay * cx
    if denom > 0 and (beta < 0 or beta > denom):
        return False
    if denom < 0 and (beta > 0 or beta < denom):
        return False
    if denom == 0.0:
        collinear = a1x * (a2y - b1y) + a2x * (b1y - a1y) + b1x * (a1y - a2y)
        if collinear == 0.0:
            if (
                (b1x <= a1x <= b2x)
                or (b2x <= a1x <= b1x)
                or (b1x <= a2x <= b2x)
                or (b2x <= a2x <= b1x)
                or (a1x <= b1x <= a2x)
                or (a2x <= b1x <= a1x)
            ):
                return (
                    (b1y <= a1y <= b2y)
                    or (b2y <= a1y <= b1y)
                    or (b1y <= a2y <= b2y)
                    or (b2y <= a2y <= b1y)
                    or (a1y <= b1y <= a2y)
                    or (a2y <= b1y <= a1y)
                )
        return False
    return True
