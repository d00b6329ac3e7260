"""Multicalibration: our Multicalibrator vs the `mcgrad` package (and the paper's settings, one-change ablations and an
MCBoost-style baseline), per dataset and seed, in one run.

Datasets (same rows for every model of a dataset and seed):
- Adult, seeds 0-4: `trustml_nb.multicalibration.adult_mc_task(seed)` (a deliberately miscalibrated logistic base model;
  40% calibration rows, 30% test rows; sex x race x age-group groups with >= 100 rows: 58 groups).
- German credit, seeds 0-4: `data.load_german`; a logistic base model on 30% of the rows, miscalibrated the same way
  (logit doubled, lowered by 0.8 for women), 40% calibration, 30% test; groups: sex, age group and their intersections.
- Synthetic with known truth, seeds 0-2: `make_mc_synthetic(20000, seed)` for calibration and 20,000 fresh rows for
  testing; the MC error is also measured to the true probabilities (`mc_error_to_truth`, free of label noise).

Measures on the test rows: MC error at 10 and 20 bins, group-size-weighted smooth calibration error, squared error,
fit wall time and CPU time (one fit, single-threaded LightGBM everywhere; the machine is shared, wall times are noisy).
mcgrad gets the raw attributes as categorical segment features (its intended input); ours and MCBoost-style get the
membership table of the same groups. mcgrad's log messages are turned down to errors. The loaders' notices (rows dropped
for missing values, groups under 100 rows) are hidden by category.

Rows: `ours` = Multicalibrator() defaults (logistic recalibration of the base score first, then log loss on log-odds,
depth 2, learning rate 0.1, 5-fold cross-fitted boosters averaged, at least max(20, 0.5% of the rows) rows per leaf,
255 bins); `paper settings` = no recalibration, squared loss, one 70/30 split, learning-rate grid geomspace(0.01, 1, 5),
LightGBM's 20 rows per leaf, 8192 bins (the module's previous default); four one-change ablations of ours
(`no recalibration`, `squared loss`, `one split`, `20 rows per leaf`); `MCBoost-style` (10 levels, alpha 0.002);
`mcgrad` 0.1.5 defaults.

Run: .venv/bin/python benchmarks/bench_multicalibration.py   (writes benchmarks/results/multicalibration*.{md,csv})
Optional: --datasets adult german synthetic, --seeds 0 1 (a subset, for a quick look; writes nothing).
"""
import argparse
import logging
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

os.environ.setdefault('TRUSTML_NB_PROGRESS', '0')
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import OneHotEncoder

from trustml_nb.core import DroppedRowsWarning, SmallGroupWarning, markdown_table, quiet
from trustml_nb.data import load_german, split_features
from trustml_nb.groups import intersect
from trustml_nb.multicalibration import (MCBoost, Multicalibrator, adult_mc_task, make_mc_synthetic, mc_error, mc_error_to_truth,
                                         weighted_smooth_ece)

OUT = Path(__file__).parent / 'results'
SEEDS = {'adult': (0, 1, 2, 3, 4), 'german': (0, 1, 2, 3, 4), 'synthetic': (0, 1)}
MEASURES = ['mc_error_10', 'mc_error_20', 'smooth_ece_weighted', 'mse']
PAPER = dict(loss='squared', recalibrate=False, n_folds=1, learning_rates=tuple(np.geomspace(0.01, 1, 5)), min_leaf_rows=20, max_bins=8192)
MODELS = {'ours': {}, 'paper settings': PAPER, 'ours, no recalibration': dict(recalibrate=False), 'ours, squared loss': dict(loss='squared'), 'ours, one split': dict(n_folds=1),
          'ours, 20 rows per leaf': dict(min_leaf_rows=20)}


class Split:
    "Calibration or test rows of one dataset: score, labels, groups, raw attributes (for mcgrad), true probabilities if known."
    def __init__(self, score, y, groups, A, p_true=None):
        self.score, self.y, self.groups, self.A, self.p_true = np.asarray(score, float), np.asarray(y, int), groups, A, p_true


def adult(seed):
    with quiet(DroppedRowsWarning, SmallGroupWarning):
        d = adult_mc_task(seed=seed)
    cats = ['sex', 'race', 'age_group']
    return [Split(s.score, s.y, s.groups, s.A[cats].astype(str)) for s in (d['calib'], d['test'])]


def german(seed):
    df = load_german(); X, y, A = split_features(df)
    y, A = y.to_numpy(int), A.astype(str)
    G = intersect(A)
    Xn = OneHotEncoder(handle_unknown='ignore').fit_transform(X.select_dtypes('category')).toarray()
    Xn = np.column_stack([Xn, (X.select_dtypes('number') - X.select_dtypes('number').mean()) / X.select_dtypes('number').std()])
    perm = np.random.default_rng(seed).permutation(len(y)); n = len(y)
    base, cal, te = perm[:int(0.3 * n)], perm[int(0.3 * n):int(0.7 * n)], perm[int(0.7 * n):]
    lr = LogisticRegression(max_iter=2000).fit(Xn[base], y[base])
    logit = lr.decision_function(Xn)
    score = 1 / (1 + np.exp(-(2 * logit - 0.8 * (A['sex'] == 'female').to_numpy())))   # overconfident and biased, as adult_mc_task
    return [Split(score[r], y[r], G.iloc[r].reset_index(drop=True), A.iloc[r].reset_index(drop=True)) for r in (cal, te)]


def synthetic(seed):
    out = []
    for s in (seed, 1000 + seed):
        d = make_mc_synthetic(20000, seed=s)
        A = pd.DataFrame({k: d['groups'][f'{k}=1'].map({True: '1', False: '0'}) for k in 'abc'})
        out.append(Split(d['p0'], d['y'], d['groups'], A, d['p_true']))
    return out


def timed(fn):
    t0, c0 = time.perf_counter(), time.process_time(); out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def mcgrad_fit_predict(cal, te):
    logging.getLogger('mcgrad').setLevel(logging.ERROR)
    from mcgrad.methods import MCGrad
    for name in list(logging.root.manager.loggerDict):
        if name.startswith('mcgrad'): logging.getLogger(name).setLevel(logging.ERROR)
    cats = list(cal.A.columns)
    (m, secs, cpu) = timed(lambda: MCGrad(lightgbm_params={'num_threads': 1}, random_state=0).fit(
        cal.A.assign(pred=cal.score, label=cal.y), 'pred', 'label', categorical_feature_column_names=cats))
    p = np.clip(m.predict(te.A.assign(pred=te.score), 'pred', categorical_feature_column_names=cats), 0, 1)
    return p, secs, cpu


def run_one(dataset, seed):
    cal, te = {'adult': adult, 'german': german, 'synthetic': synthetic}[dataset](seed)
    preds, secs, notes = {'base (uncalibrated)': (te.score, 0.0, 0.0)}, {}, []
    for name, kw in MODELS.items():
        m, s, c = timed(lambda: Multicalibrator(**kw).fit(cal.score, cal.y, groups=cal.groups))
        preds[name] = (m.predict(te.score, groups=te.groups), s, c)
        if name == 'ours':
            sat = m.saturation_check(cal.score, cal.y, groups=cal.groups)
            notes.append(dict(dataset=dataset, seed=seed, rounds=m.report_.rounds, saturation_relative_drop=sat.relative_drop,
                              saturated=sat.saturated, chosen_paper_learning_rate=None))
        if name == 'paper settings': notes[-1]['chosen_paper_learning_rate'] = m.report_.learning_rate
    mb, s, c = timed(lambda: MCBoost().fit(cal.score, cal.y, groups=cal.groups))
    preds['MCBoost-style'] = (mb.predict(te.score, groups=te.groups), s, c)
    preds['mcgrad'] = mcgrad_fit_predict(cal, te)
    rows = []
    for name, (p, s, c) in preds.items():
        row = dict(dataset=dataset, seed=seed, model=name, mc_error_10=mc_error(te.y, p, te.groups, 10), mc_error_20=mc_error(te.y, p, te.groups, 20),
                   smooth_ece_weighted=weighted_smooth_ece(te.y, p, te.groups), mse=float(np.mean((te.y - p) ** 2)), fit_s=s, fit_cpu_s=c,
                   n_calibration=len(cal.y), n_test=len(te.y), n_groups=cal.groups.shape[1])
        if te.p_true is not None:
            row['mc_error_10_to_truth'] = mc_error_to_truth(te.p_true, p, te.groups, 10)
            row['mc_error_20_to_truth'] = mc_error_to_truth(te.p_true, p, te.groups, 20)
        rows.append(row)
    return rows, notes


def ours_vs_mcgrad(tab, measures):
    "Per dataset (mean over seeds) and per dataset and seed: ours, mcgrad, ratio ours / mcgrad, ours <= mcgrad, for every measure."
    out = []
    for (ds, seed), d in [*((k, g) for k, g in tab.groupby(['dataset', 'seed'], sort=False))]:
        m = d.set_index('model')
        for k in measures:
            if k in m.columns and m[k].notna().all():
                out.append(dict(dataset=ds, seed=seed, measure=k, ours=m.loc['ours', k], mcgrad=m.loc['mcgrad', k]))
    per_seed = pd.DataFrame(out)
    mean = per_seed.groupby(['dataset', 'measure'], sort=False)[['ours', 'mcgrad']].mean().reset_index().assign(seed='mean')
    both = pd.concat([mean, per_seed], ignore_index=True)
    both['ratio'] = both['ours'] / both['mcgrad']; both['ours_le_mcgrad'] = both['ours'] <= both['mcgrad']
    return both[['dataset', 'seed', 'measure', 'ours', 'mcgrad', 'ratio', 'ours_le_mcgrad']]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--datasets', nargs='*', default=list(SEEDS)); ap.add_argument('--seeds', nargs='*', type=int, default=None)
    args = ap.parse_args()
    rows, notes = [], []
    for ds in args.datasets:
        for seed in (SEEDS[ds] if args.seeds is None else args.seeds):
            t0 = time.perf_counter(); r, n = run_one(ds, seed); rows += r; notes += n
            print(f"{ds} seed {seed}: {time.perf_counter() - t0:.0f} s", flush=True)
    tab = pd.DataFrame(rows)
    measures = MEASURES + ['mc_error_10_to_truth', 'mc_error_20_to_truth', 'fit_s', 'fit_cpu_s']
    cmp = ours_vs_mcgrad(tab, measures)
    summary = tab.groupby(['dataset', 'model'], sort=False)[[c for c in measures if c in tab]].mean().reset_index()
    sat = pd.DataFrame(notes)
    print('\nours vs mcgrad (ratio = ours / mcgrad)\n' + cmp.to_string(index=False))
    print('\nmean over seeds, every model\n' + summary.to_string(index=False))
    print('\nours: rounds and saturation\n' + sat.to_string(index=False))
    if args.seeds is not None or set(args.datasets) != set(SEEDS): return   # a subset: print only
    OUT.mkdir(exist_ok=True)
    tab.to_csv(OUT / 'multicalibration.csv', index=False); cmp.to_csv(OUT / 'multicalibration_vs_mcgrad.csv', index=False)
    summary.to_csv(OUT / 'multicalibration_summary.csv', index=False); sat.to_csv(OUT / 'multicalibration_saturation.csv', index=False)
    head = cmp[(cmp.seed == 'mean') & cmp.measure.isin(MEASURES + ['mc_error_10_to_truth', 'mc_error_20_to_truth'])]
    md = ("# Multicalibration: ours vs mcgrad 0.1.5 (and the paper's settings, ablations, MCBoost-style)\n\n"
          "Command: `.venv/bin/python benchmarks/bench_multicalibration.py` (one run; every model sees the same rows). "
          f"Adult seeds {list(SEEDS['adult'])}, German credit seeds {list(SEEDS['german'])}, synthetic seeds {list(SEEDS['synthetic'])}. "
          "Fit times are one fit each, single-threaded LightGBM, on a shared 2-core machine (wall time noisy; CPU time of this process also given).\n\n"
          "## Ours vs mcgrad, mean over seeds (ratio = ours / mcgrad; lower is better for every measure)\n\n" + markdown_table(head)
          + f"\n\nOurs at or below mcgrad on {int(head.ours_le_mcgrad.sum())} of {len(head)} (dataset, measure) means.\n"
          + "\n## Every model, mean over seeds\n\n" + markdown_table(summary)
          + "\n\n## Ours vs mcgrad per dataset and seed\n\n" + markdown_table(cmp[cmp.seed != 'mean'])
          + "\n\n## Ours: boosting rounds kept (mean over the 5 boosters) and the saturation check (relative drop of a second pass)\n\n"
          + markdown_table(sat) + '\n')
    (OUT / 'multicalibration.md').write_text(md)


if __name__ == '__main__':
    main()
