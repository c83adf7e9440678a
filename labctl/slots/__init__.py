"""Many boards at once: one orchestrator above the ordinary runner.

- :mod:`labctl.slots.selection` — ``--slots 1-4`` / ``all`` and ``--dut SN1,SN2`` parsed;
- :mod:`labctl.slots.leases` — fair, timed leases on shared instruments, taken in one global order;
- :mod:`labctl.slots.station` — the bench's shared instruments (one connection per address)
  and each slot's station (its own roles, the shared ones through leases);
- :mod:`labctl.slots.barrier` — steps on the shared environment run once for every live slot;
- :mod:`labctl.slots.runner` — the ordinary runner with the barrier in front of shared steps;
- :mod:`labctl.slots.orchestrator` — the abort controller, the signals, the slot threads,
  the shared chamber's safe state at the end;
- :mod:`labctl.slots.output` — console lines, JSON events with the slot, the summary table.
"""
