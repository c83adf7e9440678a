"""The check library: declared checks (names, arguments, measurements) and, later, their
implementations. Importing this package is cheap; the catalog loads on first lookup."""

from __future__ import annotations

from labctl.checks.registry import (
    CheckArgs,
    CheckSpec,
    Measure,
    all_checks,
    argument_error,
    get_check,
    implementation,
    load_plugins,
    register_check,
)

__all__ = [
    "CheckArgs",
    "CheckSpec",
    "Measure",
    "all_checks",
    "argument_error",
    "get_check",
    "implementation",
    "load_plugins",
    "register_check",
]
