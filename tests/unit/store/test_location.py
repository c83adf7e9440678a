"""Where the results database is, and how --db values become URLs."""

from __future__ import annotations

from pathlib import Path

import pytest

from labctl.errors import UsageError
from labctl.store.location import default_spool_path, display_url, resolve_db


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for var in ("LABCTL_DB", "LABCTL_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return monkeypatch


def test_default_is_a_sqlite_file_under_local_share(clean_env, tmp_path):
    assert resolve_db() == f"sqlite:///{tmp_path.resolve()}/.local/share/labctl/results.db"


def test_labctl_home_then_labctl_db_then_explicit_value_win(clean_env, tmp_path):
    clean_env.setenv("LABCTL_HOME", str(tmp_path / "home"))
    assert resolve_db() == f"sqlite:///{(tmp_path / 'home').resolve()}/results.db"
    assert default_spool_path() == tmp_path / "home" / "spool.db"
    clean_env.setenv("LABCTL_DB", str(tmp_path / "env.db"))
    assert resolve_db().endswith("/env.db")
    assert resolve_db(tmp_path / "explicit.db").endswith("/explicit.db")


def test_relative_paths_become_absolute(clean_env, tmp_path):
    clean_env.chdir(tmp_path)
    assert resolve_db("r.db") == f"sqlite:///{Path(tmp_path).resolve()}/r.db"


@pytest.mark.parametrize("given, want", [
    ("postgresql://u@db.lab/results", "postgresql+psycopg://u@db.lab/results"),
    ("postgres://u@db.lab/results", "postgresql+psycopg://u@db.lab/results"),
    ("postgresql+psycopg://u@h/r", "postgresql+psycopg://u@h/r"),
    ("sqlite:////var/lib/labctl/r.db", "sqlite:////var/lib/labctl/r.db"),
])
def test_urls(given, want):
    assert resolve_db(given) == want


def test_unknown_scheme_is_a_usage_error_with_a_hint():
    with pytest.raises(UsageError) as err:
        resolve_db("mysql://x@y/z")
    assert "postgresql://" in err.value.hint


def test_display_url_hides_the_password():
    assert display_url("postgresql+psycopg://ana:s3cret@db/r") == "postgresql+psycopg://ana:***@db/r"
