"""``labctl agent``: serve one station of a lab (claim queued jobs, run them, heartbeat)."""

from __future__ import annotations

import sys

import click

from labctl.cli._common import db_option_callback


@click.command()
@click.option("--fixture", "-f", required=True, help="this station's fixture file")
@click.option("--db", required=True, callback=db_option_callback, envvar="LABCTL_DB", metavar="URL",
              help="the lab's database: postgresql://user@host/db (password from PGPASSFILE, PGSERVICE, PGPASSWORD or the URL)")
@click.option("--class", "classes", multiple=True, metavar="CLASS", help="take jobs queued for this station class (repeatable)")
@click.option("--heartbeat", type=click.FloatRange(min=0.2), default=5.0, show_default=True, help="seconds between heartbeats")
@click.option("--poll", type=click.FloatRange(min=0.1), default=5.0, show_default=True,
              help="seconds between looks at the queue (PostgreSQL also wakes agents at once)")
@click.option("--workdir", type=click.Path(file_okay=False), help="where job plans are written (default $LABCTL_HOME/agent/STATION)")
@click.option("--max-jobs", type=click.IntRange(min=1), help="stop after this many jobs")
@click.option("--exit-when-idle", is_flag=True, help="stop when the queue has nothing for this station")
@click.option("--time-scale", type=click.FloatRange(min=0, min_open=True), help="simulated stations: override sim.time_scale")
@click.option("--no-preflight", is_flag=True, help="skip the station pre-flight before each job (a bench left live is still made safe)")
@click.option("--allow-expired", is_flag=True, help="run on instruments whose calibration expired (recorded)")
def agent(fixture, db, classes, heartbeat, poll, workdir, max_jobs, exit_when_idle, time_scale, no_preflight,
          allow_expired) -> None:
    """Serve a station: register it, heartbeat, claim the next job for it (priority, then age),
    run it as `labctl run` would, record its outcome. SIGTERM/SIGINT abort a running job to the
    safe state and give it back to the queue; the next agent of this station resumes it."""
    from labctl.fleet.agent import Agent

    code = Agent(fixture, db, classes=list(classes), heartbeat_interval=heartbeat, poll=poll, workdir=workdir,
                 max_jobs=max_jobs, exit_when_idle=exit_when_idle, time_scale=time_scale,
                 preflight=not no_preflight, allow_expired=allow_expired,
                 say=lambda text: click.echo(text)).run()
    sys.exit(code)
