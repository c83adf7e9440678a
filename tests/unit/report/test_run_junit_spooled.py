"""`labctl run --junit/--report` build the files from the store; when the results were spooled
instead (the database failed during the run) they write nothing and say how to make them later."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from labctl.cli.run import _export_stored


@pytest.mark.parametrize(("fmt", "name"), [("junit", "run.xml"), ("html", "run.html")])
def test_spooled_results_give_a_note_instead_of_a_report(tmp_path, fmt, name):
    out = SimpleNamespace(result=SimpleNamespace(run_id="r-42"), db="postgresql://lab@db/results", saved=False)
    target = tmp_path / name
    written, note = _export_stored(out, fmt, str(target), None)
    assert written is None and not target.exists()
    assert "labctl sync" in note and f"labctl report r-42 --format {fmt} -o {target}" in note
