"""Sequential offset boosting for the propensities, paired with the defaults on the same samples and folds.

Each stage's propensity is boosted (LightGBM, the `mc`/`lessons` extra) from the previous stage's fit as an offset
(`init_score`): e0 = P(X=1|Z) from a standardised logistic regression, e1 = P(X=1|Z,W) from logit(e0), e2 = P(X=1|Z,W,V)
from logit(e1), within each training fold (the offsets on training rows are the previous stage's in-fold fits), with
early stopping on a 20% validation split (10 rounds of patience; 8 leaves, at least 40 rows per leaf, L2 1, learning rate
0.05, up to 300 rounds). The idea: e_k / e_{k-1} odds are the mediator density ratios, so each booster only learns the
new block's contribution, and the logistic start extrapolates into the tails.
  EE         the package defaults        e2:exact  only e2 exact        TT  all exact
  P:offset   all three propensities by offset boosting
  e0:offset  only e0 by offset boosting
Samples: `sim_nonlinear` with seeds [7, n, rep] (those of bench_pse_e2_learner.py). DR estimates, influence-function SEs, clip 0.01.
Run: .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_offset_propensities.py DESIGN N REP_FROM REP_TO     e.g. binary 2000 0 100
     .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_offset_propensities.py --summarise DESIGN N
"""
import os
import sys
from pathlib import Path

import lightgbm as lgb
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")
from trustml_nb.pse import crossfit_gmf

sys.path.insert(0, str(Path(__file__).parent))
from bench_pse_e2_learner import CLIP, draw, effects  # noqa: E402
from bench_pse_learner_roles import run  # noqa: E402

PARAMS = dict(objective='binary', learning_rate=0.05, num_leaves=8, min_data_in_leaf=40, lambda_l2=1.0, verbose=-1, num_threads=1)
logit = lambda p: np.log(p / (1 - p))


def boost(X, x, off, Xt, offt, seed):
    "Boost from the offset, early stopping on a 20% validation split; return (test-row, training-row) probabilities."
    va = np.random.default_rng(seed).random(len(x)) < 0.2
    dtr = lgb.Dataset(X[~va], x[~va], init_score=off[~va])
    dva = lgb.Dataset(X[va], x[va], init_score=off[va], reference=dtr)
    b = lgb.train({**PARAMS, 'seed': seed}, dtr, 300, valid_sets=[dva], callbacks=[lgb.early_stopping(10, verbose=False)])
    return 1 / (1 + np.exp(-(offt + b.predict(Xt, raw_score=True)))), 1 / (1 + np.exp(-(off + b.predict(X, raw_score=True))))


def offset_props(x, H, folds, seed):
    "Cross-fitted e0, e1, e2 on the given folds, each stage boosted from the previous one's logit."
    out = [np.zeros(len(x)) for _ in H]
    for f in np.unique(folds):
        te, tr = folds == f, folds != f
        glm = make_pipeline(StandardScaler(), LogisticRegression()).fit(H[0][tr], x[tr])
        off_tr, off_te = (logit(np.clip(glm.predict_proba(H[0][r])[:, 1], 1e-4, 1 - 1e-4)) for r in (tr, te))
        for k, h in enumerate(H):
            pte, ptr = boost(h[tr], x[tr], off_tr, h[te], off_te, seed + k)
            out[k][te] = pte
            off_tr, off_te = logit(np.clip(ptr, 1e-4, 1 - 1e-4)), logit(np.clip(pte, 1e-4, 1 - 1e-4))
    return [np.clip(p, CLIP, 1 - CLIP) for p in out]


def one_rep(design, n, rep, T):
    x, y, blocks, H, tp, tm = draw(design, n, rep, T)
    with threadpool_limits(1):
        cf = crossfit_gmf(x, y, blocks, T, seed=rep, clip=CLIP)
        op = offset_props(x, H, cf.folds, rep)
    ep, em = cf.propensities, cf.regressions
    combos = {'EE': (ep, em), 'e2:exact': ([ep[0], ep[1], tp[2]], em), 'TT': (tp, tm), 'P:offset': (op, em), 'e0:offset': ([op[0], ep[1], ep[2]], em)}
    return [dict(rep=rep, combo=c, effect=e, est=est, se=se) for c, (P, M) in combos.items() for e, est, se in effects(x, y, P, M, T)]


HEADER = ("# Offset-boosted propensities, paired: design '{design}', n = {n:,}, {reps} replications\n\n"
          "Same samples and folds in every row. EE: package defaults; e2:exact: only e2 exact; TT: all exact; P:offset: every propensity boosted "
          "(LightGBM) from the previous stage's logit, e0 from a logistic fit; e0:offset: only e0 so. shift_vs_EE: mean paired change of the estimate "
          "against EE (with its MC SE).")

if __name__ == "__main__":
    run(sys.argv[1:], one_rep, 'pse_offset_propensities', HEADER)
