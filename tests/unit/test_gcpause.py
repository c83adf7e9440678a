"""The collector settings a run executes under, and their restoration."""

from __future__ import annotations

import gc

from labctl.gcpause import RUN_GEN0_THRESHOLD, gc_paused, gc_settled


def test_a_run_sets_the_loaded_objects_aside_and_the_last_of_nested_runs_restores_the_collector():
    before = gc.get_threshold()
    loaded = [{"step": i} for i in range(1000)]  # the plan, alive before the run starts
    with gc_settled():
        assert gc.get_freeze_count() >= len(loaded)
        assert gc.get_threshold()[0] >= RUN_GEN0_THRESHOLD
        with gc_settled():  # a second slot's run in the same process
            pass
        assert gc.get_freeze_count() >= len(loaded), "the first run's setting ended with the second's"
        cycle: list = []
        cycle.append(cycle)
        del cycle
        assert gc.collect() >= 1, "cycles made during a run are still collected"
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_what_a_paused_block_keeps_goes_to_the_oldest_generation_and_nothing_stays_frozen():
    gc.collect()
    young = gc.get_stats()[0]["collections"]
    with gc_paused() as pause:
        kept = [{"step": i} for i in range(5000)]
        pause.kept = True
    assert gc.get_stats()[0]["collections"] == young, "a young collection walked everything the block built"
    assert gc.get_freeze_count() == 0
    cycle: list = [kept]
    cycle.append(cycle)
    del cycle, kept
    assert gc.collect() >= 1, "garbage cycles among what the block built are still collected"


def test_what_a_paused_block_does_not_keep_is_collected_as_usual():
    gc.collect()
    young = gc.get_stats()[0]["collections"]
    with gc_paused():
        cycles = [[] for _ in range(5000)]
        for c in cycles:
            c.append(c)
        del cycles, c
        [{} for _ in range(1000)]
    [{} for _ in range(1000)]
    assert gc.get_stats()[0]["collections"] > young
    # (< 5000, not == 0: other threads of a test session may leave garbage of their own meanwhile)
    assert gc.collect() < 5000, "the young collection after the block did not find the 5,000 cycles"
