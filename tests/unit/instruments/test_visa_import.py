"""pyvisa is imported without numpy (start-up time), and that never stops anyone else importing numpy."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(code: str) -> str:
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


def test_pyvisa_is_imported_without_numpy_and_numpy_stays_importable():
    out = _run("""
        import sys
        from labctl.instruments.visa_import import import_pyvisa
        pyvisa = import_pyvisa()
        import pyvisa.util
        before = 'numpy' in sys.modules
        import numpy  # the refusal ended with pyvisa's import
        print(before, pyvisa.util.np is None, sys.meta_path[0].__class__.__name__ != '_RefuseToThread')
    """)
    assert out == "False True True"


def test_a_numpy_already_imported_is_used_by_pyvisa():
    out = _run("""
        import numpy
        from labctl.instruments.visa_import import import_pyvisa
        import_pyvisa()
        import pyvisa.util
        print(pyvisa.util.np is numpy)
    """)
    assert out == "True"


def test_only_the_importing_thread_is_refused():
    out = _run("""
        import threading
        from labctl.instruments.visa_import import _RefuseToThread

        finder = _RefuseToThread(("json",))
        seen = []
        def other():
            seen.append(finder.find_spec("json"))  # another thread: not refused (None = ask the next finder)
        t = threading.Thread(target=other); t.start(); t.join()
        try:
            finder.find_spec("json.decoder")
        except ModuleNotFoundError as err:
            seen.append(err.name)
        print(seen)
    """)
    assert out == "[None, 'json.decoder']"
