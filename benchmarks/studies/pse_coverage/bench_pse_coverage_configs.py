"""Settings and learners (n_repeats=5, n_folds=10, propensity learners; `CONFIGS` in bench_pse_coverage_nonlinear.py) against the package defaults, PAIRED: the same
`sim_nonlinear` samples and seeds as the default rows of benchmarks/studies/pse_coverage/results/pse_coverage_nonlinear_draws.csv.

Step 1 (the fits; resumable, niced, one worker):
  mkdir -p /tmp/pse_cfg && PSE_BENCH_OUT=/tmp/pse_cfg .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_coverage_nonlinear.py \
      --n 2000 --designs binary --reps 100 --config folds10 repeats5 --workers 1
Step 2 (this script: copies the new draws to benchmarks/studies/pse_coverage/results/pse_coverage_configs_draws.csv and writes the paired table
benchmarks/studies/pse_coverage/results/pse_coverage_configs.{csv,md}):
  .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_coverage_configs.py /tmp/pse_cfg/pse_coverage_nonlinear_draws.csv
(the measured runs used /tmp/i13_cfg in place of /tmp/pse_cfg: --n 2000 --designs binary --reps 100 --config folds10 repeats5, then
 --n 2000 --designs binary threshold --reps 100 --config glmprop, then the same with --config hgbloose, then
 --n 2000 --designs binary threshold interact --reps 100 --config hgbloose_r5, then
 --n 5000 --designs threshold interact binary --reps 60 --config gblogit; and, with PSE_BENCH_OUT=/tmp/i13_r5k,
 --n 5000 --designs binary threshold interact --reps 60 --config hgbloose_r5, stopped at 59 replications per design, its draws
 appended to /tmp/i13_cfg's for step 2; then variance='subsample' in two concurrent runs, PSE_BENCH_OUT=/tmp/hs_b with
 --n 2000 5000 --designs binary --reps 200 --config subsample --workers 1, and PSE_BENCH_OUT=/tmp/hs_a with
 --n 2000 --designs threshold interact (stopped after 15-16 replications per design) followed by --n 5000 --designs threshold interact,
 both stopped when the session's time ran out; their draws appended to the committed pse_coverage_configs_draws.csv for step 2;
 then PSE_BENCH_OUT=/tmp/e0 with --n 5000 2000 --designs threshold interact binary --reps 200 --config e0logit --workers 2 (16 minutes),
 its draws appended to the committed file the same way; then the subsample runs extended, PSE_BENCH_OUT=/tmp/hs2 seeded with the committed
 subsample draws: --n 2000 --designs threshold interact --reps 100 --config subsample --workers 2, then --n 5000 2000 --designs threshold
 interact binary --reps 100 (stopped at 92 replications per design); merged into the committed file, duplicates dropped)
"""
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from trustml_nb.core import markdown_table

RES = Path(__file__).parent / "results"


def paired(new:pd.DataFrame, base:pd.DataFrame)->pd.DataFrame:
    "Per (config, design, n, effect): the config's coverage, SE/SD, bias, and its paired shifts against the default on the same reps."
    key = ['design', 'n', 'rep', 'effect']
    b = base[base.config == 'default'].set_index(key)
    rows = []
    for (cfg, dsg, n, eff), g in new.groupby(['config', 'design', 'n', 'effect'], sort=False):
        g = g.set_index(key)
        d = b.reindex(g.index)
        ok = d.estimate.notna().to_numpy()
        g, d = g[ok], d[ok]
        r = len(g)
        cov = lambda t: ((t.ci_low <= t.truth) & (t.truth <= t.ci_high)).mean()
        row = dict(config=cfg, design=dsg, n=n, effect=eff, reps=r)
        for sfx, t in (('default', d), ('config', g)):
            row[f'coverage_{sfx}'] = cov(t)
            row[f'se_over_sd_{sfx}'] = t.se.mean() / t.estimate.std()
            row[f'bias_over_sd_{sfx}'] = (t.estimate - t.truth).mean() / t.estimate.std()
            row[f'mean_se_{sfx}'] = t.se.mean(); row[f'sd_{sfx}'] = t.estimate.std()
        row['coverage_se'] = np.sqrt(row['coverage_config'] * (1 - row['coverage_config']) / r)
        ratio = g.se.to_numpy() / d.se.to_numpy()
        row['se_ratio_vs_default'], row['se_ratio_mcse'] = ratio.mean(), ratio.std(ddof=1) / np.sqrt(r)
        shift = g.estimate.to_numpy() - d.estimate.to_numpy()
        row['est_shift'], row['est_shift_mcse'] = shift.mean(), shift.std(ddof=1) / np.sqrt(r)
        rows.append(row)
    return pd.DataFrame(rows)


def main(new_draws):
    new = pd.read_csv(new_draws)
    new = new[new.config != 'default']
    new.to_csv(RES / "pse_coverage_configs_draws.csv", index=False)
    base = pd.read_csv(RES / "pse_coverage_nonlinear_draws.csv")
    s = paired(new, base)
    s.to_csv(RES / "pse_coverage_configs.csv", index=False)
    secs = new.groupby('config').seconds.median()
    head = ("# Settings and propensity learners, paired with the defaults\n\n"
            "Same samples and seeds as the `default` rows of `pse_coverage_nonlinear_draws.csv` (DR estimator, boosting learners). "
            "`repeats5` = `n_repeats=5` (median over 5 fold splits, se^2 = median(se_r^2 + (est_r - median)^2)); `folds10` = `n_folds=10`; "
            "`glmprop` = `learners={'propensity': 'glm'}`; `hgbloose` = boosted propensities with less shrinkage (min_samples_leaf 20, no L2, patience 30); `hgbloose_r5` = `hgbloose` with `n_repeats=5`; "
            "`gblogit` = propensities by sklearn's GradientBoostingClassifier started from a standardised logistic regression (`init=`). "
            "`subsample` = `variance='subsample'` (the default learners and estimates; SEs from 20 half-sample refits); `e0logit` = `gblogit` for e0 = P(X=1 | Z) only, the default booster for e1, e2. "
            "Columns `*_config` are the config, `*_default` the package defaults on the same replications; `se_ratio_vs_default` is the mean paired ratio of the SEs; "
            "`est_shift` the mean paired change of the estimate (each with its Monte Carlo SE). "
            "Commands: see the docstring of `benchmarks/studies/pse_coverage/bench_pse_coverage_configs.py`. Median seconds per fit: "
            + ", ".join(f"{k} {v:.1f}" for k, v in secs.items())
            + f" at a median load average of {new.load.median():.1f} (2 shared cores, one niced worker).\n\n")
    (RES / "pse_coverage_configs.md").write_text(head + markdown_table(s.round(4)) + "\n")
    print(head + s.round(4).to_string(index=False))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/pse_cfg/pse_coverage_nonlinear_draws.csv")
