"""Plant the deliberate bugs of issues 15 and 33 (nine in all) one at a time in a scratch copy of the package and run the default tests.

Each mutant is a one-line edit of a generated module (trustml_nb/*.py) in a copy of the repository under a temporary
folder; the copy's tests run with the copy first on sys.path (the slow tests stay skipped, as in `make test`). A mutant
is KILLED when at least one of its tests fails. Before the mutants, the unmutated copy must pass the same tests.

    .venv/bin/python tools/plant_mutants.py            # all nine; writes benchmarks/results/mutants.md and .csv
    .venv/bin/python tools/plant_mutants.py --only pse_se_x085

A pattern that no longer matches (the module was rewritten) is reported as 'pattern not found', never as killed.
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# name: (module, text to find (must occur exactly once), replacement, what the bug is, the default tests that should see it)
MUTANTS = {
    'pse_effect_se_x085': (
        'trustml_nb/pse.py',
        "        if phi is not None: return float(phi.std() / np.sqrt(n))",
        "        if phi is not None: return float(0.85 * phi.std() / np.sqrt(n))",
        'effect standard errors multiplied by 0.85',
        ['tests/test_pse.py']),
    'pse_propensity_in_sample': (
        'trustml_nb/pse.py',
        "return clone(L['propensity']).fit(H[tr], x[tr]).predict_proba(H[te])[:, 1]",
        "return clone(L['propensity']).fit(H, x).predict_proba(H[te])[:, 1]",
        'propensities fitted on every row (in-sample) instead of the training folds',
        ['tests/test_pse.py']),
    'pse_clip_ignored': (
        'trustml_nb/pse.py',
        "propensities=[np.clip(q, clip, 1 - clip) for q in raw]",
        "propensities=[np.asarray(q) for q in raw]",
        'propensity clipping ignored',
        ['tests/test_pse.py']),
    'conformal_no_n_plus_1': (
        'trustml_nb/omniprediction.py',
        "k = int(np.ceil((len(s) + 1) * (1 - alpha)))",
        "k = int(np.ceil(len(s) * (1 - alpha)))",
        "the 'max' conformal quantile without its (n + 1) correction",
        ['tests/test_omniprediction.py']),
    'dropped_rows_once_per_line': (
        'trustml_nb/core.py',
        "registry = None if every_time else f.f_globals.setdefault('__warningregistry__', {})",
        "registry = f.f_globals.setdefault('__warningregistry__', {})",
        "DroppedRowsWarning shown once per line (the package's every-time behaviour removed)",
        ['tests/test_core.py']),
    # issue 33, item 9: four planted bugs that survived the default tests before it
    'oath_detection_se_x085': (
        'trustml_nb/oath.py',
        "    se = np.sqrt(exact * (1 - exact) / m)",
        "    se = 0.85 * np.sqrt(exact * (1 - exact) / m)",
        "the OATH detection study's standard error multiplied by 0.85",
        ['tests/test_oath.py']),
    'mifpo_ece_abs_after_sum': (
        'trustml_nb/mifpo.py',
        "return float(np.abs(np.bincount(b, weights=y - p, minlength=n_bins)).sum() / len(y))",
        "return float(np.abs(np.bincount(b, weights=y - p, minlength=n_bins).sum()) / len(y))",
        'ScoreReport.calibration_error with abs taken after summing the bins',
        ['tests/test_mifpo.py']),
    'monoculture_bootstrap_wrong_quantiles': (
        'trustml_nb/monoculture.py',
        "lo, hi = (1 - level) / 2, (1 + level) / 2",
        "lo, hi = 1 - level, level",
        'bootstrap interval at the (1 - level, level) quantiles instead of the central percentile interval',
        ['tests/test_monoculture.py']),
    'quere_majority_on_test': (
        'trustml_nb/quere.py',
        "majority = int(y[~test].mean() >= 0.5)",
        "majority = int(y[test].mean() >= 0.5)",
        "QueRE's majority baseline chosen on the held-out labels instead of the training labels",
        ['tests/test_quere.py']),
}

IGNORE = shutil.ignore_patterns('.git', '.venv', '__pycache__', '*.pyc', 'test-output', '_docs', '_html', '.ipynb_checkpoints',
                                '.pytest_cache', 'mutants')


def _copy(dest: Path):
    shutil.copytree(ROOT, dest, ignore=IGNORE, symlinks=True)
    os.symlink(ROOT / '.venv', dest / '.venv')


def _pytest(where: Path, tests: list, log: Path, select: str = '') -> tuple:
    env = {**os.environ, 'PYTHONPATH': str(where), 'TRUSTML_NB_PROGRESS': '0', 'MPLBACKEND': 'Agg'}
    env.pop('TRUSTML_NB_SLOW', None)
    cmd = [sys.executable, '-m', 'pytest', '-n', '0', '-p', 'no:cacheprovider', '-q', '-x', '--no-header', *(['-k', select] if select else []), *tests]
    t0 = time.time()
    with open(log, 'w') as fh: rc = subprocess.call(cmd, cwd=where, env=env, stdout=fh, stderr=subprocess.STDOUT)
    tail = [l for l in log.read_text().splitlines() if l.strip()]
    failed = [l.split(' ')[1] for l in tail if l.startswith('FAILED ')]
    return rc, time.time() - t0, (failed[0] if failed else (tail[-1] if tail else ''))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--only', nargs='*', default=None, help='mutant names (default: all)')
    ap.add_argument('--select', default='', help="pytest -k expression: run only these tests of each mutant's files (a quick re-check)")
    ap.add_argument('--out', default=str(ROOT / 'benchmarks' / 'results' / 'mutants'), help='results path without extension')
    args = ap.parse_args()
    names = args.only or list(MUTANTS)
    rows = []
    with tempfile.TemporaryDirectory(prefix='trustml_mutants_') as tmp:
        work = Path(tmp) / 'repo'
        _copy(work)
        tests = sorted({t for n in names for t in MUTANTS[n][4]})
        rc, secs, last = _pytest(work, tests, Path(tmp) / 'baseline.log', args.select)
        print(f"baseline (no mutant): {' '.join(tests)} -> rc={rc} in {secs:.0f}s: {last}", flush=True)
        if rc != 0: sys.exit(f"the unmutated copy fails its tests; fix that first (log: {Path(tmp) / 'baseline.log'})")
        for name in names:
            mod, find, repl, what, mtests = MUTANTS[name]
            path = work / mod
            text = path.read_text()
            count = text.count(find)
            if count != 1:
                rows.append(dict(mutant=name, module=mod, bug=what, tests=' '.join(mtests), status=f'pattern not found ({count} matches)',
                                 first_failure='', seconds=0.0))
                print(f"{name}: pattern not found ({count} matches)", flush=True); continue
            path.write_text(text.replace(find, repl))
            try: rc, secs, first = _pytest(work, mtests, Path(tmp) / f'{name}.log', args.select)
            finally: path.write_text(text)
            status = 'KILLED' if rc == 1 else ('SURVIVED' if rc == 0 else f'error rc={rc}')
            rows.append(dict(mutant=name, module=mod, bug=what, tests=' '.join(mtests), status=status, first_failure=first, seconds=round(secs, 1)))
            print(f"{name}: {status} in {secs:.0f}s (first failing test: {first})", flush=True)
    out = Path(args.out)
    with open(out.with_suffix('.csv'), 'w', newline='') as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0])); w.writeheader(); w.writerows(rows)
    load = os.getloadavg()
    lines = ['# Planted mutants (issues 15 and 33): the default tests against nine deliberate bugs', '',
             f'`{Path(sys.executable).relative_to(ROOT) if str(sys.executable).startswith(str(ROOT)) else "python"} tools/plant_mutants.py`; '
             f'the unmutated copy passed the same tests first. Load average at the end: {load[0]:.2f}.'
             + (f' Only the tests selected by `-k "{args.select}"`.' if args.select else ''), '',
             '| mutant | bug | tests run | result | first failing test | seconds |', '|---|---|---|---|---|---|']
    lines += [f"| {r['mutant']} | {r['bug']} | {r['tests']} | {r['status']} | {r['first_failure']} | {r['seconds']} |" for r in rows]
    killed = sum(r['status'] == 'KILLED' for r in rows)
    lines += ['', f'{killed} of {len(rows)} mutants killed.']
    out.with_suffix('.md').write_text('\n'.join(lines) + '\n')
    print(f"{killed} of {len(rows)} killed; wrote {out.with_suffix('.md')}")
    sys.exit(0 if killed == len(rows) else 1)


if __name__ == '__main__':
    main()
