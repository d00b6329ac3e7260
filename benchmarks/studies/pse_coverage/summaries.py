"""Study (PSE coverage): the two small summaries that nbs/11 reads instead of this study's per-replication draws.

`pse_coverage_candidates_shift.csv`: per design and effect, the paired shift of the stacked learner's estimate from the
default learners' on the same samples (mean, standard error, pairs). `pse_pipeline_bootstrap_se_over_sd.csv`: mean SE of each
interval route of the pipeline-bootstrap pilot over the SD of the default estimates on 200 samples (binary design,
n = 2,000), with the pilot's sample and resample counts. Both are written to results/ here; `benchmarks/ship.py` copies them
into the package. Run: python benchmarks/studies/pse_coverage/run.py summaries
"""
from pathlib import Path

import pandas as pd

OUT = Path(__file__).resolve().parent / "results"


def candidates_shift(out:Path=OUT)->pd.DataFrame:
    "Paired shift of the stacked learner (config 'stack') from the default learners, per design and effect."
    cand = pd.read_csv(out / 'pse_coverage_candidates_draws.csv')
    base = pd.read_csv(out / 'pse_coverage_nonlinear_draws.csv').query("config == 'default'")
    pair = cand.merge(base, on=['design', 'n', 'rep', 'effect'], suffixes=('_stack', '_default'))
    return pair.assign(d=pair.estimate_stack - pair.estimate_default).groupby(['design', 'effect']).d.agg(['mean', 'sem', 'size'])


def pipeline_bootstrap_se_over_sd(out:Path=OUT)->pd.DataFrame:
    "Mean SE per interval route of the pipeline-bootstrap pilot over the SD of 200 default estimates (binary, n = 2,000)."
    pilot = pd.read_csv(out / 'pse_pipeline_bootstrap_binary_2000_draws.csv')
    base = pd.read_csv(out / 'pse_coverage_nonlinear_draws.csv').query("config == 'default' and design == 'binary' and n == 2000")
    sd200 = base.groupby('effect').estimate.std()
    ratio = pilot.groupby(['combo', 'effect']).se.mean().unstack().div(sd200[['TE', 'NDE', 'NIE', 'VDE']])
    return ratio.assign(samples=pilot.rep.nunique(), resamples=int(pilot.n_boot.max()), base_samples=len(base) // base.effect.nunique())


def write(out:Path=OUT)->list:
    "Write both summaries into `out`; return their paths."
    paths = [out / 'pse_coverage_candidates_shift.csv', out / 'pse_pipeline_bootstrap_se_over_sd.csv']
    candidates_shift(out).reset_index().to_csv(paths[0], index=False)
    pipeline_bootstrap_se_over_sd(out).reset_index().to_csv(paths[1], index=False)
    return paths


if __name__ == '__main__':
    for p in write(): print(p)
