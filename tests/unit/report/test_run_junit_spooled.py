"""`labctl run --junit` builds the file from the store; when the results were spooled instead
(the database failed during the run) it writes nothing and says how to make it later."""

from __future__ import annotations

from types import SimpleNamespace

from labctl.cli.run import _write_junit


def test_spooled_results_give_a_note_instead_of_a_junit_file(tmp_path):
    out = SimpleNamespace(result=SimpleNamespace(run_id="r-42"), db="postgresql://lab@db/results", saved=False)
    target = tmp_path / "run.xml"
    note = _write_junit(out, str(target), None)
    assert not target.exists()
    assert "labctl sync" in note and f"labctl report r-42 --format junit -o {target}" in note

