"""`labctl run --junit` when the stored run cannot be read back: the run's verdict stands, a
note says how to make the report later (no traceback)."""

from __future__ import annotations

from types import SimpleNamespace

from labctl.cli.run import _write_junit


def test_a_report_that_cannot_be_written_is_a_note_not_a_traceback(tmp_path):
    from labctl.store import open_store

    db = tmp_path / "results.db"  # an empty store: the run is not in it
    open_store(str(db)).close()
    out = SimpleNamespace(result=SimpleNamespace(run_id="r-43"), db=f"sqlite:///{db}", saved=True)
    note = _write_junit(out, str(tmp_path / "run.xml"), str(db))
    assert note.startswith("JUnit XML not written: no run 'r-43'") and "labctl report r-43" in note
