"""The ``labctl`` command line.

One module per command group; each is imported only when its command runs, so that
``labctl --help`` stays fast (it must not import pandas, Textual, pyvisa or pint).
"""

from __future__ import annotations

import importlib
import sys

import click

from labctl import __version__

# command name -> "module:attribute"; the modules live beside this file.
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("labctl.cli.validate:validate", "Check test plans (and a fixture) before anything is powered."),
    "schema": ("labctl.cli.schema:schema", "Print the JSON Schema of plans or fixtures for editors."),
    "run": ("labctl.cli.run:run", "Run a test plan on a station (headless)."),
    "demo": ("labctl.cli.run:demo", "Run the flagship plan on the simulated lab for a few DUTs."),
    "resume": ("labctl.cli.run:resume", "Continue an interrupted run."),
    "rerun": ("labctl.cli.run:rerun", "Re-run steps of a finished run as a new run."),
    "runs": ("labctl.cli.runs:runs", "List and inspect recorded runs."),
    "sync": ("labctl.cli.runs:sync", "Push runs spooled locally to the central database."),
    "report": ("labctl.cli.report:report", "Export recorded runs: CSV, Parquet, xlsx, JUnit, JSON, OCP, HTML."),
    "stats": ("labctl.cli.stats:stats", "Yield, Cpk, failure Pareto, trends and comparisons of recorded runs."),
    "queue": ("labctl.cli.queue:queue", "Submit plans for the lab's stations; list and cancel jobs."),
    "agent": ("labctl.cli.agent:agent", "Serve one station: claim queued jobs and run them."),
    "stations": ("labctl.cli.stations:stations", "The lab's stations: state, heartbeat, run, calibration, queue."),
    "db": ("labctl.cli.db:db", "The results database's schema: status, explicit upgrade."),
    "sim": ("labctl.cli.sim:sim", "The simulated lab: serve virtual instruments and a DUT."),
    "instruments": ("labctl.cli.instruments:instruments", "Station pre-flight, scan and identify."),
    "tui": ("labctl.cli.tui:tui", "The terminal UI: station status, plans, live runs."),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        target, _ = COMMANDS[name]
        module_name, attr = target.split(":")
        return getattr(importlib.import_module(module_name), attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Short help comes from the table above, so --help imports no command module.
        rows = [(name, help_) for name, (_, help_) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="labctl")
def cli() -> None:
    """labctl: lab automation for hardware bring-up and validation.

    Test plans (YAML) drive thermal, link-quality and power checks on a station's
    instruments, or on the simulated lab. Exit codes: 0 passed, 1 failed, 2 error,
    3 aborted, 4 bad invocation or plan.
    """


def main(argv: list[str] | None = None) -> None:
    """Entry point: runs the CLI and turns labctl errors into one clean message and exit code."""
    from labctl.errors import ExitCode, LabctlError

    try:
        cli.main(args=argv, prog_name="labctl", standalone_mode=False)
    except LabctlError as err:
        from labctl.console import visible

        # (a message may quote an instrument's reply or a plan's text: shown, never run)
        click.echo(visible(f"error: {err.format()}" if not err.location else err.format()), err=True)
        sys.exit(int(err.exit_code))
    except click.exceptions.Exit as ex:
        sys.exit(ex.exit_code)
    except click.ClickException as ex:
        ex.show()
        sys.exit(int(ExitCode.BAD_INPUT))
    except click.Abort:
        click.echo("aborted", err=True)
        sys.exit(int(ExitCode.ABORTED))
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(int(ExitCode.ABORTED))
    sys.exit(0)
