"""A lab of many stations on one PostgreSQL database (docs/lab.md).

* :mod:`labctl.fleet.queue` — the job queue (``jobs``): submit, claim with ``SKIP LOCKED``,
  finish, release, cancel, and reaping jobs of dead agents;
* :mod:`labctl.fleet.registry` — the station registry (``stations``): registration and
  heartbeats, the view ``labctl stations`` shows;
* :mod:`labctl.fleet.agent` — ``labctl agent``: one station's loop (claim, run or resume, record);
* :mod:`labctl.fleet.wake` — ``LISTEN/NOTIFY`` wake-ups.

Schema changes of the shared database: :mod:`labctl.store.migrate` and ``labctl db``.
"""
