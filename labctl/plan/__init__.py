"""The test-plan language: models, loader with file:line:col errors, and resolution.

``load_plan(path, overrides, fixture)`` returns a :class:`LoadedPlan` (raises
:class:`~labctl.errors.ValidationErrors`); ``check_plan`` returns ``(plan|None, errors)``.
Importing this package is cheap; pydantic and yaml load with the loader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from labctl.plan.loaded import Corner, LoadedPlan, PlannedStep  # noqa: F401

__all__ = ["check_plan", "load_plan", "parse_overrides"]


def load_plan(path: Any, overrides: dict[str, str] | None = None, fixture: Any = None) -> Any:
    from labctl.plan.loader import load_plan as _load

    return _load(path, overrides, fixture)


def check_plan(path: Any, overrides: dict[str, str] | None = None, fixture: Any = None) -> Any:
    from labctl.plan.loader import check_plan as _check

    return _check(path, overrides, fixture)


def parse_overrides(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    from labctl.plan.loader import parse_overrides as _parse

    return _parse(pairs)
