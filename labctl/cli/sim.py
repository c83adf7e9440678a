"""``labctl sim``: serve the simulated lab of a fixture standalone."""

from __future__ import annotations

import math

import click

from labctl.cli._common import not_empty


@click.group()
def sim() -> None:
    """The simulated lab: virtual instruments and a virtual DUT on loopback and ptys."""


@sim.command()
@click.option("--fixture", "fixture_path", default="sim-bench.yaml", show_default=True,
              help="Fixture file (or the name of a built-in one).")
@click.option("--dut", "dut", default=None, callback=not_empty,
              help="Serial of the DUT on the bench (default: the fixture's sim.dut).")
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
        from labctl.fixture.loader import TIME_SCALE_RANGE

        lo, hi = TIME_SCALE_RANGE
        if not math.isfinite(time_scale) or not lo <= time_scale <= hi:
            raise UsageError(f"--time-scale {time_scale:g}: it must lie between {lo:g} and {hi:g} (as sim.time_scale)",
                             hint="e.g. --time-scale 60")
        from labctl.sim.config import SimConfig

        cfg = fixture.sim or SimConfig()
        fixture = fixture.model_copy(update={"sim": cfg.model_copy(update={"time_scale": time_scale})})
    if not fixture.roles:
        raise FixtureError("the fixture has no roles to serve", file=fixture_path)
    lab = SimulatedLab(fixture, dut_serial=dut)
    from labctl.signals import SignalRelay

    stop = threading.Event()

    # stop.set() in a thread of its own: in a handler it could deadlock on the lock stop.wait holds
    with SignalRelay((signal.SIGINT, signal.SIGTERM), lambda _signum: stop.set(), name="labctl-sim-signals"):
        try:
            lab.start()
            scale = lab.clock.scale
            from labctl.sim.faults import describe_dut

            if lab.rack is not None:
                click.echo(f"simulated lab of station {fixture.station}: {len(lab.rack.bays)} boards in one chamber, "
                           f"time x{scale:g}")
                for slot, bay in lab.rack.bays.items():
                    click.echo(f"  slot {slot:<4} DUT {bay.dut.serial} ({describe_dut(bay.dut.variant, bay.dut.faults)})")
            else:
                what = describe_dut(lab.bench.dut.variant, lab.bench.dut.faults)
                click.echo(f"simulated lab of station {fixture.station}: DUT {lab.dut_serial} ({what}), time x{scale:g}")
            drivers = {role: b.driver for role, b in fixture.roles.items()}
            drivers.update({f"{s.id}/{role}": b.driver for s in fixture.slots for role, b in s.roles.items()})
            for role, address in lab.addresses.items():
                click.echo(f"  {role:<8} {drivers[role]:<18} {address}")
            if lab.control_path:
                click.echo(f"  control  (labctl sim state|inject|clear|dut) {lab.control_path}")
            click.echo("serving; Ctrl-C to stop", err=True)
            while not stop.wait(0.2):
                pass
        finally:
            lab.stop()
    click.echo("simulated lab stopped", err=True)


def _control(fixture_path: str, request: dict) -> dict:
    from labctl.fixture import load_fixture
    from labctl.sim.control import control_request, default_control_path

    fixture = load_fixture(fixture_path)
    return control_request(default_control_path(fixture), request)


def _show(state: dict, as_json: bool) -> None:
    import json

    from labctl.sim.faults import describe_dut

    if as_json:
        click.echo(json.dumps(state, indent=2))
        return
    t = state["temperatures"]
    rails = "  ".join(f"{n} {r['V']:.4f} V {r['A']:.2f} A" for n, r in state["rails"].items())
    power = "powered" if state["powered"] else "off"
    if state["latched"]:
        power = f"shut down ({state['latched']}) until VIN is cycled"
    click.echo(f"DUT {state['dut']} ({describe_dut(state['variant'], state['dut_faults'])}): {power}, "
               f"VIN {state.get('vin', 0.0):.3f} V at the board, load {state['workload_percent']:g} %"
               f"{', THROTTLED' if state['throttled'] else ''}")
    click.echo(f"  die {t['die']:.1f} degC  hbm {t['hbm']:.1f}  vrm {t['vrm']:.1f}  lid {t['lid']:.1f}  "
               f"air {t['air']:.1f} (setpoint {state['chamber']['setpoint']:g})")
    click.echo(f"  {rails}")
    click.echo(f"  board faults: {', '.join(state['dut_faults']) or 'none'}")
    click.echo(f"  instrument faults: {_instrument_faults(state['faults']) or 'none'}")
    if state.get("slots"):
        click.echo(f"  (the board above is slot {state['slot']}'s; --slot ID shows another)")
        for sid, b in state["slots"].items():
            board = f"{b['dut']} ({describe_dut(b.get('variant', 'golden'), b.get('dut_faults', []))})"
            faults = _instrument_faults(b.get("faults", {}))
            click.echo(f"  slot {sid:<4} DUT {board:<24} {'powered' if b['powered'] else 'off':<8} "
                       f"supply output {'ON' if b['psu_output_on'] else 'off':<4} die {b['die']:.1f} degC"
                       f"{f'  instrument faults: {faults}' if faults else ''}")


def _instrument_faults(faults: dict[str, list[str]]) -> str:
    """``psu: scpi_error, dmm: instrument_timeout``."""
    return ", ".join(f"{role}: {'/'.join(kinds)}" for role, kinds in faults.items())


_FIXTURE = click.option("--fixture", "fixture_path", default="sim-bench.yaml", show_default=True,
                        help="Fixture of the served lab.")
_JSON = click.option("--json", "as_json", is_flag=True, help="Print the bench state as JSON.")
_SLOT = click.option("--slot", default=None, help="A rack's slot (its board is shown; `dut` puts the DUT there, "
                                                   "`inject` the fault: a board fault on a rack needs it).")


@sim.command()
@_FIXTURE
@_JSON
@_SLOT
def state(fixture_path: str, as_json: bool, slot: str | None) -> None:
    """Show the state of a served simulated lab (board, rails, temperatures, faults)."""
    _show(_control(fixture_path, {"op": "state", "slot": slot}), as_json)


@sim.command()
@_FIXTURE
@_JSON
@_SLOT
@click.argument("fault")
@click.argument("params", nargs=-1)
def inject(fixture_path: str, as_json: bool, slot: str | None, fault: str, params: tuple[str, ...]) -> None:
    """Inject FAULT into a served lab, e.g. `labctl sim inject disconnect role=bert after=3`,
    or into one slot of a rack: `labctl sim inject --slot 2 dead_rail rail=VDD_HBM`."""
    import yaml

    from labctl.errors import UsageError

    spec: dict = {"fault": fault}
    for item in params:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"fault parameter {item!r} is not KEY=VALUE", hint="e.g. role=dmm after=5")
        spec[key] = yaml.safe_load(value)
    _show(_control(fixture_path, {"op": "inject", "fault": spec, "slot": slot}), as_json)


@sim.command()
@_FIXTURE
@_JSON
@click.option("--role", default=None, help="Only this role's instrument faults.")
def clear(fixture_path: str, as_json: bool, role: str | None) -> None:
    """Remove the faults injected into a served lab: instrument faults and board faults (each
    board is again the DUT its fixture describes), or with --role only that role's instrument faults."""
    _show(_control(fixture_path, {"op": "clear", "role": role}), as_json)


@sim.command()
@_FIXTURE
@_JSON
@_SLOT
@click.argument("serial", callback=not_empty)
def dut(fixture_path: str, as_json: bool, slot: str | None, serial: str) -> None:
    """Put the DUT SERIAL on the served bench, or in one slot of a rack (its variant/faults
    come from sim.duts)."""
    _show(_control(fixture_path, {"op": "dut", "serial": serial, "slot": slot}), as_json)
