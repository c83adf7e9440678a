"""Where the built-in data folders (drivers/, fixtures/, testplans/) are found.

In a source checkout or an editable install they are the folders at the top of the
repository; in a wheel they are shipped as ``labctl/_data/<name>``.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
DATA_FOLDERS = ("drivers", "fixtures", "testplans")


def data_dir(name: str) -> Path:
    """Return the folder holding the built-in ``drivers``, ``fixtures`` or ``testplans``."""
    if name not in DATA_FOLDERS:
        raise ValueError(f"unknown data folder {name!r}; expected one of {DATA_FOLDERS}")
    installed = _PACKAGE / "_data" / name
    if installed.is_dir():
        return installed
    return _PACKAGE.parent / name


def builtin_file(folder: str, name: str) -> Path:
    """A file among the built-in data, e.g. ``builtin_file("fixtures", "sim-bench.yaml")``."""
    return data_dir(folder) / name


def resolve_data_path(path: str | Path, folder: str) -> Path:
    """Resolve a user-given path: as written if it exists, else among the built-in ``folder``.

    ``labctl validate testplans/smoke.yaml`` works from the checkout, and
    ``labctl validate smoke.yaml`` or ``testplans/smoke.yaml`` works from anywhere after
    ``pip install .``.
    """
    p = Path(path)
    if p.exists():
        return p
    for candidate in (data_dir(folder) / p, data_dir(folder) / p.name):
        if candidate.exists():
            return candidate
    return p
