"""Limits that keep a hostile or broken plan or fixture from hanging labctl or eating memory.

Plans and fixtures come from colleagues, from other labs, from a mail attachment: they are
checked as untrusted input. Every limit below is far above what a real plan needs; crossing
one is a located error (``file:line:col``) that names the limit and, where raising it is
legitimate, the environment variable that raises it (see docs/plans.md, "Limits").

The limits are read from the environment each time a file is loaded (no process-global
state): ``InputLimits.from_env()``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

# environment variables for the limits a real, large plan may legitimately need raised
ENV_MAX_BYTES = "LABCTL_MAX_FILE_BYTES"
ENV_MAX_NODES = "LABCTL_MAX_YAML_NODES"
ENV_MAX_EXPANDED_STEPS = "LABCTL_MAX_EXPANDED_STEPS"

#: a plan or fixture file, in bytes (4 MiB: a 10,000-step plan written out in full, ~220 bytes
#: a step, is 2.2 MB; the bundled plans are 1-5 KiB)
MAX_BYTES = 4 << 20
#: YAML values after every alias and merge key is expanded (that 10,000-step plan has 280,000;
#: refusing a file of tiny values at this limit takes about 1 s and 170 MiB: bench/hostile_inputs.py)
MAX_NODES = 400_000
#: alias uses (``*name``) in one file
MAX_ALIASES = 1_000
#: nesting of mappings and lists (a plan is about 6 deep)
MAX_DEPTH = 64
#: digits in one number (YAML or expression); 1e308 is the largest finite double anyway
MAX_DIGITS = 100
#: steps after expansion over corners (setup + steps × corners + teardown); counted before
#: anything is expanded, so a sweep of 10⁹ corners is refused at once
MAX_EXPANDED_STEPS = 100_000
#: nesting of parentheses, ``not`` and signs in one ``${…}`` or ``when:`` expression
MAX_EXPR_DEPTH = 32
#: tokens (numbers, names, operators) in one expression
MAX_EXPR_TOKENS = 256


@dataclass(frozen=True)
class InputLimits:
    max_bytes: int = MAX_BYTES
    max_nodes: int = MAX_NODES
    max_aliases: int = MAX_ALIASES
    max_depth: int = MAX_DEPTH
    max_digits: int = MAX_DIGITS
    max_expanded_steps: int = MAX_EXPANDED_STEPS

    @classmethod
    def from_env(cls) -> InputLimits:
        return cls(
            max_bytes=_env_int(ENV_MAX_BYTES, MAX_BYTES),
            max_nodes=_env_int(ENV_MAX_NODES, MAX_NODES),
            max_expanded_steps=_env_int(ENV_MAX_EXPANDED_STEPS, MAX_EXPANDED_STEPS),
        )


def _env_int(name: str, default: int) -> int:
    text = os.environ.get(name, "").strip().replace("_", "")
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        return default
    return value if value > 0 else default


def raise_hint(env: str, value: int) -> str:
    """``"if the file is genuine, raise the limit: LABCTL_X=200000 labctl …"``."""
    return f"if the file is genuine, raise the limit: {env}={value * 4} labctl …"


def size_hint(size: int | None, limits: InputLimits) -> str:
    """Raise the limits a file of ``size`` bytes needs, at once: the size limit by the least
    factor of 4 that holds the file, the steps to run by the same factor, and the values to
    one per 4 bytes of the file at least (a plan written out in full has about one per 7), so
    a genuine long plan needs one retry, not three."""
    factor = 4
    while size is not None and limits.max_bytes * factor < size:
        factor *= 4
    nodes = max(limits.max_nodes * factor, (size or 0) // 4)
    return ("if the file is genuine, raise the limits with its size: "
            f"{ENV_MAX_BYTES}={limits.max_bytes * factor} {ENV_MAX_NODES}={nodes} "
            f"{ENV_MAX_EXPANDED_STEPS}={limits.max_expanded_steps * factor} labctl …")


def human_bytes(n: int) -> str:
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"
