"""``labctl demo --slots N``: the flagship plan on N boards at once in the simulated rack."""

from __future__ import annotations

from labctl.errors import ExitCode, UsageError
from labctl.launch import RunRequest

RACKS = (("sim-rack4.yaml", 4), ("sim-rack.yaml", 16))


def run_slots_demo(*, plan: str, fixture: str | None, db: str | None, slots: int, verbose: bool,
                   time_scale: float | None) -> ExitCode:
    from labctl.console import make_console
    from labctl.demo import labctl_command
    from labctl.fixture import load_fixture
    from labctl.slots.cli_run import run_with_output
    from labctl.slots.output import slots_table

    if fixture is None:
        fixture = next((name for name, n in RACKS if slots <= n), None)
        if fixture is None:
            raise UsageError(f"--slots {slots}: the shipped simulated racks hold at most {RACKS[-1][1]} boards",
                             hint="give --fixture with more slots")
    fx = load_fixture(fixture)
    if slots < 1 or slots > len(fx.slots):
        raise UsageError(f"--slots {slots}: station {fx.station} has {len(fx.slots)} slot(s)",
                         hint=f"use 1 to {len(fx.slots)}")
    console = make_console()
    chosen = ",".join(s.id for s in fx.slots[:slots])
    marginal = [f"slot {s.id}" for s in fx.slots[:slots]
                if fx.sim and fx.sim.duts.get(fx.sim.slots.get(s.id, "")) and fx.sim.duts[fx.sim.slots[s.id]].faults]
    console.print(f"[bold]labctl demo[/]: plan [cyan]{plan}[/] on {slots} slot(s) of the simulated rack "
                  f"[cyan]{fx.station}[/] (time ×{time_scale or (fx.sim.time_scale if fx.sim else 1):g}); "
                  "one chamber and one DAQ shared by every board"
                  + (f"; faulty boards in {', '.join(marginal)}" if marginal else ""))
    req = RunRequest(plan=plan, fixture=fixture, db=db, time_scale=time_scale)
    out = run_with_output(req, chosen, None, 60.0, False, verbose=verbose, console=console)
    console.print(slots_table(out))
    for note in out.notes:
        console.print(note, style="yellow", markup=False)
    moves = ", ".join(f"{key} ×{n}" for key, n in out.shared_runs.items())
    if moves:
        console.print(f"shared steps (run once for every slot): {moves}", markup=False)
    if out.db:
        cmd, _activate = labctl_command()
        console.print(f"results are in {out.db}: `{cmd} runs` lists them", markup=False)
    return out.exit_code if out.exit_code is ExitCode.ABORTED else ExitCode.PASSED
