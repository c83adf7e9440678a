"""A results file named by mistake: reading commands never make a new, empty database out of a
typo (and then answer "no runs recorded"), and an empty ``--db ''`` (a script's unset
variable) is refused instead of recording in the default file."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("command", [["runs"], ["runs", "show", "r-1"], ["stats", "--plan", "smoke"],
                                     ["report", "-F", "csv", "-o", "out.csv"], ["stations"], ["queue", "list"],
                                     ["queue", "show", "1"], ["queue", "cancel", "1"]])
def test_reading_a_results_file_that_is_not_there_is_an_error_and_makes_no_file(labctl, tmp_path, command):
    typo = tmp_path / "reslts.db"
    res = labctl(*command, "--db", str(typo), cwd=tmp_path)
    assert res.returncode != 0, res.stdout
    assert f"cannot read the results database {typo}: there is no such file" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
    assert not typo.exists()


def test_an_empty_db_option_is_refused_whatever_labctl_db_says(labctl, tmp_path, monkeypatch):
    monkeypatch.setenv("LABCTL_DB", str(tmp_path / "lab.db"))
    for command in (["runs"], ["run", "smoke.yaml", "--fixture", "sim-bench.yaml"]):
        res = labctl(*command, "--db", "")
        assert res.returncode == 4, res.stdout + res.stderr
        assert "--db is empty" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "lab.db").exists()


def test_sync_from_a_spool_that_is_not_there_is_an_error(labctl, tmp_path):
    res = labctl("sync", "--spool", str(tmp_path / "spoool.db"))
    assert res.returncode == 4 and "there is no such file" in res.stderr, res.stdout + res.stderr
    assert not (tmp_path / "spoool.db").exists()


def test_db_status_of_a_file_that_is_not_there_or_not_a_database_says_so(labctl, tmp_path):
    res = labctl("db", "status", "--db", str(tmp_path / "nothere.db"))
    assert res.returncode == 2 and "there is no such file" in res.stderr, res.stdout + res.stderr
    assert not (tmp_path / "nothere.db").exists()
    (tmp_path / "notes.db").write_text("hello\n")
    res = labctl("db", "status", "--db", str(tmp_path / "notes.db"))
    assert res.returncode == 2 and "file is not a database" in res.stderr, res.stderr  # was: DatabaseError
    res = labctl("db", "status", "--db", "postgresql://u:s3cret@127.0.0.1:1/x")
    assert res.returncode == 2 and "Connection refused" in res.stderr and "s3cret" not in res.stderr, res.stderr
