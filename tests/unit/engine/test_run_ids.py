"""Run ids are unique across a fleet of stations and sort by start time."""

from __future__ import annotations

import time

from labctl.engine.runner import new_run_id


def test_run_ids_do_not_collide_and_sort_by_time():
    ids = [new_run_id() for _ in range(200_000)]
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 24 and int(i, 16) >= 0 for i in ids)
    assert int(ids[0][:8], 16) <= int(time.time())
    earlier = f"{int(time.time()) - 3600:08x}" + "f" * 16
    assert earlier < new_run_id()
