"""The profile-driven driver: turns a profile's templates into commands and parses replies.

``ProfileDriver(profile, transport)`` offers ``get``/``set``/``call`` by property and action
name, ``identify()``, ``drain_errors()`` and ``safe_state()``. Role implementations (in
``labctl.instruments.impl``) sit on top of it; checks never see it.
"""

from __future__ import annotations

import math
import re
import string
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from labctl.errors import (
    InstrumentDisconnected,
    InstrumentError,
    InstrumentReplyError,
    InstrumentTimeout,
)
from labctl.instruments.parsers import ReplyParseError, parse_reply, quoted, to_bool, to_int
from labctl.instruments.profile import Action, ErrorQueue, Profile, Property, SafeAction
from labctl.instruments.roles import InstrumentErrorEntry
from labctl.instruments.transports.base import Transport

_SCPI_ERROR = re.compile(r'^\s*([+-]?\d+)\s*,\s*"?(.*?)"?\s*$')


class RangeError(InstrumentError, ValueError):
    """A value outside what the instrument (profile) accepts; nothing was sent."""


class InstrumentCommandError(InstrumentError):
    """The instrument answered a command with an error line (console-style instruments)."""

    def __init__(self, message: str, *, reply: str = "", **kw: Any) -> None:
        self.reply = reply
        super().__init__(message, **kw)


@dataclass(frozen=True)
class Identity:
    manufacturer: str
    model: str
    serial: str
    firmware: str
    raw: str

    def __str__(self) -> str:
        return f"{self.manufacturer} {self.model} s/n {self.serial} fw {self.firmware}"


_CHANNEL_FIELDS = frozenset({"ch", "id", "chs"})


class ProfileDriver:
    def __init__(self, profile: Profile, transport: Transport, *, options: dict[str, Any] | None = None) -> None:
        self.profile = profile
        self.transport = transport
        self.variables: dict[str, Any] = {**profile.defaults, **(options or {})}
        self._get_commands: dict[tuple[str, Any], str] = {}  # (property, channel) -> query, see get()
        spec = profile.transport
        self._reply_end = re.compile(spec.reply_end) if spec.reply_end else None
        self._reply_error = re.compile(spec.reply_error) if spec.reply_error else None
        self._echo = spec.echo

    @property
    def name(self) -> str:
        return self.transport.name

    # ------------------------------------------------------------------ plumbing
    def open(self) -> ProfileDriver:
        with self.transport.lock:  # two threads opening one role send the init commands once
            was_open = self.transport.is_open
            self.transport.open()
            if not was_open:
                for cmd in self.profile.transport.init:
                    self.write(self.render(cmd))
        return self

    def close(self) -> None:
        self.transport.close()

    def write(self, command: str) -> None:
        with self.transport.lock:
            if self._reply_end is not None:  # console style: every command is answered
                self._exchange(command)
                return
            self.transport.write(command)
            if self.profile.transport.echo:
                self.transport.read()

    def query(self, command: str) -> str:
        transport = self.transport
        seen = transport.timeouts
        with transport.lock:
            transport.not_hung_meanwhile(command, seen)
            if self._reply_end is not None:  # delimited replies; a console may print on its own
                return self._exchange(command)
            reply = transport.query(command)
            if self._echo and reply.strip() == command.strip():
                reply = transport.read()
            if transport.pending():
                self._extra_lines(command, reply)
            return reply

    def _extra_lines(self, command: str, reply: str) -> None:
        """A one-line answer followed by more lines is garbage: the next query would read a stale one."""
        extra: list[str] = []
        while self.transport.pending() and len(extra) < self.profile.transport.max_reply_lines:
            extra.append(self.transport.read())
        raise InstrumentReplyError(f"extra reply line(s) {quoted(str(extra))} after {quoted(reply)}", instrument=self.name,
                                   resource=self.transport.resource, command=command)

    def _waiting_before(self, command: str) -> None:
        """Lines already received before ``command`` is sent. A whole reply among them (up to
        its end line: an earlier answer sent twice, or late) is garbage that would shift every
        later answer by one: an error, with what came. Text the console printed on its own (a
        boot banner, a log line) is only noted."""
        stale: list[str] = []
        limit = self.profile.transport.max_reply_lines
        while self.transport.pending() and len(stale) < limit:
            stale.append(self.transport.read())
        assert self._reply_end is not None
        if any(self._reply_end.search(line) for line in stale):
            raise InstrumentReplyError(f"reply line(s) {quoted(str(stale))} were waiting before {command!r} was sent "
                                       "(an earlier reply came twice, or late)", instrument=self.name,
                                       resource=self.transport.resource, command=command)

    def _exchange(self, command: str) -> str:
        """Send a command, read lines up to the end line; raise on an error end line."""
        spec = self.profile.transport
        if self.transport.pending():
            self._waiting_before(command)
        budget = spec.reply_budget or 3 * self.transport.timeout
        deadline = time.monotonic() + budget
        line = self.transport.query(command)
        if spec.echo and line.strip() == command.strip():
            line = self.transport.read()
        end = self._reply_end.search
        lines = [line]
        if not end(line):
            lines += self.transport.read_until(end, spec.max_reply_lines - 1, deadline)
        line = lines.pop()
        if not end(line):
            lines.append(line)
            if len(lines) >= spec.max_reply_lines:
                raise InstrumentReplyError(f"no end line after {spec.max_reply_lines} lines", instrument=self.name,
                                           resource=self.transport.resource, command=command)
            raise InstrumentTimeout(f"reply did not end within {budget:g} s ({len(lines)} lines so far)",
                                    instrument=self.name, resource=self.transport.resource, command=command)
        err = self._reply_error.search(line) if self._reply_error else None
        if err:
            message = err.group(1) if err.groups() else line
            raise InstrumentCommandError(f"instrument refused the command: {message.strip()}",
                                         instrument=self.name, resource=self.transport.resource,
                                         command=command, reply="\n".join([*lines, line]))
        return "\n".join(lines)

    # ---------------------------------------------------------------- channels
    def channel(self, channel: str | int | None) -> str:
        """The canonical id of a channel given as ``1``, ``"101"`` or ``"(@101)"``."""
        return self.profile.channel_id(channel, self.name)

    def channel_text(self, channel: str | int | None) -> str:
        return self.profile.channels.format.format(id=self.channel(channel))

    def channels_text(self, channels: Iterable[str | int]) -> str:
        ch = self.profile.channels
        ids = ch.list_separator.join(self.channel(c) for c in channels)
        return ch.list_format.format(ids=ids)

    # --------------------------------------------------------------- templates
    def render(self, template: str, *, channel: str | int | None = None, channels: Sequence[str | int] | None = None,
               value: Any = None, **kw: Any) -> str:
        fields = _fields(template)
        env: dict[str, Any] = dict(self.variables)
        if "ch" in fields:
            env["ch"] = self.channel_text(channel)
        if "id" in fields:
            env["id"] = self.channel(channel)
        if "chs" in fields:
            env["chs"] = self.channels_text(channels or [])
        env["value"] = value
        env.update(kw)
        try:
            return template.format(**env)
        except (KeyError, IndexError, ValueError) as err:
            raise InstrumentError(f"profile template {template!r} cannot be filled: {err}",
                                  instrument=self.name, hint=f"fix {self.profile.path or self.profile.name}") from None

    def _prop(self, name: str) -> Property:
        try:
            return self.profile.properties[name]
        except KeyError:
            raise InstrumentError(f"profile {self.profile.name} has no property {name!r}", instrument=self.name) from None

    # -------------------------------------------------------------- properties
    def get(self, name: str, channel: str | int | None = None, **kw: Any) -> Any:
        prop = self._prop(name)
        if prop.get is None:
            raise InstrumentError(f"property {name!r} is write-only", instrument=self.name)
        key = (name, channel)
        command = None if kw else self._get_commands.get(key)
        if command is None:
            command = self.render(prop.get, channel=channel, **kw)
            if not kw and _fields(prop.get) <= _CHANNEL_FIELDS:  # no variable in it: the same every time
                self._get_commands[key] = command
        reply = self.query(command)
        return self.parse(prop, reply, command)

    def set(self, name: str, value: Any, channel: str | int | None = None, **kw: Any) -> None:
        prop = self._prop(name)
        if prop.set is None:
            raise InstrumentError(f"property {name!r} is read-only", instrument=self.name)
        wire = self._to_wire(name, prop, value, channel)
        with self.transport.lock:  # a multi-command set is not interleaved with other threads
            for template in prop.set if isinstance(prop.set, list) else [prop.set]:
                self.write(self.render(template, channel=channel, value=wire, **kw))

    def check_setting(self, name: str, value: Any, channel: str | int | None = None) -> None:
        """Raise the :class:`RangeError` that :meth:`set` would, sending nothing: a check
        that changes several settings asks before it changes any."""
        prop = self._prop(name)
        if prop.set is None:
            raise InstrumentError(f"property {name!r} is read-only", instrument=self.name)
        self._to_wire(name, prop, value, channel)

    def parse(self, prop: Property | Action, reply: str, command: str) -> Any:
        try:
            value = parse_reply(reply, prop.parse or "str", values=prop.values, pattern=prop.pattern, item=prop.item)
        except ReplyParseError as err:
            raise InstrumentReplyError(str(err), instrument=self.name, resource=self.transport.resource,
                                       command=command) from None
        if isinstance(prop, Property):
            if not prop.overload_ok and _overload(value):
                raise InstrumentReplyError(f"overload/invalid reading {quoted(reply)}", instrument=self.name,
                                           resource=self.transport.resource, command=command)
            if prop.mask is not None:
                value = bool(to_int(str(value)) & prop.mask)
            if prop.invalid_above is not None and isinstance(value, float) and value > prop.invalid_above:
                raise InstrumentReplyError(f"overload/invalid reading {quoted(reply)}", instrument=self.name,
                                           resource=self.transport.resource, command=command)
            if prop.scale is not None and isinstance(value, int | float) and not isinstance(value, bool):
                value = value * prop.scale
        return value

    def _to_wire(self, name: str, prop: Property, value: Any, channel: str | int | None) -> Any:
        if prop.values:
            for wire, val in prop.values.items():
                if val == value or str(val).upper() == str(value).upper():
                    return wire
            raise RangeError(f"{name}: {value!r} is not one of {list(prop.values.values())}", instrument=self.name)
        if prop.parse == "bool":
            return int(bool(value))
        if prop.parse in ("float", "int") or prop.range is not None:
            try:
                number = float(value)
            except (TypeError, ValueError):
                raise RangeError(f"{name}: expected a number, got {value!r}", instrument=self.name) from None
            span = prop.outside(number, self.channel(channel) if channel is not None or self.profile.channels.default
                                else None)
            if span is not None:
                unit = f" {prop.unit}" if prop.unit else ""
                where = f" on channel {channel}" if channel is not None else ""
                raise RangeError(f"{name} {number:g}{unit} is outside {span}{where}",
                                 instrument=self.name, hint="nothing was sent; check the plan's value")
            return int(number) if prop.parse == "int" else number
        return value

    # ----------------------------------------------------------------- actions
    def call(self, name: str, channel: str | int | None = None, channels: Sequence[str | int] | None = None,
             **kw: Any) -> Any:
        try:
            action = self.profile.actions[name]
        except KeyError:
            raise InstrumentError(f"profile {self.profile.name} has no action {name!r}", instrument=self.name) from None
        result: Any = None
        with self.transport.lock:
            for template in action.commands:
                command = self.render(template, channel=channel, channels=channels, **kw)
                if command.rstrip().endswith("?"):
                    reply = self.query(command)
                    result = self.parse(action, reply, command) if action.parse else reply
                else:
                    self.write(command)
        return result

    # --------------------------------------------------------- identity/errors
    def identify(self) -> Identity:
        ident = self.profile.identity
        raw = self.query(ident.query)
        if ident.pattern:
            m = re.search(ident.pattern, raw)
            groups = m.groupdict() if m else {}
        else:
            parts = [p.strip() for p in raw.split(",")]
            parts += [""] * (4 - len(parts))
            groups = dict(zip(("manufacturer", "model", "serial", "firmware"), parts[:4], strict=True))
        return Identity(
            manufacturer=groups.get("manufacturer") or "",
            model=groups.get("model") or "",
            serial=groups.get("serial") or "",
            firmware=groups.get("firmware") or "",
            raw=raw,
        )

    def identity_matches(self, found: Identity) -> bool:
        ident = self.profile.identity
        if not re.fullmatch(ident.model, found.model, re.IGNORECASE):
            return False
        return ident.manufacturer is None or bool(re.fullmatch(ident.manufacturer, found.manufacturer, re.IGNORECASE))

    def drain_errors(self, *, after_timeout: bool = False) -> list[InstrumentErrorEntry]:
        """Read every error source until empty: at most ``max_reads`` reads each (no endless loop).
        After a timed-out exchange the queue is not asked (it would only wait once more) unless
        ``after_timeout``: a query the instrument refused to answer (a channel it does not have)
        left its error there, and whoever holds the instrument must read it now."""
        if self.transport.silent and not after_timeout and any(spec.style != "none" for spec in self.profile.errors):
            # its last answer timed out: asking for the error queue would only wait once more
            raise InstrumentTimeout("error queue not read: the instrument did not answer the last exchange",
                                    instrument=self.name, resource=self.transport.resource)
        entries: list[InstrumentErrorEntry] = []
        for spec in self.profile.errors:
            if spec.style == "scpi":
                entries += self._drain_scpi(spec)
            elif spec.style == "bitmask":
                entries += self._read_bits(spec)
        return entries

    def _read_bits(self, spec: ErrorQueue) -> list[InstrumentErrorEntry]:
        reply = self.query(spec.query)
        try:
            word = to_int(reply) & ~spec.ignore
        except ReplyParseError:
            raise InstrumentReplyError(f"error word {quoted(reply)} is not a number", instrument=self.name,
                                       command=spec.query) from None
        found = [InstrumentErrorEntry(bit, text, self.name) for bit, text in sorted(spec.bits.items()) if word & bit]
        unknown = word & ~sum(spec.bits)
        if unknown:
            found.append(InstrumentErrorEntry(unknown, f"{spec.query} reports unknown bits {unknown}", self.name))
        if found and spec.clear:
            self.write(spec.clear)
        return found

    def _drain_scpi(self, spec: ErrorQueue) -> list[InstrumentErrorEntry]:
        entries: list[InstrumentErrorEntry] = []
        for _ in range(spec.max_reads):
            reply = self.query(spec.query)
            m = _SCPI_ERROR.match(reply)
            if not m:
                raise InstrumentReplyError(f"error queue reply {quoted(reply)} is not code,\"message\"",
                                           instrument=self.name, command=spec.query)
            code = int(m.group(1))
            if code == 0:
                return entries
            entries.append(InstrumentErrorEntry(code, m.group(2), self.name))
        entries.append(InstrumentErrorEntry(0, f"error queue still not empty after {spec.max_reads} reads", self.name))
        return entries

    def safe_state(self) -> list[str]:
        """Send the profile's safe-state actions, then read back what each one's ``verify`` names.

        Every command is tried even when an earlier one failed (channel 3 still goes off
        when channel 2 timed out). Returns what was sent and what was read back; raises
        :class:`SafeStateUnconfirmed` when a read-back shows another state (``wrong``) or
        cannot be made, or a command failed and nothing read back proves the state anyway.
        """
        check = _SafeCheck(self)
        for action in self.profile.safe_state:
            check.run(action)
        return check.finish()

    def targets(self, template: str) -> list[str | None]:
        """The channels a template is filled for: every channel when it names one, else once."""
        if not ({"ch", "id"} & _fields(template)):
            return [None]
        ch = self.profile.channels
        return list(ch.ids) or [ch.default]


class SafeStateUnconfirmed(InstrumentError):
    """A safe state that cannot be confirmed: ``wrong`` when a read-back shows another state."""

    def __init__(self, message: str, *, wrong: bool, done: list[str], **kw: Any) -> None:
        self.wrong = wrong
        self.done = done
        super().__init__(message, **kw)


class _SafeCheck:
    """One role's safe state: the commands sent, the read-backs, and what went wrong."""

    def __init__(self, driver: ProfileDriver) -> None:
        self.driver = driver
        self.done: list[str] = []
        self.wrong: list[str] = []
        self.unconfirmed: list[str] = []
        self.silent: InstrumentError | None = None  # it stopped answering: no more read-backs
        self.skipped: list[str] = []  # read-backs not tried because it stopped answering

    def run(self, action: SafeAction) -> None:
        d = self.driver
        failed: list[tuple[str, InstrumentError]] = []
        for template in action.send:
            for ch in d.targets(template):
                command = d.render(template, channel=ch)
                try:
                    self._send(command)
                    self.done.append(command)
                except InstrumentError as err:
                    failed.append((command, err))
        confirmed = bool(action.verify)
        for name, expected in action.verify.items():
            seen: dict[str, list[str]] = {}  # value read back -> channels
            for ch in d.targets(d.profile.properties[name].get or ""):
                got = self._read_back(name, expected, ch, action.tolerance)
                confirmed &= got is not None
                if got is not None:
                    seen.setdefault(got, []).append(ch or "")
            for shown, chs in seen.items():
                on = f" on channel{'s' if len(chs) > 1 else ''} {','.join(chs)}" if any(chs) else ""
                self.done.append(f"{name} = {shown}{on} (read back)")
        if failed:
            command, err = failed[0]
            more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
            if confirmed:
                self.done.append(f"{command!r} failed{more} ({err.message}), but the read-back confirms the state")
            else:
                self.unconfirmed.append(f"{command!r} failed{more}: {err.message}")

    def _send(self, command: str) -> None:
        """A safe-state command may be sent again after a reconnect (it only makes things safer)."""
        try:
            self.driver.write(command)
        except InstrumentDisconnected:
            if not self.driver.transport.is_open:
                raise
            self.driver.write(command)

    def _read_back(self, name: str, expected: Any, ch: str | None, tolerance: float) -> str | None:
        """The value read back as shown, when it is the expected one; else None (and why is kept)."""
        d = self.driver
        where = f"channel {ch} {name}" if ch is not None else name
        want = _expected(d, expected)
        if self.silent is not None:
            self.skipped.append(where)
            return None
        try:
            got = d.get(name, ch)
        except InstrumentError as err:
            self.unconfirmed.append(f"{where} could not be read back (expected {_show(want)}): {err.message}")
            if isinstance(err, InstrumentTimeout | InstrumentDisconnected):
                self.silent = err
            return None
        if not _same(got, want, tolerance):
            self.wrong.append(f"{where} reads {_show(got)}, expected {_show(want)}")
            return None
        return _show(got)

    def finish(self) -> list[str]:
        problems = self.wrong + self.unconfirmed
        if self.skipped:
            problems.append(f"not read back either, as it stopped answering: {', '.join(self.skipped)}")
        if not problems:
            return self.done
        err = SafeStateUnconfirmed("; ".join(problems), wrong=bool(self.wrong), done=self.done,
                                   hint="check the instrument by hand: the bench may be unsafe")
        err.instrument, err.resource = self.driver.name, self.driver.transport.resource
        raise err


def _expected(driver: ProfileDriver, expected: Any) -> Any:
    return driver.render(expected) if isinstance(expected, str) and "{" in expected else expected


def _same(got: Any, want: Any, tolerance: float) -> bool:
    if isinstance(got, bool) or isinstance(want, bool):
        try:
            return bool(got) == (to_bool(want) if isinstance(want, str) else bool(want))
        except ReplyParseError:
            return False
    if isinstance(got, int | float):
        try:
            return math.isclose(float(got), float(want), rel_tol=1e-9, abs_tol=tolerance)
        except (TypeError, ValueError):
            return False
    return str(got).strip().upper() == str(want).strip().upper()


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


OVERLOAD = 9.9e37  # SCPI: +9.9E37 overload, 9.91E37 not-a-number


def _overload(value: Any) -> bool:
    if isinstance(value, float):
        return abs(value) >= OVERLOAD
    if isinstance(value, list | tuple | dict):  # a table of readings: one loop, no call per float
        for v in value.values() if isinstance(value, dict) else value:
            if v.__class__ is float:
                if v >= OVERLOAD or v <= -OVERLOAD:
                    return True
            elif _overload(v):
                return True
    return False


@lru_cache(maxsize=1024)
def _fields(template: str) -> frozenset[str]:
    return frozenset(f for _, f, _, _ in string.Formatter().parse(template) if f)
