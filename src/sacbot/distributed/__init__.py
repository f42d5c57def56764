"""Scaling out on Ray (the optional `sacbot[ray]` extra): env runners as Ray actors feeding one learner.

Ray does the scheduling, transport, object store and restarts; this package only says what runs where:
`runner` (an actor stepping a vectorised environment with a frozen numpy copy of the policy), `learner`
(`train_ray`: replay and SAC updates, weight broadcast, rate control, checkpoints), `games` (eval and
tournament games as Ray tasks) and `view` (the live terminal view); its benchmark is `sacbot.bench.ray`.
Nothing here is imported by the default in-process path, and Ray is imported only when asked for.
"""

from __future__ import annotations

import os
from types import ModuleType

from sacbot.errors import UserError

RAY_MISSING = "--ray needs Ray, which is not installed: pip install 'sacbot[ray]'"


def require_ray(what: str = "--ray") -> ModuleType:
    """The `ray` module, or one clear UserError naming `what` asked for it when the extra is not installed."""
    try:
        import ray
    except ImportError:
        raise UserError(RAY_MISSING.replace("--ray", what, 1), exit_code=2) from None
    return ray


def init_ray(address: str | None = None, num_cpus: int | None = None) -> ModuleType:
    """Join the cluster at `address` (or RAY_ADDRESS), or start a local Ray instance (with `num_cpus` CPUs
    when given). A cluster that cannot be joined is one UserError.

    An already initialised Ray (a test's, a notebook's) is used as it is.
    """
    ray = require_ray()
    if ray.is_initialized():
        return ray
    try:
        if address:
            ray.init(address=address, include_dashboard=False, log_to_driver=True)
        else:
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=True)
    except ConnectionError as exc:
        where = address or os.environ.get("RAY_ADDRESS", "")
        raise UserError(
            f"cannot join the Ray cluster at {where} ({exc}); is `ray start --head` running there, and, with "
            "token authentication (Ray's default), are RAY_AUTH_MODE=token and its token set here?",
            exit_code=1,
        ) from None
    return ray


__all__ = ["RAY_MISSING", "init_ray", "require_ray"]
