"""Less-shrunk boosting for the nested REGRESSIONS, alone and with less-shrunk propensities, paired against the exact-nuisance
estimator (issue 40; the lever bench_pse_swap_paired.py's diagnosis points to: `threshold` TE's shift vanishes with mu1 exact,
`interact` NDE's with mu3 exact).

Candidates, each through the public `learners=` argument (`crossfit_gmf` / `PathSpecificEffects`):
  R:loose    learners={'outcome': L, 'pseudo': L}, L = HistGradientBoosting{Regressor,Classifier}(**LOOSE, random_state=seed)
             (the classifier for the outcome of the binary-outcome design, as the 'hgb' preset does); propensities the default's
  all:loose  learners={'propensity': HistGradientBoostingClassifier(**LOOSE), 'outcome': L, 'pseudo': L}
  R:loose|props exact   R:loose's regressions with the exact propensities (a diagnostic: is what is left the regressions' error?)
  --regs deep: R:deep, P:loose+R:deep, R:deep|props exact, the same with DEEP = LOOSE but learning_rate=0.1, max_leaf_nodes=31,
             min_samples_leaf=10 (more capacity); draws in results/pse_regs_paired_deep_draws.csv
LOOSE = bench_pse_swap_paired.LOOSE (max_iter=1000, learning_rate=0.05, max_leaf_nodes=8, min_samples_leaf=20, l2_regularization=0,
early stopping on 20%, n_iter_no_change=30), against the preset's max_iter=300, min_samples_leaf=40, l2_regularization=1,
n_iter_no_change=10. The regressions do not depend on the propensity learner (nested='fold'), so one cross-fit of R:loose serves
both candidates; all:loose's propensities are cross-fitted on the package's folds (`crossfit_props`, which reproduces the package's
propensities exactly; checked in bench_pse_swap_paired.py). The first replication of every run checks that the combination equals
`PathSpecificEffects(learners=R:loose)`'s own DR estimates.

Same samples (derived_rng(2026, n, rep, design index)) and folds (seed=rep, 5 folds, nested='fold', clip 0.01) as the default
study, bench_pse_riesz.py and bench_pse_swap_paired.py. Nothing there is refitted: the default's estimates and the exact-nuisance
estimates come from results/pse_riesz_draws.csv (weights='propensity', n = 5,000; 200 replications per design). The exact-nuisance
estimate is recomputed here only as a check (no fitting; it must equal the stored one).

Shift = est - est_exact on the same sample (mean, Monte Carlo SE); |shift|/SD with SD = the SD of the default's estimates on the
same replications (as in bench_pse_swap_paired.py); SE/SD with the candidate's own SD; coverage of est +- 1.96 SE (influence-function
SE) against the population truth, with a Wilson 95% interval.

Overlap interval width (`--subsample`): PathSpecificEffects(variance='subsample') (default learners, 20 half-samples) on the
`overlap` design's samples; its estimates equal the default's, only the SEs change; SE/SD against the SD of the default's 200
estimates, coverage with Wilson intervals. Draws in results/pse_overlap_subsample_draws.csv.

Run:  nice -n 15 .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_regs_paired.py --reps 50 [--designs ...] [--max-seconds S]
      nice -n 15 .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_regs_paired.py --subsample --reps 100 [--max-seconds S]
      .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_regs_paired.py --summarise
Resumable: draws in results/pse_regs_paired_draws.csv (a rerun skips the (design, rep) there; replications interleave the designs,
so a stopped run leaves them balanced); tables results/pse_regs_paired.{csv,md} and results/pse_overlap_subsample.{csv,md}.
"""
import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")
from trustml_nb.core import markdown_table
from trustml_nb.pse import PathSpecificEffects, crossfit_gmf
from trustml_nb.pse_simulator import NONLINEAR_DESIGNS, WORLDS, nonlinear_nuisances

sys.path.insert(0, str(Path(__file__).parent))
from bench_pse_riesz import DESIGN_INDEX, sample, wilson        # noqa: E402  (also registers the 'overlap' design)
from bench_pse_swap_paired import CLIP, LOOSE, combo_rows, crossfit_props   # noqa: E402
from bench_pse_coverage_nonlinear import truth                  # noqa: E402

OUT = Path(os.environ.get("PSE_BENCH_OUT", Path(__file__).parent / "results"))
DRAWS, SUB = OUT / "pse_regs_paired_draws.csv", OUT / "pse_overlap_subsample_draws.csv"
EFF = ['TE', 'NDE', 'NIE', 'VDE']
N = 5000
DEEP = dict(LOOSE, learning_rate=0.1, max_leaf_nodes=31, min_samples_leaf=10)   # more capacity: deeper trees, smaller leaves, faster
REGS = {'loose': LOOSE, 'deep': DEEP}


def draws_file(regs):
    return DRAWS if regs == 'loose' else OUT / f"pse_regs_paired_{regs}_draws.csv"


def loose_learners(binary_y, seed, propensity=False, regs='loose'):
    "R:loose's learners dict (with propensity=True: all:loose's); regs='deep': R:deep's (the propensities, if asked, still LOOSE)."
    kw = REGS[regs]
    reg = HistGradientBoostingRegressor(**kw, random_state=seed)
    out = {'outcome': HistGradientBoostingClassifier(**kw, random_state=seed) if binary_y else reg, 'pseudo': reg}
    if propensity: out['propensity'] = HistGradientBoostingClassifier(**LOOSE, random_state=seed)
    return out


def stored():
    "The default's estimates and the exact-nuisance estimates at n = 5,000 (bench_pse_riesz.py), one row per (design, rep, effect)."
    d = pd.read_csv(OUT / "pse_riesz_draws.csv")
    d = d[(d.weights == 'propensity') & (d.n == N) & d.effect.isin(EFF) & d.exact_estimate.notna()]
    d = d.drop_duplicates(['design', 'rep', 'effect'])
    return d[['design', 'rep', 'effect', 'estimate', 'se', 'exact_estimate']].rename(columns={'estimate': 'est_default', 'se': 'se_default'})


def one_rep(design, rep, T, ref, check=False, regs='loose'):
    t0 = time.time()
    sim = sample(design, N, rep)
    df = sim.data
    x, y = df.x.to_numpy(), df.y.to_numpy()
    blocks = [df[['z1', 'z2']].to_numpy(), df[['w1', 'w2']].to_numpy(), df[['v']].to_numpy()]
    H = [np.column_stack(blocks[:k + 1]) for k in range(3)]
    binary_y = NONLINEAR_DESIGNS[design]['binary']
    c0 = time.process_time()
    cf = crossfit_gmf(x, y, blocks, T, learners=loose_learners(binary_y, rep, regs=regs), seed=rep, clip=CLIP, n_jobs=1, binary_y=binary_y)
    cpu_r = time.process_time() - c0
    c1 = time.process_time()
    lp = crossfit_props(x, H, HistGradientBoostingClassifier(**LOOSE, random_state=rep), rep)
    cpu_p = time.process_time() - c1
    tp, tm = nonlinear_nuisances(df, design, T)
    tp = [np.clip(p, CLIP, 1 - CLIP) for p in tp]
    combos = {f'R:{regs}': (cf.propensities, cf.regressions), 'all:loose' if regs == 'loose' else f'P:loose+R:{regs}': (lp, cf.regressions),
              f'R:{regs}|props exact': (tp, cf.regressions), 'TT': (tp, tm)}
    d = combo_rows(design, N, rep, x, y, combos, T, truth(design))
    tt = d[d.combo == 'TT'].set_index('effect').est
    r = ref[(ref.design == design) & (ref.rep == rep)].set_index('effect')
    gap = float((tt - r.exact_estimate).abs().max())
    if not gap < 1e-10: raise SystemExit(f"{design} rep {rep}: the exact-nuisance estimate differs from the stored one by {gap:g}")
    if check:   # the combination is what the public estimator returns for learners=R:loose
        R = sim.roles
        pe = PathSpecificEffects(exposure=R['x'], covariates=R['z'], mediators_first=R['w'], mediators_second=R['v'], outcome='y',
                                 estimators=('DR',), star=False, warn=False, n_jobs=1, seed=rep, learners=loose_learners(binary_y, rep, regs=regs))
        t = pe.fit(df).report_.to_frame().set_index('effect').estimate
        mine = d[d.combo == f'R:{regs}'].set_index('effect').est
        g2 = float((t.reindex(EFF) - mine.reindex(EFF)).abs().max())
        if not g2 < 1e-10: raise SystemExit(f"{design} rep {rep}: PathSpecificEffects(learners=R:loose) differs by {g2:g}")
        print(f"check {design} rep {rep}: PathSpecificEffects(learners=R:{regs}) reproduced (gap {g2:.1e})", flush=True)
    d = d[d.combo != 'TT']
    d['est_exact'] = d.effect.map(r.exact_estimate)
    d['est_default'] = d.effect.map(r.est_default)
    return d.assign(seconds=time.time() - t0, cpu_regs_loose_fit=cpu_r, cpu_loose_props=cpu_p, load=os.getloadavg()[0])


def one_subsample(rep, ref):
    sim = sample('overlap', N, rep); R = sim.roles
    t0, c0 = time.time(), time.process_time()
    pe = PathSpecificEffects(exposure=R['x'], covariates=R['z'], mediators_first=R['w'], mediators_second=R['v'], outcome='y',
                             estimators=('DR',), star=False, warn=False, n_jobs=1, seed=rep, variance='subsample', show_progress=False)
    t = pe.fit(sim.data, truth('overlap')).report_.to_frame()
    t = t[t.effect.isin(EFF)][['effect', 'estimate', 'se', 'ci_low', 'ci_high', 'truth']].copy()
    r = ref[(ref.design == 'overlap') & (ref.rep == rep)].set_index('effect')
    gap = float((t.set_index('effect').estimate - r.est_default).abs().max())
    if not gap < 1e-10: raise SystemExit(f"overlap rep {rep}: variance='subsample' changed the estimate by {gap:g}")
    return t.assign(se_influence=t.effect.map(r.se_default), rep=rep, seconds=time.time() - t0, cpu_seconds=time.process_time() - c0,
                    load=os.getloadavg()[0])


def summarise_regs(d, ref):
    d = d.assign(shift=d.est - d.est_exact, covered=lambda q: abs(q.est - q.truth) <= 1.959964 * q.se)
    rows = []
    for (dsg, combo, eff), g in d.groupby(['design', 'combo', 'effect'], sort=False):
        m = len(g); k = int(g.covered.sum()); lo, hi = wilson(k, m); up1 = wilson(k, m, z=1.644854)[1]
        sd_def = g.est_default.std(); dshift = g.est_default - g.est_exact
        rows.append(dict(design=dsg, combo=combo, effect=eff, reps=m, shift=g['shift'].mean(), shift_mcse=g['shift'].std() / np.sqrt(m),
                         abs_shift_over_sd=abs(g['shift'].mean()) / sd_def, its_mcse=g['shift'].std() / np.sqrt(m) / sd_def,
                         default_abs_shift_over_sd=abs(dshift.mean()) / sd_def, sd=g.est.std(), sd_default=sd_def,
                         se_over_sd=g.se.mean() / g.est.std(), coverage=k / m, wilson_low=lo, wilson_high=hi, upper_1s=up1,
                         cpu_regs_loose_fit=g.groupby('rep').cpu_regs_loose_fit.first().median(),
                         cpu_loose_props=g.groupby('rep').cpu_loose_props.first().median()))
    order = {e: i for i, e in enumerate(EFF)}
    return pd.DataFrame(rows).sort_values(['design', 'combo', 'effect'], key=lambda c: c.map(order) if c.name == 'effect' else c, kind='stable')


def summarise_sub(d, ref):
    sd200 = ref[ref.design == 'overlap'].groupby('effect').est_default.std()
    d = d.assign(covered=(d.ci_low <= d.truth) & (d.truth <= d.ci_high),
                 covered_inf=lambda q: abs(q.estimate - q.truth) <= 1.959964 * q.se_influence)
    rows = []
    for eff, g in d.groupby('effect'):
        m = len(g); k = int(g.covered.sum()); lo, hi = wilson(k, m); ki = int(g.covered_inf.sum())
        rows.append(dict(effect=eff, reps=m, mean_se_subsample=g.se.mean(), mean_se_influence=g.se_influence.mean(),
                         se_ratio_sub_over_inf=(g.se / g.se_influence).mean(), its_mcse=(g.se / g.se_influence).std() / np.sqrt(m), sd_default_200=sd200[eff],
                         se_over_sd_subsample=g.se.mean() / sd200[eff], se_over_sd_subsample_mcse=g.se.std() / np.sqrt(m) / sd200[eff], se_over_sd_influence=g.se_influence.mean() / sd200[eff],
                         coverage_subsample=k / m, wilson_low=lo, wilson_high=hi, upper_1s=wilson(k, m, z=1.644854)[1],
                         coverage_influence_same_reps=ki / m, cpu_per_fit=g.groupby('rep').cpu_seconds.first().median()))
    k, m = int(d.covered.sum()), len(d); lo, hi = wilson(k, m)
    rows.append(dict(effect='pooled', reps=d.rep.nunique(), coverage_subsample=k / m, wilson_low=lo, wilson_high=hi,
                     coverage_influence_same_reps=d.covered_inf.mean()))
    order = {e: i for i, e in enumerate(EFF + ['pooled'])}
    return pd.DataFrame(rows).sort_values('effect', key=lambda c: c.map(order))


def write():
    ref = stored()
    for regs in REGS:
        if not draws_file(regs).exists(): continue
        d = pd.read_csv(draws_file(regs))
        stem = OUT / ("pse_regs_paired" if regs == 'loose' else f"pse_regs_paired_{regs}")
        s = summarise_regs(d, ref)
        s.to_csv(f"{stem}.csv", index=False)
        per = d.groupby(['design', 'rep']).first()
        title = ("Less-shrunk regressions (R:loose) and all learners less shrunk (all:loose)" if regs == 'loose' else
                 "More-capacity regressions (R:deep: DEEP of the docstring), alone and with less-shrunk propensities (P:loose+R:deep)")
        head = (f"# {title}, paired, n = {N:,}\n\n"
                f"Replications per design: {d.groupby('design').rep.nunique().to_dict()}. Same samples and folds as the default study; "
                "`shift` = mean of (estimate - exact-nuisance estimate on the same sample) with its Monte Carlo SE; `abs_shift_over_sd` and "
                "`its_mcse` divide by the SD of the default's estimates on the same replications; `default_abs_shift_over_sd`: the default's "
                "on the same replications; `se_over_sd` with the candidate's own SD; coverage of est +- 1.96 SE with its Wilson 95% interval, "
                f"`upper_1s` its one-sided 95% upper bound. CPU s (one worker): `cpu_regs_loose_fit` the whole R:{regs} cross-fit (default "
                f"propensities + {regs} regressions), `cpu_loose_props` all:loose's extra propensity fits. Median wall s per replication "
                f"(both candidates and the checks) {per.seconds.median():.1f} at a median load average of {per.load.median():.1f} "
                "(2 shared cores, one niced process). Command: `nice -n 15 .venv/bin/python "
                f"benchmarks/studies/pse_coverage/bench_pse_regs_paired.py --reps 50 --regs {regs}` (see its docstring).\n\n")
        Path(f"{stem}.md").write_text(head + markdown_table(s.round(4)) + "\n")
        print(head + s.round(3).to_string(index=False), flush=True)
    if SUB.exists():
        d = pd.read_csv(SUB)
        s = summarise_sub(d, ref)
        s.to_csv(OUT / "pse_overlap_subsample.csv", index=False)
        head = (f"# variance='subsample' on the `overlap` design, n = {N:,}, {d.rep.nunique()} replications\n\n"
                "Default learners, 20 half-samples; the estimates are the default's (checked), only the SEs differ. SE/SD against the SD "
                "of the default's 200 estimates; `coverage_influence_same_reps`: the default (influence-function) interval on the same "
                f"replications. CPU s per fit (one worker) median {d.groupby('rep').cpu_seconds.first().median():.1f}, wall "
                f"{d.groupby('rep').seconds.first().median():.1f} s at a median load average of {d.load.median():.1f}. Command: `nice -n 15 "
                ".venv/bin/python benchmarks/studies/pse_coverage/bench_pse_regs_paired.py --subsample --reps 100` (resumable; it stops at "
                "`--max-seconds`). `its_mcse`: the Monte Carlo SE of the mean SE ratio; `se_over_sd_subsample_mcse` that of the mean SE only "
                "(the SD of 200 estimates adds about 5% relative error).\n\n")
        (OUT / "pse_overlap_subsample.md").write_text(head + markdown_table(s.round(4)) + "\n")
        print(head + s.round(3).to_string(index=False), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--reps', type=int, default=50); ap.add_argument('--rep-from', type=int, default=0)
    ap.add_argument('--designs', nargs='+', default=list(DESIGN_INDEX))
    ap.add_argument('--max-seconds', type=float, default=np.inf)
    ap.add_argument('--regs', choices=list(REGS), default='loose')
    ap.add_argument('--subsample', action='store_true'); ap.add_argument('--summarise', action='store_true')
    a = ap.parse_args()
    if a.summarise: return write()
    ref, T, t0 = stored(), list(WORLDS.values()), time.time()
    if a.subsample:
        done = set(pd.read_csv(SUB).rep) if SUB.exists() else set()
        for rep in range(a.rep_from, a.reps):
            if rep in done: continue
            if time.time() - t0 > a.max_seconds: print(f"stopped before rep {rep} ({time.time() - t0:.0f} s)"); break
            t = one_subsample(rep, ref)
            t.to_csv(SUB, mode='a', header=not SUB.exists(), index=False)
            print(f"subsample rep {rep}: {t.seconds.iloc[0]:.1f} s, cpu {t.cpu_seconds.iloc[0]:.1f} s", flush=True)
        return write()
    out = draws_file(a.regs)
    done = set(zip(*pd.read_csv(out)[['design', 'rep']].values.T)) if out.exists() else set()
    checked = set()
    for rep in range(a.rep_from, a.reps):
        for dsg in a.designs:
            if (dsg, rep) in done: continue
            if time.time() - t0 > a.max_seconds: print(f"stopped before {dsg} rep {rep} ({time.time() - t0:.0f} s)"); return write()
            d = one_rep(dsg, rep, T, ref, check=dsg not in checked, regs=a.regs); checked.add(dsg)
            d.to_csv(out, mode='a', header=not out.exists(), index=False)
            print(f"{dsg} rep {rep}: {d.seconds.iloc[0]:.1f} s, cpu R:{a.regs} fit {d.cpu_regs_loose_fit.iloc[0]:.1f} s, "
                  f"loose props {d.cpu_loose_props.iloc[0]:.1f} s, load {d.load.iloc[0]:.1f}", flush=True)
    write()


if __name__ == "__main__":
    main()
