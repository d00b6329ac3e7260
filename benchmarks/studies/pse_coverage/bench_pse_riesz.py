"""Learned Riesz representers against the propensity-ratio weights (issue 40): PathSpecificEffects(weights=...) for
'propensity' (the default), 'riesz_sieve' and 'riesz_net', PAIRED on the same `sim_nonlinear` samples as the default coverage study
(seed derived_rng(2026, n, rep, design index)), with the fit's seed = rep, and against the estimator given the EXACT nuisances
(`nonlinear_nuisances`: exact propensities, clipped at 0.01 as in the package, and exact nested regressions) on the same sample.

Bias is the paired shift est - est_exact (mean and its Monte Carlo SE), which removes the sampling noise shared by both;
|shift|/SD, SE/SD, coverage of the 95% interval with its Wilson 95% interval, median seconds per fit.
Designs: the three of NONLINEAR_DESIGNS and 'overlap', written here for issue 40 (weak overlap: a steep P(X=1 | Z) and mediator
means shifted by most of a standard deviation, so the cross-world weights are heavy); it is registered into NONLINEAR_DESIGNS in
this process only (sim_nonlinear, nonlinear_nuisances and population_truth read that dict), not in the package.

Resumable: every fit appends to results/pse_riesz_draws.csv (or $PSE_BENCH_OUT) as it finishes; a rerun skips what is there.
Run:  nice .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_riesz.py --n 2000 --reps 100 \
          [--designs interact binary threshold overlap] [--weights propensity riesz_sieve riesz_net] [--workers 1] [--max-seconds 280]
      .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_riesz.py --summarise
What was run (issue 40, first screening): nine runs of
  nice -n 10 timeout 300 .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_riesz.py --n 2000 --reps 100 --max-seconds 270
(the first with --max-seconds 230; its riesz_net draws, from an earlier network setting, were deleted and redone), one worker,
on a shared 2-core machine at a median load average of 5: 52-53 replications per (weights, design) at n = 2,000, 632 fits.
Versions: the riesz_net draws of that first screening came from the first network (16 hidden units, weight decay 16/n on every
parameter); some of its fits blew up (learned weights at the 1/clip cap in stage 1 and over 1,000 in stage 3 on overlap and
threshold). They are kept, relabelled 'riesz_net_v1', and never mixed with the draws of the second network (8 hidden units, weight
decay 160/n on the weights only, so the shrinkage goes towards the best constant), labelled 'riesz_net'. The propensity and sieve
code is unchanged, so their draws stand. Each draw records `max_weight` (the largest learned weight of psi(0,0,1), the cross-world
functional, over its three stages) and `at_cap` (how many stage-1 learned weights of psi(0,0,1) sit at the 1/clip cap).
Second screening: nice -n 15 ... --n 2000 --reps 100 (resumable, one worker, 2-core machine shared with five other sessions).
Reached (session of issue 40 item 2-3): riesz_net v2 15 replications per design at n = 2,000 (propensity and sieve 52-53);
final-candidate run started: nice -n 15 ... --n 5000 --reps 200 --weights propensity riesz_net, 16 replications per design.
Continue both with the same commands; n = 20,000 not started.
Third session (issue 40 helper): the default's own fits of the default coverage study (pse_coverage_nonlinear_draws.csv, config
'default': 200 replications per design at n = 2,000 and 5,000, 60 at n = 20,000) are the same estimator on the same samples and
seeds as weights='propensity' here (checked: on the 49-53 replications both files hold, the estimates and SEs agree exactly), so
they are imported with `--import-default` (only the exact-nuisance estimate is computed here; rows marked source='default_study',
their seconds those of the original runs, cpu_seconds blank):
  nice -n 15 .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_riesz.py --import-default --n 5000 20000 --designs interact binary threshold
and the default's fits on 'overlap' at n = 5,000 were extended with
  nice -n 15 .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_riesz.py --n 5000 --reps 200 --weights propensity --designs overlap --max-seconds 3500
Both are resumable (how far they got: the summary's `reps`). The summary adds the acceptance lines per (weights, design, n)
(results/pse_riesz_acceptance.csv) and the hand-written findings of results/pse_riesz_notes.md at the top of pse_riesz.md.
"""
import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import norm

os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")
from trustml_nb.core import derived_rng, markdown_table
from trustml_nb.pse import EFFECTS, PathSpecificEffects, gmf_estimate
from trustml_nb.pse_simulator import NONLINEAR_DESIGNS, WORLDS, nonlinear_nuisances, sim_nonlinear

from bench_pse_coverage_nonlinear import truth   # the same population truth (2,000,000 rows, seed 12345) as the default study

OVERLAP = dict(z2='normal', sv=0.8, binary=False,
               px=lambda z1, z2: expit(-0.3 + 1.2 * z1 - 0.8 * z2),
               mw=lambda z1, z2, x: (0.9 * x + 0.4 * z1, -0.7 * x + 0.3 * z1 * z2),
               mv=lambda z1, z2, w1, w2, x: 0.8 * x + 0.4 * w1 + 0.3 * np.tanh(w2) + 0.2 * z1,
               my=lambda z1, z2, w1, w2, v, x: 0.5 * x + 0.8 * np.tanh(v) + 0.4 * x * w1 + 0.3 * w2 + 0.2 * z1 * z2)
NONLINEAR_DESIGNS.setdefault('overlap', OVERLAP)
DESIGN_INDEX = {'interact': 0, 'binary': 1, 'threshold': 2, 'overlap': 3}   # the seed key of each design (the first three as the default study)
OUT = Path(os.environ.get("PSE_BENCH_OUT", Path(__file__).parent / "results"))
DRAWS = OUT / "pse_riesz_draws.csv"
EFF = ['TE', 'NDE', 'NIE', 'VDE']


def sample(design, n, rep):
    "The default study's sample of (design, n, rep)."
    return sim_nonlinear(n, design, seed=derived_rng(2026, n, rep, DESIGN_INDEX[design]))


def exact_effects(df, design):
    "The DR estimates of the effects given the exact nuisances (propensities clipped at 0.01, as in the package)."
    x, y = df.x.to_numpy(), df.y.to_numpy()
    T = list(WORLDS.values())
    props, mus = nonlinear_nuisances(df, design, T)
    props = [np.clip(p, 0.01, 0.99) for p in props]
    fe = {a: gmf_estimate(x, y, props, mus[a], a) for a in T}
    return {e: fe[p].estimate - fe[q].estimate for e, (p, q) in EFFECTS.items() if e in EFF}


def one(job):
    design, n, rep, weights = job
    sim = sample(design, n, rep)
    df, R = sim.data, sim.roles
    exact = exact_effects(df, design)
    t0, c0 = time.time(), time.process_time()
    est = PathSpecificEffects(exposure=R['x'], covariates=R['z'], mediators_first=R['w'], mediators_second=R['v'], outcome='y',
                              estimators=('DR',), star=False, warn=False, n_jobs=1, seed=rep, weights=weights)
    t = est.fit(df, truth(design)).report_.to_frame()
    t = t[t.effect.isin(EFF)].copy()
    t['exact_estimate'] = t.effect.map(exact)
    rz = est.report_.nuisances.riesz
    W = rz[(0, 0, 1)] if rz is not None else None
    t['max_weight'] = np.nan if W is None else float(W.max())
    t['at_cap'] = np.nan if W is None else int((W[:, 0] >= (1 - 1e-9) / est.clip).sum())   # stage 1's cap is 1/clip (its previous weight is 1)
    return t.assign(design=design, n=n, rep=rep, weights=weights, seconds=time.time() - t0, cpu_seconds=time.process_time() - c0,
                    load=os.getloadavg()[0], source='fit')


def import_default(ns, designs, max_seconds=np.inf, exact=True):
    """The default's fits of the default coverage study (pse_coverage_nonlinear_draws.csv, config 'default': the same samples, seeds
    and estimator as weights='propensity' here) as 'propensity' rows, with the exact-nuisance estimate computed on the same sample.
    Checked first: where both files hold a replication, the estimates and SEs agree exactly (else nothing is imported).
    exact=False: import the remaining fits at once without the exact-nuisance estimate (their coverage counts, their shift does
    not); a later run with exact=True computes it for them (`summarise` then keeps the row that has it)."""
    d = pd.read_csv(Path(__file__).parent / "results" / "pse_coverage_nonlinear_draws.csv")
    d = d[(d.config == 'default') & d.effect.isin(EFF) & d.n.isin(ns) & d.design.isin(designs)].drop(columns='config')
    prev = pd.read_csv(DRAWS)
    prev = prev[prev.weights == 'propensity']
    both = prev.merge(d, on=['design', 'n', 'rep', 'effect'], suffixes=('', '_default'))
    gap = max(float((both.estimate - both.estimate_default).abs().max()), float((both.se - both.se_default).abs().max()))
    print(f"{both.groupby(['design', 'n']).rep.nunique().sum()} replications in both files; largest |difference| of estimate or SE: {gap:g}")
    if not gap == 0: raise SystemExit("the default study's draws are not today's default: not imported")
    prev = prev[prev.exact_estimate.notna()] if exact else prev
    done = set(zip(prev.design, prev.n, prev.rep))
    todo = sorted({k for k in zip(d.design, d.n, d.rep) if k not in done}, key=lambda k: (k[2], k[1], k[0]))
    print(f"{len(todo)} replications to import", flush=True)
    t0 = time.time()
    for i, (dsg, n, rep) in enumerate(todo):
        if time.time() - t0 > max_seconds: print(f"stopped after {i} ({time.time() - t0:.0f} s)"); break
        t = d[(d.design == dsg) & (d.n == n) & (d.rep == rep)].copy()
        t['exact_estimate'] = t.effect.map(exact_effects(sample(dsg, n, rep).data, dsg)) if exact else np.nan
        t = t.assign(weights='propensity', cpu_seconds=np.nan, max_weight=np.nan, at_cap=np.nan, source='default_study')
        t[pd.read_csv(DRAWS, nrows=0).columns].to_csv(DRAWS, mode='a', header=False, index=False)


def wilson(k, m, z=1.959964):
    p = k / m; c = (p + z * z / (2 * m)) / (1 + z * z / m); h = z * np.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / (1 + z * z / m)
    return c - h, c + h


def dedupe(d):
    "One row per (weights, design, n, rep, effect): a row with its exact-nuisance estimate before one imported without it."
    return (d.assign(_no_exact=d.exact_estimate.isna()).sort_values('_no_exact', kind='stable')
             .drop_duplicates(['weights', 'design', 'n', 'rep', 'effect']).drop(columns='_no_exact').sort_index())


def summarise(d):
    """Per cell: coverage, SD and SE/SD over every replication; the paired shift over those with an exact-nuisance estimate
    (`shift_reps`; fewer than `reps` only where default-study fits were imported without it, `--import-default --no-exact`)."""
    d = dedupe(d)
    rows = []
    for (w, dsg, n, eff), g in d.groupby(['weights', 'design', 'n', 'effect'], sort=False):
        m = len(g); shift = (g.estimate - g.exact_estimate).dropna(); ms = len(shift); sd = g.estimate.std()
        k = int(((g.ci_low <= g.truth) & (g.truth <= g.ci_high)).sum())
        lo, hi = wilson(k, m)
        rows.append(dict(weights=w, design=dsg, n=n, effect=eff, reps=m, shift=shift.mean(), shift_mcse=shift.std(ddof=1) / np.sqrt(ms),
                         abs_shift_over_sd=abs(shift.mean()) / sd, sd=sd, mean_se=g.se.mean(), se_over_sd=g.se.mean() / sd,
                         coverage=k / m, wilson_low=lo, wilson_high=hi, sec_per_fit=g.groupby('rep').seconds.first().median(),
                         cpu_per_fit=g.groupby('rep').cpu_seconds.first().median(),
                         max_weight=g.max_weight.max() if 'max_weight' in g else np.nan,
                         fits_at_cap=int((g.groupby('rep').at_cap.first() > 0).sum()) if 'at_cap' in g and g.at_cap.notna().any() else np.nan,
                         shift_reps=ms))
    order = {e: i for i, e in enumerate(EFF)}
    return pd.DataFrame(rows).sort_values(['design', 'n', 'effect', 'weights'], key=lambda c: c.map(order) if c.name == 'effect' else c, kind='stable')


def acceptance(d, s):
    """Issue 40's acceptance lines per (weights, design, n): pooled coverage of TE, NDE, NIE and VDE with its Wilson 95% interval
    (over 4 x reps intervals, which are correlated within a replication, so the interval is too narrow), the lowest cell coverage and
    the lowest one-sided 95% Wilson upper bound of a cell (fails below 0.93), the largest |shift|/SD and its Monte Carlo SE."""
    d = dedupe(d[d.effect.isin(EFF)]).assign(covered=lambda q: (q.ci_low <= q.truth) & (q.truth <= q.ci_high))
    rows = []
    for (w, dsg, n), g in d.groupby(['weights', 'design', 'n']):
        c = s[(s.weights == w) & (s.design == dsg) & (s.n == n)].copy()
        c['upper_1s'] = [wilson(round(cv * m), m, z=1.644854)[1] for cv, m in zip(c.coverage, c.reps)]
        c['ratio_mcse'] = c.shift_mcse / c.sd
        worst = c.loc[c.abs_shift_over_sd.fillna(-np.inf).idxmax()]
        k, m = int(g.covered.sum()), len(g); lo, hi = wilson(k, m)
        rows.append(dict(weights=w, design=dsg, n=n, reps=g.rep.nunique(), pooled_coverage=k / m, pooled_low=lo, pooled_high=hi,
                         min_cell_coverage=c.coverage.min(), min_cell_upper_1s=c.upper_1s.min(),
                         cell_of_min_upper=c.loc[c.upper_1s.idxmin(), 'effect'], max_abs_shift_over_sd=worst.abs_shift_over_sd,
                         its_mcse=worst.ratio_mcse, its_effect=worst.effect, shift_reps=int(c.shift_reps.min())))
    return pd.DataFrame(rows).sort_values(['n', 'design', 'weights'])


def write_summary():
    d = pd.read_csv(DRAWS)
    s = summarise(d)
    s.to_csv(OUT / "pse_riesz.csv", index=False)
    acc = acceptance(d, s)
    acc.to_csv(OUT / "pse_riesz_acceptance.csv", index=False)
    notes = OUT / "pse_riesz_notes.md"      # the hand-written findings, kept across reruns
    findings = notes.read_text() + "\n" if notes.exists() else ""
    findings += ("## Acceptance lines per (weights, design, n)\n\nPooled coverage of TE, NDE, NIE, VDE with its Wilson 95% interval "
                 "(4 x reps intervals, correlated within a replication); `min_cell_upper_1s`: the lowest one-sided 95% Wilson upper bound of "
                 "a cell (the line fails below 0.93); `max_abs_shift_over_sd`: the largest |paired shift|/SD over the four effects, `its_mcse` "
                 "its Monte Carlo SE (shift MCSE / SD).\n\n" + markdown_table(acc.round(4)) + "\n\n## All cells\n\n")
    head = ("# Learned Riesz representers against propensity-ratio weights (issue 40 screening)\n\n"
            "DR estimator, default learners, `PathSpecificEffects(weights=...)`, paired on the same samples; `shift` = mean of "
            "(estimate - estimate with the exact nuisances) on the same sample, with its Monte Carlo SE; coverage of the 95% interval "
            "with its Wilson 95% interval; seconds per fit (wall and CPU of one worker) on a shared 2-core machine at a median load "
            f"average of {d.load.median():.1f} (noisy). `riesz_net_v1` is the first network (its draws kept, not mixed), `riesz_net` the "
            "second; `max_weight`: the largest learned weight of psi(0,0,1) over all draws; `fits_at_cap`: draws where a stage-1 learned "
            "weight sat at the 1/clip cap (blank: not recorded). Command: see the docstring of bench_pse_riesz.py.\n\n")
    (OUT / "pse_riesz.md").write_text(head + findings + markdown_table(s.round(4)) + "\n")
    print(head + s.round(3).to_string(index=False))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--n', type=int, nargs='+', default=[2_000])
    ap.add_argument('--reps', type=int, default=100)
    ap.add_argument('--designs', nargs='+', default=list(DESIGN_INDEX))
    ap.add_argument('--weights', nargs='+', default=['propensity', 'riesz_sieve', 'riesz_net'])
    ap.add_argument('--workers', type=int, default=1)
    ap.add_argument('--max-seconds', type=float, default=np.inf, help='stop submitting new fits after this many seconds')
    ap.add_argument('--summarise', action='store_true')
    ap.add_argument('--import-default', action='store_true', help="take the default's fits from the default coverage study (import_default)")
    ap.add_argument('--no-exact', action='store_true', help="with --import-default: import without the exact-nuisance estimate")
    a = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    if a.summarise: return write_summary()
    done = set()
    if DRAWS.exists():
        prev = pd.read_csv(DRAWS)
        if 'max_weight' not in prev:            # draws from before the second network: their riesz_net rows are the first network's
            prev['weights'] = prev.weights.replace({'riesz_net': 'riesz_net_v1'})
            prev = prev.assign(max_weight=np.nan, at_cap=np.nan)
            prev.to_csv(DRAWS, index=False)
        if 'source' not in prev:                # draws from before the import: every row was fitted here
            prev.assign(source='fit').to_csv(DRAWS, index=False)
        done = set(zip(prev.weights, prev.design, prev.n, prev.rep))
    if a.import_default:
        import_default(a.n, a.designs, a.max_seconds, exact=not a.no_exact)
        return write_summary()
    # interleaved, so a stopped run leaves every (weights, design, n) with the same replications
    jobs = [(dsg, n, rep, w) for rep in range(a.reps) for n in a.n for dsg in a.designs for w in a.weights if (w, dsg, n, rep) not in done]
    print(f"{len(jobs)} fits to run", flush=True)
    for dsg in a.designs: truth(dsg)
    t0 = time.time()
    with ProcessPoolExecutor(a.workers) as pool:
        for i, job in enumerate(jobs):
            if time.time() - t0 > a.max_seconds: print(f"stopped after {i} fits ({time.time() - t0:.0f} s)"); break
            t = pool.submit(one, job).result()
            if DRAWS.exists(): t = t[pd.read_csv(DRAWS, nrows=0).columns]    # the file's column order (appended rows have no header)
            t.to_csv(DRAWS, mode='a', header=not DRAWS.exists(), index=False)
    write_summary()


if __name__ == "__main__":
    main()
