"""Network sizes, a settings dataclass without torch (the numpy inference path imports it)."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class NetworkSizes:
    """Network sizes (settings). `memoryless` makes every GRU a per-step layer (the no-memory control)."""

    state_dim: int = 17
    action_dim: int = 4
    embed: int = 128
    hidden: int = 128
    head: int = 64
    log_std_min: float = -20.0
    log_std_max: float = 2.0
    activation: str = "relu"
    memoryless: bool = False

    def as_dict(self) -> dict[str, object]:
        return asdict(self)
