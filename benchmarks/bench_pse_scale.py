"""Path-specific effects at scale (issue 38, item 3): the full effects table (TE, NDE, NIE, VDE, NIE*, TV; DR + SN; default
learners, 5 folds) of `PathSpecificEffects` on the oximetry simulator at 200,000 and 1,000,000 rows: wall time, CPU time
and peak memory, and a breakdown against the floor of fitting the nuisance learners alone.

Two fresh Python processes per size, one after the other:
  * breakdown (n_jobs=1, everything in one process): the learners' fit, predict and predict_proba are wrapped with timers
    (CPU seconds of the process, so the shares do not move with the machine's load). floor = CPU seconds inside the
    learners' fit calls, each distinct nuisance model once (the same learners, rows and targets as the estimator: "fitting
    the nuisances once per fold and nothing else"); a repeated fit (same learner, same rows, same target) is counted as
    overhead. overhead = (estimator CPU - floor) / floor. The held-out predictions every cross-fitted estimator needs
    (each model on its test fold, each nested regression on the next stage's rows) are shown separately, and a second
    ratio counts them into the floor.
  * parallel (n_jobs=2, the 2-core target): wall and CPU seconds (process + joblib workers), peak resident memory summed
    over the process and its workers (sampled every 0.1 s).
Both print a digest of the effects table: equal digests = identical numbers (n_jobs does not change results).
Targets: 1,000,000 rows in <= 10 min and <= 4 GB peak on 2 cores; overhead above the bare nuisance fits <= 25%.
The load average is recorded beside every run; on a shared machine wall times are upper bounds, CPU seconds and ratios
are the figures to compare. Re-measure on a quiet machine with:
    nice -n 10 .venv/bin/python benchmarks/bench_pse_scale.py            # 200000 and 1000000 rows
    nice -n 10 .venv/bin/python benchmarks/bench_pse_scale.py 200000     # one size
    nice -n 10 .venv/bin/python benchmarks/bench_pse_scale.py 1000000:2  # one size, the parallel run only (1000000:1: the breakdown only)
(writes benchmarks/results/pse_scale.md and pse_scale.csv, or to $PSE_BENCH_OUT; PSE_BENCH_APPEND=1 keeps the CSV's earlier runs)
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import psutil

OUT = Path(os.environ.get("PSE_BENCH_OUT", Path(__file__).parent / "results"))
CHILD = r'''
import os, sys, time, hashlib, json
os.environ["TRUSTML_NB_PROGRESS"] = "0"
import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier as HC, HistGradientBoostingRegressor as HR
n, n_jobs, instrument = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == '1'
acc = dict(fit=0.0, predict=0.0, fits=0, predicts=0, fit_wall=0.0)
seen, repeated = set(), [0.0, 0]
def timed(cls, name):
    f = getattr(cls, name)
    def wrapper(self, X, *a, **k):
        c0, w0 = time.process_time(), time.perf_counter()
        try: return f(self, X, *a, **k)
        finally:
            dt = time.process_time() - c0
            if name == 'fit':
                key = (cls.__name__, X.shape, float(X[:, 0].sum()), float(X[:, -1].sum()), float(np.asarray(a[0]).sum()))
                if key in seen: repeated[0] += dt; repeated[1] += 1
                seen.add(key); acc['fit'] += dt; acc['fits'] += 1; acc['fit_wall'] += time.perf_counter() - w0
            else: acc['predict'] += dt; acc['predicts'] += 1
    setattr(cls, name, wrapper)
if instrument:
    for cls in (HC, HR):
        for name in ('fit', 'predict') + (('predict_proba',) if cls is HC else ()): timed(cls, name)
from trustml_nb.pse import PathSpecificEffects
from trustml_nb.pse_simulator import sim_oximetry
sim = sim_oximetry(n, seed=0); R = sim.roles
est = PathSpecificEffects(exposure=R['x'], covariates=R['z'], mediators_first=R['w'], mediators_second=R['v'], outcome='vented', n_jobs=n_jobs, warn=False)
t0, c0 = time.perf_counter(), time.process_time()
rep = est.fit(sim.data).report_
print(json.dumps(dict(fit_s=time.perf_counter() - t0, main_cpu_s=time.process_time() - c0,
                      digest=hashlib.sha256(rep.table.to_csv().encode()).hexdigest()[:16],
                      nde=float(rep.effect('NDE').estimate), nie=float(rep.effect('NIE').estimate),
                      learner_fit_cpu_s=acc['fit'], learner_fit_wall_s=acc['fit_wall'], learner_predict_cpu_s=acc['predict'],
                      fits=acc['fits'], predicts=acc['predicts'], repeated_fits=repeated[1], repeated_fit_cpu_s=repeated[0])))
'''


def run(n, n_jobs, instrument):
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    p = psutil.Popen([sys.executable, "-c", CHILD, str(n), str(n_jobs), str(int(instrument))], stdout=subprocess.PIPE, text=True)
    peak, cpu = 0, {}
    while p.poll() is None:
        try:
            rss = 0
            for q in [p] + p.children(recursive=True):
                try:
                    rss += q.memory_info().rss
                    ct = q.cpu_times(); cpu[q.pid] = ct.user + ct.system   # not children_*: reaped workers are sampled already
                except psutil.Error: pass
            peak = max(peak, rss)
        except psutil.Error: pass
        time.sleep(0.1)
    if p.returncode: raise SystemExit(f"child n={n} n_jobs={n_jobs} failed with {p.returncode}")
    out = json.loads(p.stdout.read().strip().splitlines()[-1])
    return dict(n=n, n_jobs=n_jobs, fit_s=round(out['fit_s'], 1), process_s=round(time.perf_counter() - t0, 1),
                cpu_s=round(sum(cpu.values()), 1), fit_cpu_s=round(out['main_cpu_s'], 1) if n_jobs == 1 else None,
                peak_rss_gb=round(peak / 2 ** 30, 3), load_start=round(load0[0], 2), load_end=round(os.getloadavg()[0], 2),
                digest=out['digest'], nde=out['nde'], nie=out['nie'],
                **({k: (round(v, 1) if isinstance(v, float) else v) for k, v in out.items() if k.startswith(('learner', 'fits', 'predicts', 'repeated'))} if instrument else {}))


def summary(rows):
    "One line per size with both runs: the breakdown against the floor and the parallel run's time and memory."
    lines = []
    for n in dict.fromkeys(r['n'] for r in rows):
        b = [r for r in rows if r['n'] == n and r['n_jobs'] == 1]; p = [r for r in rows if r['n'] == n and r['n_jobs'] == 2]
        if not b: continue
        b = b[-1]; floor = b['learner_fit_cpu_s'] - b['repeated_fit_cpu_s']
        over = (b['fit_cpu_s'] - floor) / floor
        over_pred = (b['fit_cpu_s'] - floor - b['learner_predict_cpu_s']) / (floor + b['learner_predict_cpu_s'])
        line = dict(n=n, estimator_cpu_s=b['fit_cpu_s'], floor_fit_cpu_s=round(floor, 1), repeated_fit_cpu_s=b['repeated_fit_cpu_s'],
                    predict_cpu_s=b['learner_predict_cpu_s'], other_cpu_s=round(b['fit_cpu_s'] - b['learner_fit_cpu_s'] - b['learner_predict_cpu_s'], 1),
                    overhead_vs_fits=round(over, 3), overhead_vs_fits_and_predictions=round(over_pred, 3))
        if p: line.update(n_jobs2_wall_s=p[-1]['fit_s'], n_jobs2_cpu_s=p[-1]['cpu_s'], n_jobs2_peak_rss_gb=p[-1]['peak_rss_gb'], same_table=b['digest'] == p[-1]['digest'])
        lines.append(line)
        print(f"n={n:,}: overhead above the bare nuisance fits {over:.1%} (CPU {b['fit_cpu_s']} s vs floor {floor:.1f} s); counting the "
              f"held-out predictions into the floor: {over_pred:.1%}" + (f"; n_jobs=2: {p[-1]['fit_s']} s wall, {p[-1]['peak_rss_gb']} GB peak, "
              f"load {p[-1]['load_start']} -> {p[-1]['load_end']}" if p else ''), flush=True)
    return lines


def main(specs):
    prev = OUT / "pse_scale.csv"
    rows = pd.read_csv(prev).to_dict('records') if prev.exists() and os.environ.get('PSE_BENCH_APPEND') == '1' else []
    for spec in specs:
        n, _, jobs = spec.partition(':'); n = int(n)
        if jobs in ('', '1'): rows.append(run(n, 1, True)); print(rows[-1], flush=True); write(rows)
        if jobs in ('', '2'): rows.append(run(n, 2, False)); print(rows[-1], flush=True); write(rows)


def write(rows):
    lines = summary(rows)
    from trustml_nb.core import markdown_table
    OUT.mkdir(exist_ok=True)
    pd.DataFrame(rows).to_csv(OUT / "pse_scale.csv", index=False)
    head = ("# Path-specific effects at scale: time, memory and the floor of the bare nuisance fits\n\n"
            "Command: `nice -n 10 .venv/bin/python benchmarks/bench_pse_scale.py` (one run; see its docstring). Oximetry simulator, "
            "binary outcome, `PathSpecificEffects` with its defaults (HistGradientBoosting learners, 5 folds, DR + SN, NIE* included).\n\n"
            "Breakdown (n_jobs=1, one process, CPU seconds): floor = CPU seconds inside the learners' `fit` calls, each distinct "
            "nuisance model once; repeated = the same fit done again; predict = the learners' held-out and nested-regression "
            "predictions; other = everything else the estimator does (cross-fitting plan, indexing, estimation, tables). "
            "overhead_vs_fits = (estimator CPU - floor) / floor; overhead_vs_fits_and_predictions counts the predictions into the floor.\n\n"
            "Parallel run: n_jobs=2 (the 2-core target): wall seconds of the fit, CPU seconds and peak resident memory summed over the "
            "process and its joblib workers. same_table: the two runs' effects tables are identical (sha256 digest).\n\n")
    (OUT / "pse_scale.md").write_text(head + ("## Summary\n\n" + markdown_table(pd.DataFrame(lines)) + "\n\n" if lines else "") + "## Runs\n\n"
                                      + markdown_table(pd.DataFrame(rows)) + "\n\nLoad averages (1 min) at the start and end of each run "
                                      "are in the table: this 2-core machine is shared, so wall times taken under load are upper bounds.\n")


if __name__ == "__main__":
    main(sys.argv[1:] or ['200000', '1000000'])
