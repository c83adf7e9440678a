"""What ``labctl tui`` was started with (the app's only settings; no process-global state)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class TuiConfig:
    fixture: str | None = None  # station file (None: the default simulated bench)
    db: str | None = None  # results database (None: the local SQLite file)
    plans: tuple[str, ...] = ()  # extra plan folders (--plans DIR), after the built-in testplans/
    watch: bool = False  # start in watch mode (runs in progress, read from the store)
    station: str | None = None  # watch: only this station
    all_stations: bool = False  # watch: every station writing to the database
    operator: str | None = None  # recorded with runs started here (default: login name)
    time_scale: float | None = None  # simulated bench: override the fixture's time scale (tests, demos)
    light: bool = False  # start with the light theme (terminals with a light background)
    poll_interval: float = 2.0  # seconds between station status polls
    extra: dict[str, str] = field(default_factory=dict)  # free room for screens added later
