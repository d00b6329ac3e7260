"""Whole-dataset throughput of GAM explanations (issue 38, item 2): the batch API vs today's per-instance loop vs
shap's AdditiveExplainer vs interpret's own local explanations, same EBM and rows, one run, and the ratio to the
memory-bandwidth floor measured on the same machine.

Floor: the batch SHAP call must at least read x and write phi, 16 bytes per feature per row. The machine's bandwidth is
measured here as a numpy copy of a 256 MB float64 array (bytes read + bytes written per second, median of 5 copies);
floor rows/s = bandwidth / (16 * n_features); the table gives floor rows/s divided by our rows/s (1.0 = at the floor).
Timings: 3 interleaved repetitions (every method once per repetition, in turn), medians; the load average is printed.
Slow methods (the loop, shap, explain_local) run on the first rows of the same row set where marked: rows/s is the
comparable figure. Values: max |difference| to the loop (ours) and to shap (same background, interventional SHAP).
Run: nice .venv/bin/python benchmarks/bench_gam_throughput.py   (writes benchmarks/results/gam_throughput.md)
     nice .venv/bin/python benchmarks/bench_gam_throughput.py --routes   (the grid against the per-column route: gam_throughput_routes.md)
"""
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

os.environ['TRUSTML_NB_PROGRESS'] = '0'   # no bars: the timings are of the computation (a bar costs ~0.1 ms per call)

from interpret.glassbox import ExplainableBoostingRegressor
import shap

from trustml_nb.core import markdown_table
from trustml_nb.gam_models import GAM, from_interpret_ebm, random_gam, random_instance
from trustml_nb.gam_explain import (shap_regression, shap_regression_batch, msr, msr_batch, mcr, mcr_batch, csr, csr_batch,
                                    cc, cc_batch, shap_classification, shap_classification_batch)

OUT = Path(__file__).parent / 'results'
REPS = 3
N_BG = 20


def fit_ebm(n, rows=400, seed=0, rounds=60):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(rows, n)); w = rng.normal(size=n)
    y = np.sin(X) @ w + 0.1 * rng.normal(size=rows)
    return ExplainableBoostingRegressor(interactions=0, outer_bags=1, max_rounds=rounds, n_jobs=1, random_state=seed).fit(X, y), X


def rows_in_domain(gam, n_rows, seed=1):
    "Test rows from the training distribution, clipped to the GAM's domain (the training range)."
    lo = np.array([d.lo for d in gam.domains]); hi = np.array([d.hi for d in gam.domains])
    return np.clip(np.random.default_rng(seed).uniform(-2, 2, (n_rows, gam.n)), lo, hi)


def bandwidth(mb=256, repeat=5):
    "Copy bandwidth in GB/s (bytes read + bytes written), median of `repeat` copies of an `mb` MB float64 array: (by wall time, by CPU time)."
    a = np.random.default_rng(0).random(mb * 2**20 // 8); b = np.empty_like(a); np.copyto(b, a); ts, cs = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time(); np.copyto(b, a); ts.append(time.perf_counter() - t0); cs.append(time.process_time() - c0)
    return 2 * a.nbytes / np.median(ts) / 1e9, 2 * a.nbytes / np.median(cs) / 1e9, 2 * a.nbytes / min(cs) / 1e9


def main():
    t_start = time.perf_counter()
    big = '--no-big' not in sys.argv
    load0 = os.getloadavg(); print('load average at start', load0, flush=True)
    models = {}
    for n in (12, 100):
        ebm, Xtr = fit_ebm(n); gam = from_interpret_ebm(ebm); models[n] = (ebm, gam, Xtr[:N_BG])
    # 1,000 features: the 100-feature EBM's step components tiled 10 times (fitting a 1,000-feature EBM takes minutes here)
    g100 = models[100][1]
    g1000 = GAM(g100.components * 10, g100.domains * 10, betas=np.tile(g100.betas, 10), beta0=g100.beta0)
    X = {n: rows_in_domain(models[n][1], 10_000) for n in (12, 100)}
    X[1000] = rows_in_domain(g1000, 10_000)
    if big: X['12x1M'] = rows_in_domain(models[12][1], 1_000_000, seed=2); X['100x1M'] = rows_in_domain(models[100][1], 1_000_000, seed=2)
    print(f'setup {time.perf_counter() - t_start:.0f} s', flush=True)

    # (label, n_features, rows used, callable): every method once per repetition, interleaved
    tasks = []
    for n, sub_loop, sub_peer in ((12, 10_000, 10_000), (100, 1_000, 1_000)):
        ebm, gam, bg = models[n]; Xn = X[n]
        tasks += [(f'{n}|ours batch (background)', n, len(Xn), lambda gam=gam, Xn=Xn, bg=bg: shap_regression_batch(gam, Xn, background=bg)),
                  (f'{n}|ours batch (dist=data)', n, len(Xn), lambda gam=gam, Xn=Xn: shap_regression_batch(gam, Xn, dist='data')),
                  (f'{n}|ours loop (today)', n, sub_loop, lambda gam=gam, Xs=Xn[:sub_loop], bg=bg: np.array([shap_regression(gam, x, background=bg) for x in Xs])),
                  (f'{n}|shap Additive', n, sub_peer, lambda ebm=ebm, Xs=Xn[:sub_peer], bg=bg: shap.explainers.Additive(ebm.predict, shap.maskers.Independent(bg, max_samples=N_BG))(Xs).values),
                  (f'{n}|interpret eval_terms', n, len(Xn), lambda ebm=ebm, Xn=Xn: ebm.eval_terms(Xn)),
                  (f'{n}|interpret explain_local', n, 200, lambda ebm=ebm, Xs=Xn[:200]: ebm.explain_local(Xs))]
    bg12 = models[12][2]
    tasks += [('1000|ours batch (background)', 1000, 10_000, lambda: shap_regression_batch(g1000, X[1000], background=np.tile(models[100][2], 10))),
              ('1000|ours loop (today)', 1000, 100, lambda: np.array([shap_regression(g1000, x, background=np.tile(models[100][2], 10)) for x in X[1000][:100]]))]
    if big:
        tasks += [('12x1M|ours batch (background)', 12, 1_000_000, lambda: shap_regression_batch(models[12][1], X['12x1M'], background=bg12)),
                  ('100x1M|ours batch (background)', 100, 1_000_000, lambda: shap_regression_batch(models[100][1], X['100x1M'], background=models[100][2]))]
    # the other batch queries on the 12-feature EBM (decision: score >= its median on the rows) and on a 12-feature
    # integer table GAM for the counting queries (cc, SHAP of the decision need integer contributions)
    g12 = models[12][1]; thr = float(np.median(g12.score(X[12]))); Xq = X[12]
    tab = random_gam(12, 'table', 'enumerable', n_values=3, max_abs=3, seed=0); Xt = np.array([random_instance(tab, s) for s in range(2_000)])
    q = [('MSR', lambda Xs: msr_batch(g12, Xs, thr), lambda x: msr(g12, x, thr), Xq, 2_000),
         ('MCR', lambda Xs: mcr_batch(g12, Xs, thr), lambda x: mcr(g12, x, thr), Xq, 2_000),
         ('CSR', lambda Xs: csr_batch(g12, Xs, [0, 1, 2], thr), lambda x: csr(g12, x, [0, 1, 2], thr), Xq, 2_000),
         ('CC', lambda Xs: cc_batch(tab, Xs, [0, 1, 2]), lambda x: cc(tab, x, [0, 1, 2]), Xt, 300),
         ('SHAP-C', lambda Xs: shap_classification_batch(tab, Xs), lambda x: shap_classification(tab, x), Xt[:500], 50)]
    for name, fb, fl, Xs, sub in q:
        tasks += [(f'q|{name}|batch', 12, len(Xs), lambda fb=fb, Xs=Xs: fb(Xs)), (f'q|{name}|loop', 12, sub, lambda fl=fl, Xs=Xs[:sub]: [fl(x) for x in Xs])]

    times = {t[0]: [] for t in tasks}; cpu = {t[0]: [] for t in tasks}; results = {}
    bw = []
    for rep in range(REPS):
        for label, n, rows, f in tasks:
            t0, c0 = time.perf_counter(), time.process_time(); out = f(); times[label].append(time.perf_counter() - t0); cpu[label].append(time.process_time() - c0)
            if rep == 0: results[label] = out
        bw.append(bandwidth())   # after the methods: its 256 MB copies would leave the next method cold caches
        print(f'repetition {rep + 1} done at {time.perf_counter() - t_start:.0f} s, load {os.getloadavg()}', flush=True)
    load = os.getloadavg()
    BW = float(np.median([w for w, _, _ in bw])); BWC = float(np.median([c for _, c, _ in bw])); BWB = float(max(b for _, _, b in bw))

    # values: identical to the loop, equal to shap's Additive
    def diff(a, b): return float(np.abs(np.asarray(a)[:len(b)] - np.asarray(b)).max())
    rows = []
    for n in (12, 100, 1000):
        loop = results[f'{n}|ours loop (today)']; ours = results[f'{n}|ours batch (background)']
        for label, nn, nrows, _ in tasks:
            if not label.startswith(f'{n}|'): continue
            t = float(np.median(times[label])); rps = nrows / t
            row = {'features': n, 'method': label.split('|')[1], 'rows': nrows, 'median_s': t, 'rows_per_s': rps,
                   'cpu_rows_per_s': nrows / float(np.median(cpu[label])), 'best_cpu_rows_per_s': nrows / min(cpu[label])}
            if label == f'{n}|ours batch (background)':
                row['max_abs_diff'] = diff(ours, loop)
            if label == f'{n}|shap Additive': row['max_abs_diff'] = diff(ours, results[label])
            if label == f'{n}|ours batch (dist=data)':
                row['max_abs_diff'] = diff(results[label], np.array([shap_regression(models[n][1], x, dist='data') for x in X[n][:200]]))
            if label == f'{n}|interpret explain_local':
                loc = np.array([results[label].data(i)['scores'] for i in range(len(X[n][:200]))])
                row['max_abs_diff'] = diff(results[f'{n}|ours batch (dist=data)'][:200], loc)
            rows.append(row)
    if big:
        for key, n in (('12x1M', 12), ('100x1M', 100)):
            label = f'{key}|ours batch (background)'; t = float(np.median(times[label]))
            chk = np.array([shap_regression(models[n][1], x, background=models[n][2]) for x in X[key][-50:]])
            rows.append({'features': n, 'method': 'ours batch (background), 1,000,000 rows', 'rows': 1_000_000, 'median_s': t,
                         'rows_per_s': 1_000_000 / t, 'cpu_rows_per_s': 1_000_000 / float(np.median(cpu[label])), 'best_cpu_rows_per_s': 1_000_000 / min(cpu[label]),
                         'max_abs_diff': diff(results[label][-50:], chk)})
    df = pd.DataFrame(rows)
    df['floor_rows_per_s'] = BW * 1e9 / (16 * df.features)
    df['times_floor'] = df.floor_rows_per_s / df.rows_per_s
    df['times_floor_cpu'] = BWC * 1e9 / (16 * df.features) / df.cpu_rows_per_s   # CPU seconds for both: does not move with the load
    df['times_floor_best'] = BWB * 1e9 / (16 * df.features) / df.best_cpu_rows_per_s   # the fastest repetition of each, in CPU seconds
    sp = []
    for n in (12, 100, 1000):
        d = df[(df.features == n) & (df.rows <= 10_000)].set_index('method').rows_per_s
        ours = d['ours batch (background)']
        sp.append({'features': n, 'ours_batch_rows_per_s': ours, 'vs_loop': ours / d['ours loop (today)'],
                   'vs_shap_additive': ours / d['shap Additive'] if 'shap Additive' in d else np.nan,
                   'vs_interpret_eval_terms': ours / d['interpret eval_terms'] if 'interpret eval_terms' in d else np.nan,
                   'vs_interpret_explain_local': ours / d['interpret explain_local'] if 'interpret explain_local' in d else np.nan,
                   'times_floor': df[(df.features == n) & (df.method == 'ours batch (background)') & (df.rows <= 10_000)].times_floor.iloc[0],
                   'times_floor_cpu': df[(df.features == n) & (df.method == 'ours batch (background)') & (df.rows <= 10_000)].times_floor_cpu.iloc[0],
                   'times_floor_best': df[(df.features == n) & (df.method == 'ours batch (background)') & (df.rows <= 10_000)].times_floor_best.iloc[0]})
    sp = pd.DataFrame(sp)
    qrows = []
    for name, fb, fl, Xs, sub in q:
        tb = float(np.median(times[f'q|{name}|batch'])); tl = float(np.median(times[f'q|{name}|loop']))
        b, l = results[f'q|{name}|batch'], results[f'q|{name}|loop']
        if name in ('MSR', 'MCR'): same = [np.flatnonzero(r).tolist() or (None if name == 'MCR' else []) for r in b[:sub]] == l; d = 0.0 if same else np.nan
        else: d = float(np.abs(np.asarray(b[:sub], float) - np.asarray(l, float)).max())
        qrows.append({'query': name, 'model': 'EBM, 12 features' if name in ('MSR', 'MCR', 'CSR') else 'table GAM, 12 features',
                      'batch_rows': len(Xs), 'batch_rows_per_s': len(Xs) / tb, 'loop_rows': sub, 'loop_rows_per_s': sub / tl,
                      'speedup': (len(Xs) / tb) / (sub / tl), 'max_abs_diff': d})
    qdf = pd.DataFrame(qrows)
    pd.set_option('display.width', 200)
    print(df.to_string(index=False, float_format=lambda v: f'{v:.4g}'))
    print(sp.to_string(index=False, float_format=lambda v: f'{v:.4g}'))
    print(qdf.to_string(index=False, float_format=lambda v: f'{v:.4g}'))
    print(f'copy bandwidth {BW:.2f} GB/s by wall time, {BWC:.2f} GB/s by CPU time (read + write), load average at end {load}, total {time.perf_counter() - t_start:.0f} s')
    OUT.mkdir(exist_ok=True)
    (OUT / 'gam_throughput.md').write_text(
        "# Whole-dataset throughput of GAM explanations (issue 38)\n\n"
        "Command: `nice .venv/bin/python benchmarks/bench_gam_throughput.py` (one run; 3 interleaved repetitions, medians; progress bars off).\n"
        f"Machine: 2 shared cores; load average (1, 5, 15 min) at start {tuple(round(v, 2) for v in load0)}, at end {tuple(round(v, 2) for v in load)}; "
        f"measured copy bandwidth {BW:.2f} GB/s by wall time, {BWC:.2f} GB/s by CPU time, {BWB:.2f} GB/s the fastest copy by CPU time (bytes read + written, numpy copy of 256 MB, median of 5 at the end of each repetition, median over repetitions).\n\n"
        "Floor: reading x and writing phi, 16 bytes per feature per row: floor rows/s = bandwidth / (16 * features); "
        "`times_floor` = floor rows/s / measured rows/s (wall time); `times_floor_cpu`: the same with CPU seconds for both the method and the copy "
        "(on a loaded machine the process waits for a core; CPU seconds count only the time it ran, so this ratio moves less with the load); "
        "`times_floor_best`: the fastest repetition of the method against the fastest copy, both in CPU seconds (the least disturbed run of each).\n\n"
        "EBM regressors (interactions=0, 400 training rows, 60 rounds); background: 20 training rows for ours and shap's "
        "Additive explainer (Independent masker), the same interventional SHAP; `dist=data` uses the EBM bin weights "
        "(equal to interpret's local explanations). 1,000 features: the 100-feature EBM's components tiled 10 times (no peers run). "
        "Loop, shap and explain_local run on the first `rows` of the same 10,000 rows.\n\n"
        "## SHAP values of the score\n\n" + markdown_table(df.assign(median_s=df.median_s.round(6))) + "\n\n## Speed-ups of the batch call (rows/s ratios)\n\n"
        + markdown_table(sp.round(3)) + "\n\n## The other batch queries (12 features)\n\n"
        "MSR, MCR, CSR: the 12-feature EBM with threshold = median score of the rows (CSR of features 0-2). "
        "CC (features 0-2 fixed) and SHAP of the decision: a random 12-feature integer table GAM (3 values per feature, |c| <= 3). "
        "max_abs_diff: 0 means identical (for MSR/MCR/CSR: identical answers).\n\n" + markdown_table(qdf)
        + "\n\nShared, heavily loaded 2-core machine: absolute rows/s move with the load; ratios within one run are the figures to quote.\n")


def routes(reps=7):
    "--routes: the batch SHAP call by the shared grid (now) and by the per-column route (the previous implementation; both with today's chunk check), same rows, interleaved; CPU seconds, fastest of `reps`."
    import trustml_nb.gam_explain as ge
    grid = ge._grid
    models = {n: fit_ebm(n) for n in (12, 100)}
    gams = {n: (from_interpret_ebm(m), Xtr[:N_BG]) for n, (m, Xtr) in models.items()}
    g100, bg100 = gams[100]
    gams[1000] = (GAM(g100.components * 10, g100.domains * 10, betas=np.tile(g100.betas, 10), beta0=g100.beta0), np.tile(bg100, 10))
    load0 = os.getloadavg(); out = []
    for n, (gam, bg) in gams.items():
        X = rows_in_domain(gam, 10_000); cpu = {'grid': [], 'per-column': []}; res = {}
        for _ in range(reps):
            for route in cpu:
                ge._grid = grid if route == 'grid' else (lambda gam: None)
                c0 = time.process_time(); res[route] = shap_regression_batch(gam, X, background=bg); cpu[route].append(time.process_time() - c0)
        ge._grid = grid
        bw = max(bandwidth()[2] for _ in range(3))
        floor = 10_000 * 16 * n / (bw * 1e9)
        for route, ts in cpu.items():
            out.append({'features': n, 'route': route, 'rows': 10_000, 'best_cpu_s': min(ts), 'rows_per_cpu_s': 10_000 / min(ts),
                        'times_floor_best': min(ts) / floor, 'identical': bool((res[route] == res['grid']).all())})
    df = pd.DataFrame(out); load = os.getloadavg()
    print(df.to_string(index=False, float_format=lambda v: f'{v:.4g}'))
    (OUT / 'gam_throughput_routes.md').write_text(
        "# Batch SHAP: the shared grid against the per-column route, same run (issue 38)\n\n"
        "Command: `nice .venv/bin/python benchmarks/bench_gam_throughput.py --routes`. 10,000 rows, EBMs as in gam_throughput.md (1,000 features: "
        "the 100-feature EBM tiled), background of 20 rows; the two routes interleaved, 7 repetitions, the fastest in CPU seconds; "
        "floor: 16 bytes per feature per row at the fastest of 15 copies of 256 MB timed in CPU seconds. "
        f"Load average at start {tuple(round(v, 2) for v in load0)}, at end {tuple(round(v, 2) for v in load)}.\n\n" + markdown_table(df) + "\n")


if __name__ == '__main__' and '--routes' in sys.argv:
    routes(); sys.exit()


if __name__ == '__main__':
    main()
