"""Rejection at random (issue #22): the Poisson-binomial recursion (ours, O(M^2)) against the authors' route, enumerating
every 0/1 pattern of the M models (2^M terms; `monoculture.poisson_binomial_enumerate`), on the same probabilities.

Part 1 (agreement and speed, M = 2..18): both on the same random rejection rates (seed 0); largest absolute difference
of the two distributions, median time of each, ratio enumeration / recursion. Enumeration stops at M = 18 (262,144
patterns, seconds per call); it doubles with every model.
Part 2 (recursion alone, M = 50 and 500): median time; enumeration_extrapolated_s = the M = 18 enumeration time x 2^(M-18) x M/18
(not run: an estimate of the authors' route); the distribution's sum is checked to be 1 within 1e-12, and for
equal probabilities the recursion is compared with scipy's binomial pmf (a peer that shares no code).
Part 3 (the measures, the notebook's setting): ModelEcosystem(seed=0) of 30 models on Adult (adult_task, 5,000 rows drawn
with seed 0: 3,000 fit, 2,000 evaluated) and German credit (german_task: 600 fit, 400 evaluated, seed 0); every measure with
a 95% percentile bootstrap interval (200 resamples of the people, seed 0) and its null's value and interval, for each of
the three nulls (difficulty: the ecosystem's mean score in 10 bins); plus homogenization and verdict.
Part 4 (prompt multiplicity): the shipped language-model answers (trustml_nb/datasets/monoculture_llm.npz, made by
benchmarks/make_monoculture_llm.py) for the first evaluated people of both tasks; each of the 4 prompt templates accepts
the base rate of the fitting rows (threshold_decisions, rule 'share'); the same measures, nulls (difficulty: the templates'
mean percentile rank of P(yes), 5 bins) and 200-resample bootstrap intervals; plus the decisions under a fixed 0.5 and
at the median, to show how the rule changes them.
Run: .venv/bin/python benchmarks/bench_monoculture.py [speed] [measures] [llm]   (no argument: all parts; writes
benchmarks/results/monoculture_speed.{md,csv}, monoculture_measures.{md,csv} and monoculture_llm_measures.{md,csv})
The machine is a shared, noisy 2-core box; timings are indicative only.
"""
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import binom

from timing import median_time
from trustml_nb.core import DroppedRowsWarning, markdown_table, quiet
from trustml_nb.data import adult_task, german_task
from trustml_nb.monoculture import (NULLS, ModelEcosystem, bootstrap_ecosystem, load_prompt_multiplicity, measure_ecosystem,
                                    poisson_binomial_enumerate, poisson_binomial_pmf, threshold_decisions)

OUT = Path(__file__).parent / 'results'


def main():
    rng = np.random.default_rng(0)
    rows = []
    for M in (2, 4, 6, 8, 10, 12, 14, 16, 18):
        p = rng.uniform(size=M)
        t_rec, pmf = median_time(lambda: poisson_binomial_pmf(p), 21)
        t_enum, ref = median_time(lambda: poisson_binomial_enumerate(p), 3 if M <= 14 else 1)
        rows.append(dict(models=M, max_abs_difference=float(np.abs(pmf - ref).max()), recursion_s=t_rec, enumeration_s=t_enum,
                         ratio=t_enum / t_rec, enumeration_extrapolated_s=np.nan))
        print(rows[-1], flush=True)
    for M in (50, 500):
        p = rng.uniform(size=M)
        t_rec, pmf = median_time(lambda: poisson_binomial_pmf(p), 21)
        assert abs(pmf.sum() - 1) < 1e-12
        eq = float(np.abs(poisson_binomial_pmf(np.full(M, 0.3)) - binom.pmf(np.arange(M + 1), M, 0.3)).max())
        last = next(r for r in rows if r['models'] == 18)   # the measured M = 18 enumeration
        extrapolated = last['enumeration_s'] * 2.0 ** (M - 18) * M / 18   # 2^M patterns of M factors each
        rows.append(dict(models=M, max_abs_difference=eq, recursion_s=t_rec, enumeration_s=np.nan, ratio=np.nan,
                         enumeration_extrapolated_s=extrapolated))
        print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    OUT.mkdir(exist_ok=True)
    df.to_csv(OUT / 'monoculture_speed.csv', index=False)
    (OUT / 'monoculture_speed.md').write_text(
        "# Rejection at random: Poisson-binomial recursion vs enumeration\n\n"
        "max_abs_difference: recursion vs enumeration for M <= 18; for M = 50 and 500, recursion with equal probabilities 0.3 "
        "vs scipy.stats.binom.pmf. Times are medians in seconds on the shared 2-core machine; ratio = enumeration / recursion.\n\n"
        + markdown_table(df) + "\n")
    print(markdown_table(df))


def ecosystems():
    "The notebook's two ecosystems: (name, labels, decisions, difficulty) on the evaluated rows."
    with quiet(DroppedRowsWarning):
        task = adult_task({'train': 3000, 'eval': None}, max_rows=5000, sensitive=('sex', 'race_binary'), seed=0)
    eco = ModelEcosystem(seed=0, show_progress=False).fit(task.train.X, task.train.y)
    yield 'adult', task.eval.y, eco.predict(task.eval.X), eco.predict_proba(task.eval.X).mean(axis=1).to_numpy()
    g = german_task({'fit': 600, 'eval': None}, seed=0)
    eco = ModelEcosystem(seed=0, show_progress=False).fit(g.fit.X, g.fit.y)
    yield 'german', g.eval.y, eco.predict(g.eval.X), eco.predict_proba(g.eval.X).mean(axis=1).to_numpy()


def measures():
    rows = []
    for name, y, H, difficulty in ecosystems():
        for null in NULLS:
            rep = measure_ecosystem(y, H, null=null, difficulty=difficulty)
            t = bootstrap_ecosystem(y, H, null=null, difficulty=difficulty, n_boot=200, seed=0, show_progress=False).table
            t.insert(0, 'null_model', null); t.insert(0, 'data', name)
            t['homogenization'], t['verdict'] = rep.homogenization, rep.verdict
            t['mean_kappa'], t['mean_error_correlation'] = rep.mean_kappa, rep.mean_error_correlation
            t['rashomon_size_eps_0.01'], t['ambiguity'], t['discrepancy'] = rep.rashomon_size, rep.ambiguity, rep.discrepancy
            rows.append(t)
    df = pd.concat(rows, ignore_index=True)
    df.to_csv(OUT / 'monoculture_measures.csv', index=False)
    cols = ['data', 'null_model', 'measure', 'estimate', 'ci_low', 'ci_high', 'null', 'null_low', 'null_high']
    summary = df.drop_duplicates(['data', 'null_model'])[['data', 'null_model', 'homogenization', 'verdict', 'mean_kappa', 'mean_error_correlation',
                                                         'rashomon_size_eps_0.01', 'ambiguity', 'discrepancy']]
    (OUT / 'monoculture_measures.md').write_text(
        "# Ecosystem measures on Adult and German credit, against each null\n\n"
        "30 models (ModelEcosystem(seed=0)); 95% percentile bootstrap intervals over 200 resamples of the evaluated people "
        "(seed 0); `null`, `null_low`, `null_high`: the null model's value and interval (its rates re-estimated in each resample).\n\n"
        + markdown_table(df[cols]) + "\n\n## Homogenization and Rashomon measures\n\n" + markdown_table(summary) + "\n")
    print(markdown_table(df[cols])); print(markdown_table(summary))


def llm_measures():
    "Part 4: the four prompt templates of the small language model as an ecosystem, on the same people and nulls."
    with quiet(DroppedRowsWarning):
        adult = adult_task({'train': 3000, 'eval': None}, max_rows=5000, sensitive=('sex', 'race_binary'), seed=0)
    german = german_task({'fit': 600, 'eval': None}, seed=0)
    rows, rules = [], []
    for name, (fit, ev) in {'adult': (adult.train, adult.eval), 'german': (german.fit, german.eval)}.items():
        d = load_prompt_multiplicity(name); idx = d['eval_index']; y = ev.y[idx]; share = float(fit.y.mean())
        for rule, kw in {'fixed 0.5': dict(rule='fixed', threshold=0.5), 'median': dict(accept_share=0.5), 'base rate': dict(accept_share=share)}.items():
            D = threshold_decisions(d['p_yes'], **kw); rep = measure_ecosystem(y, D)
            rules.append(dict(data=name, rule=rule, n=len(idx), **{f"accepts: {c}": v for c, v in D.mean().items()}, unanimity=rep.unanimity,
                              unanimity_null=rep.unanimity_null, homogenization=rep.homogenization, mean_kappa=rep.mean_kappa))
        D = threshold_decisions(d['p_yes'], accept_share=share)
        difficulty = d['p_yes'].rank(pct=True).mean(axis=1).to_numpy()
        for null in NULLS:
            rep = measure_ecosystem(y, D, null=null, difficulty=difficulty, n_bins=5)
            t = bootstrap_ecosystem(y, D, null=null, difficulty=difficulty, n_bins=5, n_boot=200, seed=0, show_progress=False).table
            t.insert(0, 'null_model', null); t.insert(0, 'data', name); t.insert(2, 'n', len(idx))
            t['homogenization'], t['verdict'], t['mean_kappa'] = rep.homogenization, rep.verdict, rep.mean_kappa
            t['mean_error_correlation'], t['accept_share'] = rep.mean_error_correlation, share
            t['rashomon_size_eps_0.01'], t['ambiguity'], t['discrepancy'] = rep.rashomon_size, rep.ambiguity, rep.discrepancy
            rows.append(t)
    df, rule_df = pd.concat(rows, ignore_index=True), pd.DataFrame(rules)
    df.to_csv(OUT / 'monoculture_llm_measures.csv', index=False)
    cols = ['data', 'null_model', 'measure', 'estimate', 'ci_low', 'ci_high', 'null', 'null_low', 'null_high']
    summary = df.drop_duplicates(['data', 'null_model'])[['data', 'null_model', 'n', 'accept_share', 'homogenization', 'verdict', 'mean_kappa',
                                                         'mean_error_correlation', 'rashomon_size_eps_0.01', 'ambiguity', 'discrepancy']]
    (OUT / 'monoculture_llm_measures.md').write_text(
        "# Prompt multiplicity: SmolLM2-135M-Instruct under 4 prompt templates, as an ecosystem\n\n"
        "The shipped answers (monoculture_llm.npz); each template accepts the base rate of the fitting rows (per-template quantile of "
        "P(yes)); 95% percentile bootstrap intervals over 200 resamples of the people (seed 0); difficulty null: the templates' mean "
        "percentile rank of P(yes) in 5 bins. One small model and 4 templates: not the paper's 50-model landscape.\n\n"
        + markdown_table(df[cols]) + "\n\n## Homogenization and Rashomon measures\n\n" + markdown_table(summary)
        + "\n\n## How the threshold rule changes the decisions (independent null)\n\n" + markdown_table(rule_df) + "\n")
    print(markdown_table(df[cols])); print(markdown_table(summary)); print(markdown_table(rule_df))


if __name__ == '__main__':
    import sys
    parts = sys.argv[1:] or ['speed', 'measures', 'llm']
    if 'speed' in parts: main()
    if 'measures' in parts: measures()
    if 'llm' in parts: llm_measures()
