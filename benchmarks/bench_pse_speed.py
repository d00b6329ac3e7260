"""Speed of the full path-specific effects table against DoWhy's two-stage regression (trustml_nb.pse.PathSpecificEffects): TE, NDE, NIE, VDE, NIE*, TV with DR and SN,
gradient-boosting nuisances (sklearn HistGradientBoosting), 5 folds, binary outcome, on the oximetry simulator.

Target (issue #3): n = 50,000 in at most 60 s on 2 cores. Reference: DoWhy's mediation.two_stage_regression (NDE and NIE
only, linear, one mediator column, no cross-fitting) on the same rows: not like-for-like, shown for scale.
Run: .venv/bin/python benchmarks/bench_pse_speed.py [sizes...]   (results go to benchmarks/results, or to $PSE_BENCH_OUT)
"""
import logging
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")
from trustml_nb.core import markdown_table, quiet
from trustml_nb.pse import PathSpecificEffects
from trustml_nb.pse_simulator import sim_oximetry

OUT = Path(os.environ.get("PSE_BENCH_OUT", Path(__file__).parent / "results"))
# Threads per learner. n_jobs=2 is fast on an idle 2-core machine but collapses under load (OpenMP spin-waiting:
# 109 s instead of 4 s at n = 10,000 when other jobs shared the cores), so the default measures n_jobs=1 only.
JOBS = tuple(int(j) for j in os.environ.get("PSE_BENCH_JOBS", "1").split(","))




def time_ours(sim, n_jobs):
    R = sim.roles
    est = PathSpecificEffects(exposure=R['x'], covariates=R['z'], mediators_first=R['w'], mediators_second=R['v'], outcome='vented', learners='hgb', n_folds=5,
                              estimators=('DR', 'SN'), n_jobs=n_jobs, warn=False)
    t = time.perf_counter()
    est.fit(sim.data)
    return time.perf_counter() - t, est.report_


def time_dowhy(sim):
    from dowhy import CausalModel
    logging.getLogger('dowhy').setLevel(logging.ERROR)
    d = sim.data[['age', 'sex', 'cci', 'race', 'spo2', 'vented']]
    g = "digraph{age->race; cci->race; age->spo2; sex->spo2; cci->spo2; age->vented; sex->vented; cci->vented; race->spo2; race->vented; spo2->vented;}"
    t = time.perf_counter()
    with quiet(DeprecationWarning):   # DoWhy 0.14 triggers pandas' and pyparsing's deprecation warnings
        model = CausalModel(data=d, treatment='race', outcome='vented', graph=g)
        for et in ('nonparametric-nde', 'nonparametric-nie'):
            est = model.identify_effect(estimand_type=et, proceed_when_unidentifiable=True)
            model.estimate_effect(est, method_name='mediation.two_stage_regression', confidence_intervals=False, test_significance=False)
    return time.perf_counter() - t


def main(sizes=(10_000, 50_000, 200_000)):
    rows = []
    for n in sizes:
        sim = sim_oximetry(n, seed=0)
        reps = 3 if n <= 10_000 else 1
        for n_jobs in JOBS:
            ts = [time_ours(sim, n_jobs)[0] for _ in range(reps)]
            rows.append(dict(n=n, n_jobs=n_jobs, runs=reps, ours_s=float(np.median(ts))))
        dw = time_dowhy(sim)
        for r in rows[-len(JOBS):]:
            r['dowhy_nde_nie_s'] = dw; r['ratio_ours_over_dowhy'] = r['ours_s'] / dw
            r['meets_60s_target'] = (r['ours_s'] <= 60) if n == 50_000 else ''
        print(pd.DataFrame(rows[-len(JOBS):]).round(2).to_string(index=False), flush=True)
    df = pd.DataFrame(rows)
    OUT.mkdir(exist_ok=True)
    df.to_csv(OUT / "pse_speed.csv", index=False)
    head = ("# Speed: full path-specific effects table (DR + SN, HistGradientBoosting, 5 folds)\n\n"
            "Oximetry simulator, binary outcome; 5 cross-fitted functionals (12 nuisance fits per fold: 4 propensity models, 8 outcome and nested regressions). Median of 3 runs "
            "at n = 10,000, one run above. DoWhy reference: two-stage linear regression for NDE and NIE only (not "
            f"like-for-like). n_jobs = threads per learner (PSE_BENCH_JOBS). Shared 2-core machine with other jobs running: timings are noisy. Load at start: {os.getloadavg()[0]:.1f}.\n\n")
    (OUT / "pse_speed.md").write_text(head + markdown_table(df.round(3)) + "\n")
    print(head + df.round(2).to_string(index=False))


if __name__ == "__main__":
    main(tuple(int(a) for a in sys.argv[1:]) or (10_000, 50_000, 200_000))
