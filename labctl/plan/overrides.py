"""``--set NAME=VALUE``: a parameter overridden from the command line (docs/plans.md,
"Parameters and expressions").

A value must fit the parameter as the plan declares it: a quantity of the same dimension,
a number for a number, true/false for true/false, one of the ``choices``; for a text
parameter the value is the text as typed (``--set serial=0042`` keeps its zeros). Each
refusal names the ``--set`` option as it was given and points at the parameter's
declaration (``plan.yaml:6:3``), with what to write in the hint.

A mixin of the loader's checking context: it uses ``self.errors``, ``self.pos`` and
``self.display`` from there.
"""

from __future__ import annotations

from typing import Any

from labctl.errors import LabctlError, UnitError, UsageError
from labctl.plan.expr import Template, kind_of, show_value
from labctl.plan.source import Pos, load_yaml, suggest
from labctl.units import Quantity, looks_like_quantity, parse_quantity

REFUSED = object()  # a --set value already reported


def parse_overrides(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """``["vin=11.4 V", "quick=true"]`` -> dict (the last of a name wins); a pair without
    ``=`` or without a name is a usage error naming the option."""
    out: dict[str, str] = {}
    for pair in pairs:
        name, eq, value = pair.partition("=")
        name, value = name.strip(), value.strip()
        if not eq or not name:
            raise UsageError(f"--set {pair!r}: expected NAME=VALUE",
                             hint="name a parameter of the plan and its value, e.g. --set vin=11.4V")
        out[name] = value
    return out


class Overrides:
    """``--set`` values checked against the declared parameters (``errors``/``pos``/
    ``display`` come from the loader's context)."""

    errors: list[LabctlError]
    display: str
    pos: Any

    def apply_overrides(self, overrides: dict[str, str], values: dict[str, Any],
                        default_path: dict[str, Any]) -> list[tuple[str, str, Template, str]]:
        """Put each fitting override in ``values`` (its ``default_path`` becomes None: an
        override has no position in the file); report each one that does not fit. Returns the
        overrides of computed parameters (``vlow: ${vin * 0.9}``), whose kind is known only once
        the parameters are resolved: give them to :meth:`check_computed` then."""
        computed = []
        for name, text in overrides.items():
            option = f"--set {name}={_shorter(text)}"
            if name not in values:
                self._unknown(option, name, text, values)
                continue
            new = self._override_value(option, name, text)
            if new is REFUSED:
                continue
            old = values[name]
            if isinstance(old, Template) and not isinstance(new, Template):
                computed.append((name, option, old, text))
            new = _fitted(old, new, text)
            if new is REFUSED:
                self._misfit(option, name, old, _read(text))
                continue
            values[name] = new
            default_path[name] = None
        return computed

    def check_computed(self, computed: list[tuple[str, str, Template, str]], resolved: dict[str, Any]) -> None:
        """An override of a computed parameter must fit what the plan computes for it
        (``--set vlow=3A`` where ``vlow: ${vin * 0.9}`` is a voltage)."""
        for name, option, template, text in computed:
            env = {k: v for k, v in resolved.items() if v is not None and k != name}
            try:
                declared = template.render(env)
            except LabctlError:
                continue  # it uses a broken or computed-away parameter: nothing to hold it to
            new = _fitted(declared, resolved.get(name), text)
            if new is REFUSED:
                self._misfit(option, name, declared, _read(text))
                resolved[name] = declared  # the plan's own value: no further error from a refused one
            else:
                resolved[name] = new

    def set_error(self, option: str, name: str, message: str, hint: str | None) -> None:
        """An error about ``option``, at the declaration of parameter ``name``."""
        where = self.pos(("parameters", name), key=True)
        self.errors.append(_located(where, self.display, f"{option}: {message}", hint))

    def _unknown(self, option: str, name: str, text: str, values: dict[str, Any]) -> None:
        close = suggest(name, values)
        msg = f"the plan has no parameter {name!r}" + (f"; did you mean {close!r}?" if close else "")
        if close:
            hint = f"write --set {close}={_shorter(text)}"
        elif values:
            hint = "the plan's parameters: " + ", ".join(values)
        else:
            hint = "the plan declares no parameters: add it under parameters: to make it settable"
        where = self.pos(("parameters",), key=True) if values else None
        self.errors.append(_located(where, self.display, f"{option}: {msg}", hint))

    def _misfit(self, option: str, name: str, old: Any, new: Any) -> None:
        shown = new if isinstance(new, Quantity) else repr(new)
        kind = kind_of(old).removeprefix("a ").removeprefix("an ")
        msg = f"{shown} does not fit {name} (default {show_value(old)}, {_article(kind)})"
        if isinstance(old, bool):
            hint = f"write --set {name}=true or --set {name}=false"
        elif isinstance(old, Quantity) and old.unit and old.is_ratio:
            hint = f"write a plain number or a percentage, e.g. --set {name}={old.magnitude:g}%"
        elif isinstance(old, Quantity) and old.unit:
            hint = f"give it in a unit of {old.dimension.replace('_', ' ')}, e.g. --set {name}='{old}'"
        else:
            hint = f"write a number without a unit, e.g. --set {name}={show_value(old)}"
        self.set_error(option, name, msg, hint)

    def _override_value(self, option: str, name: str, text: str) -> Any:
        """A ``--set`` value read by the plan's own YAML rules and limits (only true/false
        are booleans; no tags, aliases loops or 5000-digit numbers); text if it is no YAML."""
        if not text:
            return ""
        try:
            parsed, _, bad = load_yaml("--set", text=text, display=f"--set {name}", error_cls=UsageError)
        except LabctlError as err:
            if err.message.startswith("bad YAML"):
                return text  # e.g. "a: b: c": taken as the text it is
            bad = [err]
        if bad:
            self.set_error(option, name, bad[0].message, bad[0].hint)
            return REFUSED
        if isinstance(parsed, str) and "${" in parsed:
            return Template(parsed)
        if isinstance(parsed, str) and looks_like_quantity(parsed):
            try:
                q = parse_quantity(parsed)
            except UnitError as err:
                self.set_error(option, name, err.message, err.hint)
                return REFUSED
            return q.magnitude if not q.unit else q
        return parsed


def _fitted(old: Any, new: Any, text: str) -> Any:
    """``new`` as the value of a parameter whose declared value is ``old``, or REFUSED."""
    if old is None or isinstance(old, Template) or isinstance(new, Template):
        return new  # no declared kind to hold it to (null, or computed from others)
    number = isinstance(new, int | float) and not isinstance(new, bool)
    if isinstance(old, bool):
        return new if isinstance(new, bool) else REFUSED
    if isinstance(old, str):
        return text  # text is what was typed: 0042 stays 0042, true stays the word
    if isinstance(old, Quantity) and old.unit and old.dimension == "ratio":
        if number:
            return Quantity(float(new), "")  # a bare number is a plain ratio (0.1 = 10 %), as in a plan
        return new if isinstance(new, Quantity) and new.compatible("ratio") else REFUSED
    if isinstance(old, Quantity) and old.unit and old.dimension == "time" and number:
        return Quantity(float(new), "s")  # durations take a bare number of seconds (docs/plans.md)
    if isinstance(old, Quantity) and old.unit:
        return new if isinstance(new, Quantity) and new.compatible(old.dimension) else REFUSED
    if isinstance(old, int | float | Quantity):  # a plain number
        if number:
            return new
        return new if isinstance(new, Quantity) and not new.unit else REFUSED
    return new


def _read(text: str) -> Any:
    """The refused value as shown in the message (a quantity as a quantity)."""
    try:
        return parse_quantity(text) if looks_like_quantity(text) else text
    except LabctlError:
        return text


def _shorter(text: str) -> str:
    return text if len(text) <= 40 else text[:39] + "…"


def _article(kind: str) -> str:
    if kind in ("text", "true/false"):
        return kind
    return ("an " if kind[:1] in "aeiou" else "a ") + kind


def _located(pos: Pos | None, display: str, message: str, hint: str | None) -> UsageError:
    if pos is None:
        return UsageError(message, file=display, hint=hint)
    return UsageError(message, file=pos.file, line=pos.line, column=pos.column, hint=hint)
