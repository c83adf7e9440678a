"""One exception tree for labctl.

Every error a user can meet derives from :class:`LabctlError`, carries structured fields
(where it happened and what to do about it) and also inherits the builtin exception it
resembles, so that ``except ValueError`` or ``except TimeoutError`` in user code still works.

The command line prints :meth:`LabctlError.format` and exits with :attr:`exit_code`; it
never shows a traceback for one of these.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path


class ExitCode(IntEnum):
    """Exit codes of ``labctl run`` (and of every other command, where they apply)."""

    PASSED = 0
    FAILED = 1  # a measurement missed its limits
    ERROR = 2  # the plan or an instrument broke during the run
    ABORTED = 3  # operator or safety monitor aborted
    BAD_INPUT = 4  # bad invocation, plan or fixture


@dataclass(frozen=True)
class Location:
    """A place in a source file (1-based line and column)."""

    file: str | None = None
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        parts = [self.file or "<input>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)


class LabctlError(Exception):
    """Root of every labctl error.

    Fields: ``message`` (what went wrong), ``file``/``line``/``column`` (where), ``hint``
    (what to do). ``str(err)`` is the one-line form ``file:line:col: message``.
    """

    exit_code: ExitCode = ExitCode.ERROR

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.file = str(file) if file is not None else None
        self.line = line
        self.column = column
        self.hint = hint
        super().__init__(message)

    @property
    def location(self) -> Location | None:
        if self.file is None and self.line is None:
            return None
        return Location(self.file, self.line, self.column)

    def __str__(self) -> str:
        loc = self.location
        return f"{loc}: {self.message}" if loc else self.message

    def format(self) -> str:
        """The operator-facing text: the one-line error plus an indented hint."""
        text = str(self)
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class PlanError(LabctlError, ValueError):
    """A test plan is malformed (bad YAML, unknown key, wrong type or unit, …)."""

    exit_code = ExitCode.BAD_INPUT


class FixtureError(LabctlError, ValueError):
    """A fixture (station) file is malformed or does not fit the plan."""

    exit_code = ExitCode.BAD_INPUT


class UnitError(LabctlError, ValueError):
    """A quantity has no unit where one is needed, an unknown unit, or the wrong dimension."""

    exit_code = ExitCode.BAD_INPUT


class ExpressionError(PlanError):
    """A ``${…}`` expression is malformed or names an undefined parameter."""


class ValidationErrors(LabctlError, ValueError):
    """Several errors found at once (a plan or fixture is checked as a whole)."""

    exit_code = ExitCode.BAD_INPUT

    def __init__(self, errors: list[LabctlError]) -> None:
        self.errors = list(errors)
        first = self.errors[0] if self.errors else None
        super().__init__(
            f"{len(self.errors)} problem(s) found",
            file=first.file if first else None,
        )

    def format(self) -> str:
        return "\n".join(e.format() for e in self.errors)


class UsageError(LabctlError, ValueError):
    """The command line itself is wrong (bad option value, missing file)."""

    exit_code = ExitCode.BAD_INPUT


class InstrumentError(LabctlError, RuntimeError):
    """An instrument misbehaved: an error in its queue, a garbage reply, a wrong identity."""

    exit_code = ExitCode.ERROR

    def __init__(
        self,
        message: str,
        *,
        instrument: str | None = None,
        resource: str | None = None,
        command: str | None = None,
        hint: str | None = None,
        **kw,
    ) -> None:
        self.instrument = instrument
        self.resource = resource
        self.command = command
        where = ", ".join(
            p
            for p in (
                f"instrument {instrument}" if instrument else "",
                f"at {resource}" if resource else "",
                f"command {command!r}" if command else "",
            )
            if p
        )
        super().__init__(f"{message} ({where})" if where else message, hint=hint, **kw)


class InstrumentTimeout(InstrumentError, TimeoutError):
    """An instrument did not answer within its timeout."""


class InstrumentDisconnected(InstrumentError, ConnectionError):
    """The connection to an instrument dropped or could not be opened."""


class LeaseTimeout(InstrumentError, TimeoutError):
    """A slot waited longer than its lease timeout for a shared instrument (another slot
    held it: a long operation, or the instrument hung)."""


class InstrumentReplyError(InstrumentError):
    """An instrument answered something that cannot be parsed."""


class SafetyTrip(LabctlError, RuntimeError):
    """A safety interlock tripped; the run goes to its safe state."""

    exit_code = ExitCode.ABORTED


class StoreError(LabctlError, RuntimeError):
    """The results store cannot be opened or written."""

    exit_code = ExitCode.ERROR


class RunNotFound(StoreError):
    """The command line names a run the store does not hold (or a prefix of several): a bad
    invocation, exit 4, as for a missing plan file."""

    exit_code = ExitCode.BAD_INPUT


class StoreReadOnly(StoreError, PermissionError):
    """A SQLite results file this process may not write (its folder or the file read-only) was
    given to a command that records: a bad invocation, refused before anything is powered."""

    exit_code = ExitCode.BAD_INPUT


class StoreUnreachable(StoreError, ConnectionError):
    """The results database could not be reached or opened (server down, network, rights):
    worth trying again later, unlike a schema this labctl cannot use."""


class StoreTimeout(StoreError, TimeoutError):
    """The results store did not answer within its bounded time (a stalled server or network):
    it is treated as failed, and results go to the local spool."""


class BenchBusy(LabctlError):
    """Another process drives an instrument of this bench (a run is in progress): nothing was
    recorded or powered. Fields: ``resource`` (the address), ``holder`` (pid, command, station,
    since: what the holder wrote when it took the bench)."""

    exit_code = ExitCode.ERROR

    def __init__(self, message: str, *, resource: str, holder: dict | None = None, hint: str | None = None) -> None:
        self.resource = resource
        self.holder = holder or {}
        super().__init__(message, hint=hint)


class AbortedBeforeStart(LabctlError):
    """A signal or an operator abort arrived before anything was powered: nothing ran."""

    exit_code = ExitCode.ABORTED
