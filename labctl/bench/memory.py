"""Memory of a long soak: 24 simulated hours of one sample a second through the run's
subscribers (recorder into SQLite, console) and the instrument session log.

``LABCTL_BENCH_SOAK_HOURS=48 python -m labctl.bench --only memory`` soaks longer and prints
every hour's RSS and heap block count."""

from __future__ import annotations

import gc
import io
import os
import socket
import sys
import time
from pathlib import Path

from labctl.bench import Row

#: the soak's length in simulated hours (default 24); set, every hour's reading is printed too
SOAK_HOURS_ENV = "LABCTL_BENCH_SOAK_HOURS"


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def rows(tmp: Path, quick: bool) -> list[Row]:
    from labctl.console import ConsoleReporter, make_console
    from labctl.engine import events as ev
    from labctl.instruments.sessionlog import SessionLog
    from labctl.instruments.station import SESSION_LOG_KEEP
    from labctl.launch import SessionLogPusher
    from labctl.store import open_store
    from labctl.store.recorder import Recorder, commit_window_from_env

    hours = 2 if quick else 24
    if (asked := os.environ.get(SOAK_HOURS_ENV, "").strip()).isdigit() and int(asked) >= 2:
        hours = int(asked)  # a longer soak, e.g. 48 h: is the heap's highest point still the same?
    verbose = bool(asked)
    run_id = f"soak-{os.getpid()}-{time.time_ns()}"
    log = SessionLog(max_records=SESSION_LOG_KEEP)
    marks: dict[int, float] = {}
    blocks: dict[int, int] = {}
    with open_store(str(tmp / "soak.db")) as store:
        recorder = Recorder(store, commit_window=commit_window_from_env())
        bus = ev.EventBus()
        bus.subscribe(SessionLogPusher(log, recorder))
        bus.subscribe(recorder)
        bus.subscribe(ConsoleReporter(make_console(file=io.StringIO())))
        t0 = time.time()
        bus.publish(ev.RunStarted(
            run_id=run_id, time=t0, plan_name="soak", plan_version="1", plan_hash="0" * 64, plan_text="",
            plan_path="soak", station="bench", dut_serial="BENCH", operator=None, labctl_version="0",
            host=socket.gethostname(), pid=os.getpid()))
        key = "steps/soak#1"
        bus.publish(ev.StepStarted(run_id=run_id, time=t0, step_key=key, step_id="soak", group="steps",
                                   check="thermal.soak"))
        for s in range(hours * 3600):
            log.record("chamber", "/dev/pts/x", "query", "TEMP?")
            log.record("chamber", "/dev/pts/x", "reply", "85.02", elapsed_s=0.001)
            bus.publish(ev.SampleRecorded(run_id=run_id, time=t0 + s, step_key=key, series="die_temp", value=85.0))
            if s % 10 == 0:
                bus.publish(ev.Progress(run_id=run_id, time=t0 + s, step_key=key, text=f"soak {s} s",
                                        fraction=s / (hours * 3600)))
            if (s + 1) % 3600 == 0:
                marks[(s + 1) // 3600] = rss_mib()
                gc.collect()  # live blocks, not cycles waiting for the collector (when it runs varies)
                blocks[(s + 1) // 3600] = sys.getallocatedblocks()
                if verbose:
                    print(f"    soak hour {(s + 1) // 3600}: RSS {marks[(s + 1) // 3600]:.0f} MiB, "
                          f"heap blocks {blocks[(s + 1) // 3600]:,}", flush=True)
        bus.publish(ev.StepEnded(run_id=run_id, time=t0 + hours * 3600, step_key=key, outcome=ev.StepOutcome.PASS))
        bus.publish(ev.RunEnded(run_id=run_id, time=time.time(), outcome=ev.RunOutcome.PASSED))
        recorder.close()
    first, last = marks[1], marks[hours]
    cache = 64  # MiB: SQLite's page cache (PRAGMA cache_size in labctl.store), filled as the file grows
    # Bounded buffers fill and are trimmed in chunks (the session log keeps its last records), so
    # the heap saw-tooths: compare the highest of the second half of the soak with the first's.
    half = hours // 2
    early, late = max(blocks[h] for h in range(1, half + 1)), max(blocks[h] for h in range(half + 1, hours + 1))
    heap = late / early
    return [
        Row(f"memory: RSS of a {hours} h soak (1 sample/s) after 1 h / {hours} h",
            f"bounded: ≤ 1 h + {cache} MiB page cache + 8 MiB", f"{first:.0f} / {last:.0f} MiB",
            max(last - first, 0.0) / (cache + 8)),
        Row(f"memory: Python heap blocks, highest of hours 1–{half} → of {half + 1}–{hours}", "flat (≤ +5 %)",
            f"{early:,} → {late:,}", max(heap - 1.0, 0.0) / 0.05),
    ]
