"""Do calibrated propensities widen the short intervals? Post-hoc calibration of the package's own cross-fitted
propensities (no refit), paired with the defaults on the same samples and folds.

Each replication draws a `sim_nonlinear` sample (seeds [7, n, rep], the samples of bench_pse_e2_learner.py), cross-fits the
package defaults once, and recalibrates every stage's cross-fitted propensity e_k against X:
  P:iso     isotonic regression of X on e_k over the whole sample (the pooled out-of-fold predictions)
  P:platt   logistic regression of X on logit(e_k) (an intercept and a slope: a slope above 1 undoes shrinkage)
  P:isocf   isotonic calibration cross-fitted on the same folds (each fold calibrated on the other folds)
against EE (the package), e2:exact (only e2 exact) and TT (all exact). Clip 0.01 after calibration. DR estimates with
influence-function SEs.
Run: .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_calibrated_propensities.py DESIGN N REP_FROM REP_TO     e.g. binary 2000 0 100
     .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_calibrated_propensities.py --summarise DESIGN N
Resumable: draws go to benchmarks/studies/pse_coverage/results/pse_calibrated_propensities_{DESIGN}_{N}_draws.csv (or under $PSE_BENCH_OUT).
"""
import os
import sys
from pathlib import Path

import numpy as np
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")
from trustml_nb.pse import crossfit_gmf

sys.path.insert(0, str(Path(__file__).parent))
from bench_pse_e2_learner import CLIP, draw, effects  # noqa: E402
from bench_pse_learner_roles import run  # noqa: E402


def iso(p, x):
    return np.clip(IsotonicRegression(y_min=0, y_max=1, out_of_bounds='clip').fit(p, x).predict(p), CLIP, 1 - CLIP)


def platt(p, x):
    lg = np.log(p / (1 - p))[:, None]
    return np.clip(LogisticRegression(C=1e6).fit(lg, x).predict_proba(lg)[:, 1], CLIP, 1 - CLIP)


def iso_cf(p, x, folds):
    out = np.empty_like(p)
    for f in np.unique(folds):
        te = folds == f
        out[te] = IsotonicRegression(y_min=0, y_max=1, out_of_bounds='clip').fit(p[~te], x[~te]).predict(p[te])
    return np.clip(out, CLIP, 1 - CLIP)


def one_rep(design, n, rep, T):
    x, y, blocks, _, tp, tm = draw(design, n, rep, T)
    with threadpool_limits(1):
        cf = crossfit_gmf(x, y, blocks, T, seed=rep, clip=CLIP)
    ep, em = cf.propensities, cf.regressions
    combos = {'EE': (ep, em), 'e2:exact': ([ep[0], ep[1], tp[2]], em), 'TT': (tp, tm),
              'P:iso': ([iso(p, x) for p in ep], em), 'P:platt': ([platt(p, x) for p in ep], em),
              'P:isocf': ([iso_cf(p, x, cf.folds) for p in ep], em)}
    return [dict(rep=rep, combo=combo, effect=eff, est=est, se=se)
            for combo, (P, M) in combos.items() for eff, est, se in effects(x, y, P, M, T)]


HEADER = ("# Calibrated propensities, paired: design '{design}', n = {n:,}, {reps} replications\n\n"
          "Same samples and folds in every row. EE: package defaults; e2:exact: only e2 exact; TT: all exact; P:iso, P:platt, P:isocf: every "
          "cross-fitted propensity recalibrated (pooled isotonic, logistic on the logit, fold-wise isotonic). "
          "shift_vs_EE: mean paired change of the estimate against EE (with its MC SE).")

if __name__ == "__main__":
    run(sys.argv[1:], one_rep, 'pse_calibrated_propensities', HEADER)
