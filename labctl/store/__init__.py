"""The results store: schema, recorder (an event-bus subscriber), queries into pandas.

    from labctl.store import open_store, Recorder
    store = open_store()                 # --db / $LABCTL_DB / ~/.local/share/labctl/results.db
    bus.subscribe(recorder := Recorder(store))
    ...
    store.resume_info(run_id)            # what `labctl resume` needs
    from labctl.store import query
    query.measurements(store, plan="power-smoke")   # a pandas DataFrame

Importing this package imports SQLAlchemy, so command modules import it lazily.
"""

from __future__ import annotations

from labctl.store.location import default_db_path, labctl_home, resolve_db
from labctl.store.recorder import Recorder
from labctl.store.store import CutOffStep, ResumeInfo, Store, open_store, split_step_key

__all__ = [
    "CutOffStep",
    "Recorder",
    "ResumeInfo",
    "Store",
    "default_db_path",
    "labctl_home",
    "open_store",
    "resolve_db",
    "split_step_key",
]
