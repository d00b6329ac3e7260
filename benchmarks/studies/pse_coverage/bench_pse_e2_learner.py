"""Which propensity learner keeps the tails of e2 = P(X=1|Z,W,V)? Paired candidate study on the same samples and folds.

Every replication draws one `sim_nonlinear` sample, cross-fits the package defaults once (5 folds, nested='fold',
boosting everywhere), and then re-fits only the propensity models with each candidate learner on the SAME folds (the
nested regressions do not depend on the propensity learner, so 'P:<cand>' is exactly what
`learners={'propensity': <cand>}` gives; `--check` verifies this on one sample). Combos, each a DR estimate with its
influence-function SE:
  EE          the package defaults
  e2:exact    only e2 exact (`nonlinear_nuisances`), everything else estimated
  TT          everything exact (the oracle)
  e2:<cand>   only e2 from the candidate
  P:<cand>    all three propensities from the candidate (what making it the propensity default would give)
Candidates (CANDIDATES below): hgb_loose (boosting with less shrinkage: min_samples_leaf 20, no L2, patience 30),
hgb_noes (boosting, 300 iterations, no early stopping), splogit (logistic regression on additive cubic splines plus
all pairwise products, penalty by 3-fold CV log loss), glm (plain logistic GLM), stack (the package's 'stack' preset).
Run: .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_e2_learner.py DESIGN N REPS [CAND ...]   e.g. binary 2000 60
     .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_e2_learner.py --summarise DESIGN N   (rewrite the table from the draws)
Resumable: the draws go to benchmarks/studies/pse_coverage/results/pse_e2_learner_{DESIGN}_{N}_draws.csv (or under $PSE_BENCH_OUT) after
every replication, and a rerun skips the replications already there; the summary table is rewritten every 5.
"""
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegressionCV
from sklearn.pipeline import make_pipeline, make_union
from sklearn.preprocessing import PolynomialFeatures, SplineTransformer, StandardScaler
from threadpoolctl import threadpool_limits

os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")
from trustml_nb.core import derived_rng, markdown_table
from trustml_nb.pse import EFFECTS, GLMClassifier, StackClassifier, crossfit_gmf, gmf_estimate
from trustml_nb.pse_simulator import WORLDS, nonlinear_nuisances, population_truth, sim_nonlinear

OUT = Path(os.environ.get("PSE_BENCH_OUT", Path(__file__).parent / "results"))
CLIP = 0.01


def _hgb(seed, **kw):
    base = dict(max_iter=300, learning_rate=0.05, max_leaf_nodes=8, min_samples_leaf=40, l2_regularization=1.0,
                early_stopping=True, validation_fraction=0.2, n_iter_no_change=10, random_state=seed)
    return HistGradientBoostingClassifier(**{**base, **kw})


def _splogit(seed):
    feats = make_union(SplineTransformer(n_knots=5, degree=3, extrapolation='linear'),
                       PolynomialFeatures(2, interaction_only=True, include_bias=False))
    return make_pipeline(StandardScaler(), feats, StandardScaler(),
                         LogisticRegressionCV(Cs=[0.01, 0.1, 1.0, 10.0], cv=3, scoring='neg_log_loss', max_iter=2000, use_legacy_attributes=False, l1_ratios=(0.0,)))


CANDIDATES = {
    'hgb_loose': lambda seed: _hgb(seed, max_iter=1000, min_samples_leaf=20, l2_regularization=0.0, n_iter_no_change=30),
    'hgb_noes': lambda seed: _hgb(seed, early_stopping=False, min_samples_leaf=20, l2_regularization=0.0),
    'splogit': _splogit,
    'glm': lambda seed: GLMClassifier(),
    'stack': lambda seed: StackClassifier(seed=seed),
}


def crossfit_props(est, x, H, folds):
    "Cross-fitted P(X=1 | H_k) for every stage k on the given folds (the package's scheme), clipped."
    out = []
    with threadpool_limits(1):
        for h in H:
            p = np.zeros(len(x))
            for f in np.unique(folds):
                te = folds == f
                p[te] = clone(est).fit(h[~te], x[~te]).predict_proba(h[te])[:, 1]
            out.append(np.clip(p, CLIP, 1 - CLIP))
    return out


def effects(x, y, P, M, T):
    fe = {a: gmf_estimate(x, y, P, M[a], a) for a in T}
    for eff, (p, q) in list(EFFECTS.items())[:4]:
        phi = fe[p].influence - fe[q].influence
        yield eff, fe[p].estimate - fe[q].estimate, phi.std() / np.sqrt(len(x))


def draw(design, n, rep, T):
    "Replication rep's sample (seeds [7, n, rep]): x, y, the blocks, the histories H_k, and the exact nuisances (propensities clipped)."
    df = sim_nonlinear(n, design, seed=derived_rng(7, n, rep)).data
    x, y = df.x.to_numpy(), df.y.to_numpy()
    blocks = [df[['z1', 'z2']].to_numpy(), df[['w1', 'w2']].to_numpy(), df[['v']].to_numpy()]
    H = [np.column_stack(blocks[:k + 1]) for k in range(3)]
    tp, tm = nonlinear_nuisances(df, design, T)
    tp = [np.clip(p, CLIP, 1 - CLIP) for p in tp]
    return x, y, blocks, H, tp, tm


def one_rep(design, n, rep, cands, T):
    x, y, blocks, H, tp, tm = draw(design, n, rep, T)
    t0 = time.process_time()
    cf = crossfit_gmf(x, y, blocks, T, seed=rep, clip=CLIP)
    ep, em = cf.propensities, cf.regressions
    combos = {'EE': (ep, em), 'e2:exact': ([ep[0], ep[1], tp[2]], em), 'TT': (tp, tm)}
    cpu = {'EE': time.process_time() - t0}
    for c in cands:
        t0 = time.process_time()
        cp = crossfit_props(CANDIDATES[c](rep), x, H, cf.folds)
        cpu[c] = time.process_time() - t0
        combos[f'e2:{c}'] = ([ep[0], ep[1], cp[2]], em)
        combos[f'P:{c}'] = (cp, em)
    rows = []
    for combo, (P, M) in combos.items():
        for eff, est, se in effects(x, y, P, M, T):
            rows.append(dict(rep=rep, combo=combo, effect=eff, est=est, se=se))
    return rows, cpu


def summarise(d, truth):
    d = d.assign(truth=d.effect.map(truth))
    d['covered'] = (abs(d.est - d.truth) <= 1.959964 * d.se).astype(float)
    g = d.groupby(['combo', 'effect'], sort=False)
    s = pd.DataFrame({'reps': g.size(), 'bias': g.apply(lambda q: (q.est - q.truth).mean(), include_groups=False),
                      'sd': g.est.std(), 'mean_se': g.se.mean(), 'coverage': g.covered.mean()}).reset_index()
    s['bias_over_sd'], s['se_over_sd'] = s.bias / s.sd, s.mean_se / s.sd
    s['coverage_se'] = np.sqrt(s.coverage * (1 - s.coverage) / s.reps)
    # paired against the package (EE): mean shift of the estimate and of the SE, with the MC SE of the shift
    ee = d[d.combo == 'EE'].set_index(['rep', 'effect'])
    dd = d.set_index(['rep', 'effect'])
    sh = (dd.est - ee.est.reindex(dd.index)).groupby([dd.combo, dd.index.get_level_values('effect')])
    s['est_shift_vs_EE'] = [sh.get_group((c, e)).mean() for c, e in zip(s.combo, s.effect)]
    s['est_shift_mcse'] = [sh.get_group((c, e)).std() / np.sqrt(len(sh.get_group((c, e)))) for c, e in zip(s.combo, s.effect)]
    # paired ratios: the combo's mean SE and SD over EE's on the SAME replications (combos run on fewer reps compare with those)
    pr = []
    for c, e in zip(s.combo, s.effect):
        q = d[(d.combo == c) & (d.effect == e)]
        b = ee.loc[[(r, e) for r in q.rep]]
        pr.append((q.se.mean() / b.se.mean(), q.est.std() / b.est.std()))
    s['se_vs_EE'], s['sd_vs_EE'] = zip(*pr)
    return s


def resummarise(design, n):
    "Rewrite the summary table from the draws, keeping the markdown header (commands, timings) of the runs."
    n = int(n)
    truth = population_truth('nonlinear', n=2_000_000, seed=12345, design=design)['y'].to_dict()
    stem = OUT / f"pse_e2_learner_{design}_{n}"
    s = summarise(pd.read_csv(f"{stem}_draws.csv"), truth)
    s.to_csv(f"{stem}.csv", index=False)
    md = Path(f"{stem}.md").read_text()
    Path(f"{stem}.md").write_text(md[:md.index('\n| combo')] + "\n" + markdown_table(s.round(4)) + "\n")


def write(d, design, n, truth, cmd, wall, cpu):
    s = summarise(d, truth)
    stem = OUT / f"pse_e2_learner_{design}_{n}"
    s.to_csv(f"{stem}.csv", index=False)
    cpu_txt = ", ".join(f"{k} {v:.1f} s" for k, v in cpu.items())
    head = (f"# Propensity learner candidates, paired: design '{design}', n = {n:,}, {d.rep.nunique()} replications\n\n"
            "Same samples and folds in every row. EE: package defaults; e2:exact: only e2 = P(X=1|Z,W,V) exact; TT: all nuisances exact; "
            "e2:<cand>: only e2 from the candidate; P:<cand>: all three propensities from the candidate (= learners={'propensity': cand}). "
            "est_shift_vs_EE: mean paired change of the estimate against EE (with its MC SE). "
            f"Command: `{cmd}`. Wall time of this run {wall:.0f} s; mean CPU s per replication: {cpu_txt}; "
            f"load average at the end {os.getloadavg()[0]:.1f} (2 cores, shared).\n\n")
    Path(f"{stem}.md").write_text(head + markdown_table(s.round(4)) + "\n")
    return s


def check(design='binary', n=2000):
    "The swap equals the package run with learners={'propensity': cand} (same folds, same regressions)."
    T = list(WORLDS.values())
    df = sim_nonlinear(n, design, seed=derived_rng(7, n, 0)).data
    x, y = df.x.to_numpy(), df.y.to_numpy()
    blocks = [df[['z1', 'z2']].to_numpy(), df[['w1', 'w2']].to_numpy(), df[['v']].to_numpy()]
    cf = crossfit_gmf(x, y, blocks, T, seed=0, clip=CLIP)
    est = CANDIDATES['glm'](0)
    cg = crossfit_gmf(x, y, blocks, T, seed=0, clip=CLIP, learners={'propensity': est})
    cp = crossfit_props(est, x, [np.column_stack(blocks[:k + 1]) for k in range(3)], cf.folds)
    assert all(np.allclose(a, b) for a, b in zip(cp, cg.propensities)), "propensities differ"
    assert all(np.allclose(cf.regressions[a], cg.regressions[a]) for a in T), "regressions differ"
    print("check passed: the swap equals learners={'propensity': GLMClassifier()} on the same folds")


def main(design='binary', n=2000, reps=60, *cands):
    n, reps = int(n), int(reps)
    cands = list(cands) or list(CANDIDATES)
    T = list(WORLDS.values())
    truth = population_truth('nonlinear', n=2_000_000, seed=12345, design=design)['y'].to_dict()
    OUT.mkdir(exist_ok=True)
    draws = OUT / f"pse_e2_learner_{design}_{n}_draws.csv"
    d = pd.read_csv(draws) if draws.exists() else pd.DataFrame()
    done = set(d.rep) if len(d) else set()
    cmd = f".venv/bin/python benchmarks/studies/pse_coverage/bench_pse_e2_learner.py {design} {n} {reps} {' '.join(cands)}".strip()
    t0, cpu_sum, k = time.time(), {}, 0
    for rep in range(reps):
        if rep in done: continue
        rows, cpu = one_rep(design, n, rep, cands, T)
        d = pd.concat([d, pd.DataFrame(rows)], ignore_index=True)
        d.to_csv(draws, index=False)
        k += 1
        for c, v in cpu.items(): cpu_sum[c] = cpu_sum.get(c, 0) + v
        print(f"rep {rep} done ({d.rep.nunique()} in all), {time.time() - t0:.0f} s, load {os.getloadavg()[0]:.1f}", flush=True)
        if k % 5 == 0: write(d, design, n, truth, cmd, time.time() - t0, {c: v / k for c, v in cpu_sum.items()})
    s = write(d, design, n, truth, cmd, time.time() - t0, {c: v / max(k, 1) for c, v in cpu_sum.items()})
    print(s[s.effect.isin(['NIE', 'VDE'])].round(4).to_string(index=False), flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ['--check']: check(*sys.argv[2:])
    elif sys.argv[1:2] == ['--summarise']: resummarise(*sys.argv[2:])
    else: main(*sys.argv[1:])
