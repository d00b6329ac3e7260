"""Does a bootstrap of the whole cross-fitted pipeline give the intervals the influence function misses?

The influence-function SE leaves out the variance of estimating the nuisances, which at n <= 5,000 is what the binary
design's NIE/VDE intervals lack (bench_pse_coverage_nonlinear.py: SE/SD 0.85, coverage 0.885/0.895 at n = 2,000).
Each replication draws the default coverage study's sample (seeds [2026, n, rep, design index]) and estimates TE, NDE,
NIE and VDE by DR with the package's default learners:
  EE  one cross-fit on the sample (seed=rep, the default study's folds), influence-function SE
  BS  the same estimate, SE = SD of B estimates, each a whole new cross-fit on a bootstrap resample of units; the folds
      of a resample are drawn over units, so the copies of a unit always share a fold (none is both trained on and predicted)
  HS  the same estimate, SE = SD of B estimates on half-samples drawn without replacement (no copies at all, so the
      learners' early-stopping splits cannot leak); for m = n/2, Var(estimate at n) ~ (m / (n - m)) Var(half-sample estimate)
Run: .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_pipeline_bootstrap.py DESIGN N REP_FROM REP_TO [B]     (measured: binary 2000 0 30 10,
     run as 0 15 10 and 15 30 10 under two PSE_BENCH_OUT folders, draws concatenated; each replication has its own seeds)
     .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_pipeline_bootstrap.py --summarise DESIGN N
Resumable (draws after every replication) in benchmarks/studies/pse_coverage/results/pse_pipeline_bootstrap_{DESIGN}_{N}_draws.csv (or $PSE_BENCH_OUT).
"""
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold
from threadpoolctl import threadpool_limits

os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")
import trustml_nb.pse as pse
from trustml_nb.pse import crossfit_gmf
from trustml_nb.pse_simulator import NONLINEAR_DESIGNS, sim_nonlinear
from trustml_nb.core import derived_rng

sys.path.insert(0, str(Path(__file__).parent))
from bench_pse_e2_learner import CLIP, effects  # noqa: E402
from bench_pse_learner_roles import run  # noqa: E402

UNITS = None   # unit of every row of the data being cross-fitted (None: rows are units, the package's own KFold)


class UnitKFold:
    "KFold over units: every copy of a resampled unit lands in the same fold (used only for the bootstrap resamples)."
    def __init__(self, n_splits, shuffle=True, random_state=None): self.kf = KFold(n_splits, shuffle=shuffle, random_state=random_state)

    def split(self, X):
        if UNITS is None: yield from self.kf.split(X); return
        units = np.unique(UNITS)
        for _, te_u in self.kf.split(units):
            te = np.isin(UNITS, units[te_u])
            yield np.flatnonzero(~te), np.flatnonzero(te)


pse.KFold = UnitKFold
OUT = Path(os.environ.get("PSE_BENCH_OUT", Path(__file__).parent / "results"))
if sys.argv[1:2] == ['--summarise']:   # B as the draws were made
    B = int(pd.read_csv(OUT / f"pse_pipeline_bootstrap_{sys.argv[2]}_{sys.argv[3]}_draws.csv").n_boot.max())
else: B = int(sys.argv[5]) if len(sys.argv) > 5 else 20


def one_rep(design, n, rep, T):
    global UNITS
    df = sim_nonlinear(n, design, seed=derived_rng(2026, n, rep, list(NONLINEAR_DESIGNS).index(design))).data
    x, y = df.x.to_numpy(), df.y.to_numpy()
    blocks = [df[['z1', 'z2']].to_numpy(), df[['w1', 'w2']].to_numpy(), df[['v']].to_numpy()]
    with threadpool_limits(1):
        UNITS = None
        cf = crossfit_gmf(x, y, blocks, T, seed=rep, clip=CLIP)
        point = {eff: (est, se) for eff, est, se in effects(x, y, cf.propensities, cf.regressions, T)}
        rng, boot = derived_rng(rep, 99), []
        for b in range(B):
            UNITS = rng.integers(0, n, n)
            c = crossfit_gmf(x[UNITS], y[UNITS], [k[UNITS] for k in blocks], T, seed=int(rng.integers(2**31)), clip=CLIP)
            boot.append({eff: est for eff, est, _ in effects(x[UNITS], y[UNITS], c.propensities, c.regressions, T)})
        UNITS, half = None, []
        for b in range(B):
            h = np.sort(rng.choice(n, n // 2, replace=False))
            c = crossfit_gmf(x[h], y[h], [k[h] for k in blocks], T, seed=int(rng.integers(2**31)), clip=CLIP)
            half.append({eff: est for eff, est, _ in effects(x[h], y[h], c.propensities, c.regressions, T)})
    rows = [dict(rep=rep, combo='EE', effect=e, est=est, se=se) for e, (est, se) in point.items()]
    rows += [dict(rep=rep, combo='BS', effect=e, est=est, se=float(np.std([d[e] for d in boot], ddof=1)), n_boot=B) for e, (est, _) in point.items()]
    m = n // 2
    rows += [dict(rep=rep, combo='HS', effect=e, est=est, se=float(np.sqrt(m / (n - m)) * np.std([d[e] for d in half], ddof=1)), n_boot=B)
             for e, (est, _) in point.items()]
    return rows


HEADER = ("# Bootstrap of the whole cross-fitted pipeline: design '{design}', n = {n:,}, {reps} replications\n\n"
          f"Same samples and folds as the default coverage study. EE: the package's DR estimate with its influence-function SE; "
          f"BS: the same estimate with SE = SD of {B} whole cross-fits on bootstrap resamples of units (folds drawn over units); "
          f"HS: SE = SD of {B} estimates on half-samples without replacement. "
          "Coverage of estimate +- 1.96 SE. "
          f"The SDs are over these replications only; the default study's 200-replication SDs are the firmer yardstick (see nbs/11). "
          f"B = {B} (the fifth argument of the command).")

if __name__ == "__main__":
    run(sys.argv[1:5], one_rep, 'pse_pipeline_bootstrap', HEADER)
