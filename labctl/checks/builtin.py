"""Attach every built-in check implementation to its declaration in the catalog.

``import labctl.checks.builtin`` (the runner does) imports the four modules of the check
library; each ``@implementation("…")`` in them attaches a function to a declared check.
"""

from __future__ import annotations

from labctl.checks import generic, link, power, thermal

MODULES = (generic, power, thermal, link)

__all__ = ["MODULES", "unimplemented"]


def unimplemented() -> list[str]:
    """Names of declared checks that still have no implementation (should be empty)."""
    from labctl.checks.registry import all_checks

    return [name for name, spec in all_checks().items() if not spec.implemented]
