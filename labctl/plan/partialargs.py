"""What a step's limits are checked against when some of its arguments are broken.

A step with a bad argument (``samples: lots``) still has limits worth checking, and what the
check measures mostly follows from the arguments that are right (``rails: [VDD_CORE]``).
:func:`measurable_args` builds the check's arguments from those, without the broken ones, so
that the limits' mistakes are reported beside the argument's (all problems at once).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from labctl.errors import LabctlError


def measurable_args(loaded: Any, step: Any, corner: Any, spec: Any) -> Any | None:
    """The check's arguments for ``step`` at ``corner`` without its broken ones, or None when
    what the check measures depends on a broken one (its measurements then are not known)."""
    path = (*loaded.step_path(step), "args")
    try:
        env = loaded.env(corner)
    except LabctlError:
        return None
    rendered: dict[str, Any] = {}
    for key, value in step.args.items():
        try:
            rendered[key] = loaded.render(value, (*path, key), env)
        except LabctlError:
            continue
    bad = set(step.args) - set(rendered)
    try:
        spec.args.model_validate(rendered)
    except ValidationError as err:
        bad |= {e["loc"][0] for e in err.errors() if e["loc"]}
    fields = {k: v for k, v in rendered.items() if k not in bad and k in spec.args.model_fields}
    try:
        args = spec.args.model_validate(fields)
    except ValidationError:  # a required argument is broken, or the arguments disagree
        args = spec.args.model_construct(**fields)
    for key in bad:
        args.__dict__.pop(key, None)  # read by measurements(): AttributeError, not a default
    try:
        args.measurements()
    except Exception:  # noqa: BLE001 - it reads a broken argument: the measurements are unknown
        return None
    return args
