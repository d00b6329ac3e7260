"""Study (no peer library): Parallel cross-fitting of trustml_nb.pse: wall time, CPU time and peak memory of the full effects table (TE, NDE, NIE,
VDE, NIE*, TV; DR + SN; default learners, 5 folds) on the oximetry simulator, by number of joblib workers (n_jobs).

Each measurement runs in a fresh Python process; peak memory is the largest summed resident set of that process and its
joblib workers, sampled every 0.1 s. The load average is recorded beside every timing (this machine is shared).
Targets (issue 13): same numbers for n_jobs = 1 and 2 (checked: the tables must be identical), the speed-up from 1 to 2
workers, n = 50,000 in <= 60 s on 2 cores, and the time and peak memory at n = 200,000 and 1,000,000 rows.
Run: .venv/bin/python benchmarks/bench_pse_parallel.py [n:n_jobs ...]   default: 50000:1 50000:2 200000:2 1000000:2
(results go to benchmarks/results/pse_parallel.{csv,md}, or to $PSE_BENCH_OUT; rows are written as they finish;
PSE_BENCH_APPEND=1 keeps the rows already in the CSV)
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
from trustml_nb.pse import PathSpecificEffects
from trustml_nb.pse_simulator import sim_oximetry
n, n_jobs = int(sys.argv[1]), int(sys.argv[2])
sim = sim_oximetry(n, seed=0); R = sim.roles
est = PathSpecificEffects(exposure=R['x'], covariates=R['z'], mediators_first=R['w'], mediators_second=R['v'], outcome='vented', n_jobs=n_jobs, warn=False)
t0, c0 = time.perf_counter(), time.process_time()
rep = est.fit(sim.data).report_
print(json.dumps(dict(fit_s=time.perf_counter() - t0, digest=hashlib.sha256(rep.table.to_csv().encode()).hexdigest()[:16],
                      nde=float(rep.effect('NDE').estimate), nie=float(rep.effect('NIE').estimate))))
'''


def measure(n, n_jobs):
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    p = psutil.Popen([sys.executable, "-c", CHILD, str(n), str(n_jobs)], stdout=subprocess.PIPE, text=True)
    peak, cpu = 0, {}
    while p.poll() is None:
        try:
            procs = [p] + p.children(recursive=True)
            rss = 0
            for q in procs:
                try:
                    rss += q.memory_info().rss
                    ct = q.cpu_times(); cpu[q.pid] = ct.user + ct.system
                except psutil.Error: pass
            peak = max(peak, rss)
        except psutil.Error: pass
        time.sleep(0.1)
    out = json.loads(p.stdout.read().strip().splitlines()[-1])
    return dict(n=n, n_jobs=n_jobs, fit_s=round(out['fit_s'], 2), process_s=round(time.perf_counter() - t0, 2),
                cpu_s=round(sum(cpu.values()), 1), peak_rss_gb=round(peak / 2 ** 30, 3), load_start=round(load0, 2),
                load_end=round(os.getloadavg()[0], 2), table_digest=out['digest'], nde=out['nde'], nie=out['nie'])


def write(rows):
    df = pd.DataFrame(rows)
    OUT.mkdir(exist_ok=True)
    df.to_csv(OUT / "pse_parallel.csv", index=False)
    from trustml_nb.core import markdown_table
    head = ("# Parallel cross-fitting: time and peak memory of the full effects table\n\n"
            "Oximetry simulator, binary outcome, default learners (HistGradientBoosting), 5 folds, DR + SN, NIE* included. "
            "fit_s: the fit alone; process_s: with simulation and imports; cpu_s: CPU seconds of the process and its workers; "
            "peak_rss_gb: summed resident memory of the process and its joblib workers. table_digest: a hash of the effects "
            "table (equal digests = identical numbers). Load averages recorded beside each run: on a shared 2-core machine "
            "timings taken under load are upper bounds; re-measure on a quiet machine with the command in the docstring.\n\n")
    (OUT / "pse_parallel.md").write_text(head + markdown_table(df) + "\n")


def main(specs):
    prev = OUT / "pse_parallel.csv"
    rows = pd.read_csv(prev).to_dict('records') if prev.exists() and os.environ.get('PSE_BENCH_APPEND') == '1' else []
    for spec in specs:
        n, j = (int(v) for v in spec.split(':'))
        rows.append(measure(n, j))
        print(rows[-1], flush=True)
        write(rows)


if __name__ == "__main__":
    main(sys.argv[1:] or ["50000:1", "50000:2", "200000:2", "1000000:2"])
