"""``labctl sim``: serve the simulated lab of a fixture standalone."""

from __future__ import annotations

import click


@click.group()
def sim() -> None:
    """The simulated lab: virtual instruments and a virtual DUT on loopback and ptys."""


@sim.command()
@click.option("--fixture", "fixture_path", default="sim-bench.yaml", show_default=True,
              help="Fixture file (or the name of a built-in one).")
@click.option("--dut", "dut", default=None, help="Serial of the DUT on the bench (default: the fixture's sim.dut).")
@click.option("--time-scale", type=float, default=None, help="Override sim.time_scale (simulated s per wall s).")
def serve(fixture_path: str, dut: str | None, time_scale: float | None) -> None:
    """Serve every role of FIXTURE at the addresses written in it, until Ctrl-C or SIGTERM."""
    import signal
    import threading

    from labctl.errors import FixtureError, UsageError
    from labctl.fixture import load_fixture
    from labctl.sim.lab import SimulatedLab

    fixture = load_fixture(fixture_path)
    if time_scale is not None:
        if time_scale <= 0:
            raise UsageError("--time-scale must be > 0", hint="e.g. --time-scale 60")
        from labctl.sim.config import SimConfig

        cfg = fixture.sim or SimConfig()
        fixture = fixture.model_copy(update={"sim": cfg.model_copy(update={"time_scale": time_scale})})
    if not fixture.roles:
        raise FixtureError("the fixture has no roles to serve", file=fixture_path)
    lab = SimulatedLab(fixture, dut_serial=dut)
    stop = threading.Event()

    def _on_signal(signum: int, frame: object) -> None:
        stop.set()

    previous = {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        lab.start()
        scale = lab.clock.scale
        click.echo(f"simulated lab of station {fixture.station}: DUT {lab.dut_serial}, time x{scale:g}")
        for role, address in lab.addresses.items():
            binding = fixture.roles[role]
            click.echo(f"  {role:<8} {binding.driver:<18} {address}")
        click.echo("serving; Ctrl-C to stop", err=True)
        while not stop.wait(0.2):
            pass
    finally:
        lab.stop()
        for s, handler in previous.items():
            signal.signal(s, handler)
    click.echo("simulated lab stopped", err=True)
