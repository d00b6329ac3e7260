"""MIFPO (issue 17): the exact LP route against the paper's DCCP route, on a closed-form synthetic case, on >= 200 random
small instances, and on the vendored Adult and German credit data, with fairlearn peers.

Part 1 (synthetic, closed form): `mifpo.synthetic_bins()` over 31 gammas; largest distance of each route to
`synthetic_error_front`. Target: <= 1e-6.
Part 2 (random small instances): 240 instances, n = m in 3..8 bins per group, random rates and masses, alpha in
[0.2, 0.8], gamma uniform in [0, 0.5], k in {1, 2}; DCCP as the official FairPareto code calls it (dccp's defaults:
one random start, 100 iterations) and with this package's default (2 starts, 50 iterations). Gap = DCCP - LP (the LP
is exact). Reported: share above the LP by more than 1e-6, quantiles and worst gap, any gap below -1e-5 (a bug).
Part 3 (Adult): `data.adult_task` with half the rows fitting the cross-fitted calibrated scores (HistGradientBoosting +
isotonic, 3 folds) and the front, half test; sensitive attribute sex; 10 bins per group; the full 31-point front by the LP
(target <= 5 s) and by DCCP (k = 2, 2 starts; target <= 60 s; wall time and this process's CPU time are both recorded,
because on the shared box the wall time also counts other jobs); fairlearn peers (`compare_peers`) on or above the front on
the fitting rows. German credit: 700 fit / 300 test rows, 5 bins, the same.
Part 4 (the official code's NaN): dccp 1.1.1's `Problem.solve(method='dccp')` returns a float, so FairPareto's
`prob.solve(method="dccp")[0]` raises TypeError, which it catches and turns into NaN for every gamma.
Run: nice -n 10 .venv/bin/python benchmarks/bench_mifpo.py   (writes benchmarks/results/mifpo.{json,md} and mifpo_random.csv)
The machine is a shared, noisy 2-core box; timings are indicative only.
"""
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from trustml_nb.core import DroppedRowsWarning, markdown_table, progress, quiet
from trustml_nb.data import adult_task, load_german, split_features
from trustml_nb.mifpo import (GroupCalibratedScores, _dccp_problem, best_fair_classifier, bin_scores, compare_peers, mifpo_program,
                              pareto_front, score_bins, synthetic_bins, synthetic_error_front)

OUT = Path(__file__).resolve().parent / 'results'


def synthetic():
    f = pareto_front(synthetic_bins(), show_progress=False)
    truth = synthetic_error_front(f.table['gamma'].tolist())
    return dict(lp_max_error=float(np.abs(f.table['lp'] - truth).max()), dccp_max_error=float(np.abs(f.table['dccp'] - truth).max()),
                lp_monotone=f.lp_monotone, dccp_monotone=f.dccp_monotone, n_gammas=len(truth))


def random_instance(r, seed=0):
    "Instance r of the random sweep: (bins, k, gamma); rebuildable on its own (the tutorial does)."
    rng = np.random.default_rng([seed, r])
    nb = int(rng.integers(3, 9)); k = int(rng.integers(1, 3)); gamma = float(rng.uniform(0, 0.5)); alpha = float(rng.uniform(0.2, 0.8))
    b = score_bins(np.sort(rng.uniform(size=nb)), rng.dirichlet(np.ones(nb)), np.sort(rng.uniform(size=nb)), rng.dirichlet(np.ones(nb)), alpha)
    return b, k, gamma


def random_instances(n_instances=240, seed=0):
    rows = []
    for r in progress(range(n_instances), desc='random instances'):
        b, k, gamma = random_instance(r, seed); nb, alpha = len(b.rates[0]), b.group_share
        lp = best_fair_classifier(b, gamma).error
        t0 = time.process_time(); off = mifpo_program(b, gamma, n_atoms=k, restarts=1, max_iter=100, seed=r); t_off = time.process_time() - t0
        ours = mifpo_program(b, gamma, n_atoms=k, seed=r)
        rows.append(dict(instance=r, bins=nb, k=k, gamma=gamma, alpha=alpha, lp=lp, dccp_official_settings=off.value, gap_official_settings=off.value - lp,
                         dccp_default=ours.value, gap_default=ours.value - lp, cpu_seconds_official_settings=t_off))
    df = pd.DataFrame(rows); df.to_csv(OUT / 'mifpo_random.csv', index=False)
    summ = {}
    for col in ('gap_official_settings', 'gap_default'):
        g = df[col]
        summ[col] = dict(share_above=float((g > 1e-6).mean()), n_above=int((g > 1e-6).sum()), worst=float(g.max()), median=float(g.median()),
                         q90=float(g.quantile(0.9)), q99=float(g.quantile(0.99)), n_below=int((g < -1e-5).sum()), min=float(g.min()))
    summ['n_instances'] = len(df)
    summ['median_cpu_seconds_official_settings'] = float(df['cpu_seconds_official_settings'].median())
    return summ


def dataset(name, X_fit, y_fit, s_fit, X_test, y_test, s_test, n_bins):
    scorer = GroupCalibratedScores(n_folds=3, seed=0, calibration='isotonic' if len(y_fit) > 2000 else 'sigmoid').fit(X_fit, y_fit, sensitive=s_fit)
    p_fit, p_test = scorer.oof_score_, scorer.predict_proba(X_test, sensitive=s_test)[:, 1]
    bins = bin_scores(y_fit, p_fit, s_fit, n_bins=n_bins)
    lp = pareto_front(bins, routes=('lp',))
    dc = pareto_front(bins, routes=('dccp',), show_progress=False)
    both = dc.table.assign(lp=lp.table['lp'], gap=dc.table['dccp'] - lp.table['lp'])
    peers = compare_peers(y_fit, p_fit, s_fit, y_test, p_test, s_test, n_bins=n_bins)
    return dict(dataset=name, n_fit=int(len(y_fit)), n_test=int(len(y_test)), n_bins=n_bins, n_atoms=dc.n_atoms, restarts=2,
                lp_seconds=lp.lp_seconds, dccp_seconds=dc.dccp_seconds, dccp_cpu_seconds=dc.dccp_cpu_seconds, n_above=int((both['gap'] > 1e-6).sum()), worst_gap=float(both['gap'].max()),
                min_gap=float(both['gap'].min()), lp_monotone=lp.lp_monotone, dccp_monotone=dc.dccp_monotone,
                lp_convex=bool(np.all(np.diff(lp.table['lp'], 2) >= -1e-9)),
                front_at_0=float(lp.table['lp'].iloc[0]), front_unconstrained=float(lp.table['lp'].iloc[-1]),
                peers_on_or_above=peers.all_on_or_above, peers_worst_margin=peers.worst_margin, score_brier=scorer.report_.brier,
                front=both[['gamma', 'lp', 'dccp', 'gap', 'tv']].round(8).to_dict('list'), peers=peers.table.round(6).to_dict('list'))


def nan_bug():
    b = synthetic_bins(); prob, _, _ = _dccp_problem(b, 0.1, 2, 'error')
    ret = prob.solve(method='dccp')
    try: ret[0]; indexing = 'works'
    except TypeError as e: indexing = f"TypeError: {e}"
    return dict(return_type=type(ret).__name__, indexing_result=indexing)


if __name__ == '__main__':
    OUT.mkdir(exist_ok=True); res = {}
    res['nan_bug'] = nan_bug(); print(res['nan_bug'])
    res['synthetic'] = synthetic(); print(res['synthetic'])
    with quiet(DroppedRowsWarning): task = adult_task(splits={'fit': 0.5, 'test': None}, sensitive=('sex',), seed=0)
    f, t = task['fit'], task['test']
    res['adult'] = dataset('adult', f.X, f.y, f.A['sex'], t.X, t.y, t.A['sex'], 10)
    print({k: v for k, v in res['adult'].items() if k not in ('front', 'peers')})
    g = load_german(); X, y, A = split_features(g); y = y.to_numpy().astype(int); s = A['sex'].astype(str).to_numpy()
    o = np.random.default_rng(0).permutation(len(g))
    res['german'] = dataset('german', X.iloc[o[:700]], y[o[:700]], s[o[:700]], X.iloc[o[700:]], y[o[700:]], s[o[700:]], 5)
    print({k: v for k, v in res['german'].items() if k not in ('front', 'peers')})
    res['random'] = random_instances(); print(res['random'])
    (OUT / 'mifpo.json').write_text(json.dumps(res, indent=1))
    lines = ['# MIFPO: exact LP vs DCCP', '', f"Synthetic closed form (31 gammas): LP max error {res['synthetic']['lp_max_error']:.1e}, DCCP {res['synthetic']['dccp_max_error']:.1e}", '']
    for k in ('adult', 'german'):
        d = res[k]
        lines.append(f"{k}: {d['n_fit']:,} fit rows, {d['n_bins']} bins; LP 31 gammas {d['lp_seconds']:.2f} s; DCCP (k={d['n_atoms']}, {d['restarts']} starts) {d['dccp_seconds']:.1f} s wall, {d['dccp_cpu_seconds']:.1f} s CPU; "
                     f"DCCP above LP at {d['n_above']}/31 (worst {d['worst_gap']:.2e}); peers on or above: {d['peers_on_or_above']} (worst margin {d['peers_worst_margin']:.2e})")
    lines += ['', 'Random small instances (DCCP - LP):', '', markdown_table(pd.DataFrame(
        [dict(settings=c, **{kk: v for kk, v in res['random'][c].items()}) for c in ('gap_official_settings', 'gap_default')]))]
    lines += ['', f"Official code's NaN: dccp returns {res['nan_bug']['return_type']}; indexing [0]: {res['nan_bug']['indexing_result']}"]
    (OUT / 'mifpo.md').write_text('\n'.join(lines) + '\n'); print('\n'.join(lines))
