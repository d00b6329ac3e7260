"""The bad-input sweep's harness: every call must end in a clear trustml_nb error that names the argument, or in a
correct result. Never NaN-laden output, a silent truncation, or a deep traceback from another library.

Each sweep test calls `expect_error` (the call must raise ValueError/TypeError from trustml_nb code, naming `arg`) or
`expect_ok` (the call must return something that passes `check`). Every outcome is recorded in OUTCOMES, and
`tests/conftest.py` prints the totals at the end of the run (number of calls, share of clear errors naming the
argument, silent wrong results, deep third-party tracebacks).
"""
from __future__ import annotations

import traceback
from pathlib import Path

import numpy as np
import pandas as pd

PACKAGE_DIR = (Path(__file__).resolve().parents[1] / 'trustml_nb').resolve()


def _package_dirs() -> tuple:
    "The package's source directories: this checkout's, and the imported package's (mutmut's mutants/ copy, an install)."
    import trustml_nb
    return tuple({PACKAGE_DIR, Path(trustml_nb.__file__).resolve().parent})
OUTCOMES: list = []   # (module, label, outcome) with outcome in CLEAR, CORRECT, SILENT, DEEP, UNNAMED, WRONG_TYPE, FAILED_CHECK
CLEAR, CORRECT, SILENT, DEEP, UNNAMED, WRONG_TYPE, FAILED_CHECK = ('clear error', 'correct result', 'silent wrong result',
    'deep traceback', 'error without the argument name', 'wrong exception type', 'result failed its check')


def _raised_in_package(exc: BaseException) -> tuple:
    "Whether the innermost frame of exc's traceback is in trustml_nb's own files; and that frame's file."
    frames = traceback.extract_tb(exc.__traceback__)
    # mutmut's trampolines sit between a caller and the function it calls: a call with a bad keyword fails in the trampoline,
    # where it would fail at the caller's line without mutmut, so trailing mutmut frames are skipped
    while frames and '/mutmut/' in frames[-1].filename.replace('\\', '/'): frames = frames[:-1]
    if not frames: return False, '?'
    last = Path(frames[-1].filename)
    try: ok = any(last.resolve().is_relative_to(d) for d in _package_dirs())
    except OSError: ok = False
    return ok, f"{last.name}:{frames[-1].lineno}"


def _record(module, label, outcome): OUTCOMES.append((module, label, outcome))


def expect_error(fn, *args, arg: str, module: str = '', case: str = '', exc=(ValueError, TypeError), **kwargs):
    "Call fn(*args, **kwargs): it must raise `exc` from trustml_nb code with `arg` in the message. Returns the exception."
    label = case or getattr(fn, '__name__', repr(fn))
    try: out = fn(*args, **kwargs)
    except exc as e:
        ok, where = _raised_in_package(e)
        if not ok:
            _record(module, label, DEEP)
            raise AssertionError(f"{label}: {type(e).__name__} raised outside trustml_nb (at {where}): {e}") from e
        if arg not in str(e):
            _record(module, label, UNNAMED)
            raise AssertionError(f"{label}: the error does not name {arg!r}: {type(e).__name__}: {e}") from e
        _record(module, label, CLEAR)
        return e
    except Exception as e:
        ok, where = _raised_in_package(e)
        _record(module, label, WRONG_TYPE if ok else DEEP)
        raise AssertionError(f"{label}: expected {exc} naming {arg!r}, got {type(e).__name__} at {where}: {e}") from e
    _record(module, label, SILENT)
    raise AssertionError(f"{label}: no error; the call returned {_short(out)}")


def expect_ok(fn, *args, check, module: str = '', case: str = '', **kwargs):
    "Call fn(*args, **kwargs): it must return a value for which check(value) is true (a correct result). Returns it."
    label = case or getattr(fn, '__name__', repr(fn))
    try: out = fn(*args, **kwargs)
    except Exception as e:
        ok, where = _raised_in_package(e)
        _record(module, label, WRONG_TYPE if ok else DEEP)
        raise AssertionError(f"{label}: expected a correct result, got {type(e).__name__} at {where}: {e}") from e
    if not check(out):
        _record(module, label, FAILED_CHECK)
        raise AssertionError(f"{label}: the result failed its check: {_short(out)}")
    _record(module, label, CORRECT)
    return out


def finite(x) -> bool:
    "True if x (number, array, Series or DataFrame) holds no NaN or infinity in its numeric parts."
    if isinstance(x, pd.DataFrame): x = x.select_dtypes('number').to_numpy()
    if isinstance(x, pd.Series): x = x.to_numpy()
    a = np.asarray(x, dtype=float)
    return bool(np.isfinite(a).all())


def _short(x) -> str:
    s = repr(x)
    return s if len(s) < 300 else s[:300] + '...'


def summary() -> dict:
    "Totals over every recorded call."
    n = len(OUTCOMES)
    counts = {}
    for _, _, o in OUTCOMES: counts[o] = counts.get(o, 0) + 1
    errors = n - counts.get(CORRECT, 0)
    return dict(calls=n, counts=counts, clear_share_of_errors=counts.get(CLEAR, 0) / errors if errors else 1.0,
                ok_share=(counts.get(CLEAR, 0) + counts.get(CORRECT, 0)) / n if n else 1.0)


# ---- shared bad values, for sweeps to draw from ------------------------------------------------------------------

def with_nan(a, i=0):
    "A float copy of a with NaN at position i (first axis)."
    a = np.array(a, dtype=float, copy=True); a.flat[i] = np.nan; return a


def with_inf(a, i=0):
    "A float copy of a with +inf at position i."
    a = np.array(a, dtype=float, copy=True); a.flat[i] = np.inf; return a
