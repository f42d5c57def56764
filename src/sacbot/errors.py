"""Errors a user can cause. The CLI turns each into one clear line on stderr and a non-zero exit."""

from __future__ import annotations


class UserError(Exception):
    """A problem with the user's input or environment (bad config, unreachable server, corrupt file).

    `exit_code` is what the process exits with; 2 is the convention for usage and configuration errors.
    """

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code
