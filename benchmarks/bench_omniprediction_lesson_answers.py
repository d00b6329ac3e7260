"""Study (no peer library): The numbers that lesson 60's summary quotes in its answer to exercise 4 (issue 15: every number in a lesson summary comes
from a results file): with the lesson's own Adult setting and `GroupConformal(method='qr', alpha=0.1)`, the coverage of the
rows under 30, the share of them whose set is empty, the same in the older age groups, and the coverage under 30 with
`allow_empty=False`. Run: .venv/bin/python benchmarks/bench_omniprediction_lesson_answers.py
(writes benchmarks/results/omniprediction_lesson60_answers.md)
"""
import os
from pathlib import Path

import numpy as np

from trustml_nb.core import DroppedRowsWarning, quiet
from trustml_nb.data import adult_task
from trustml_nb.omniprediction import ADULT_GROUPS, ADULT_SENSITIVE, GroupConformal, OmniPredictor, adult_tests, coverage_report

OUT = Path(__file__).resolve().parent / 'results'

if __name__ == '__main__':
    load0 = os.getloadavg()[0]
    with quiet(DroppedRowsWarning):   # the lesson's setting, cell for cell
        task = adult_task({'base': 12000, 'fit': 10000, 'cal': None}, official_test=True, sensitive=ADULT_SENSITIVE, max_order=2,
                          keep_groups=ADULT_GROUPS, base_model='hgb', seed=0)
    f, c, t = task.fit, task.cal, task.test
    om = OmniPredictor(tolerance=0.002, n_bins=None, seed=0).fit(f.score, f.y, groups=f.groups, tests=adult_tests(f.X, f.score))
    P = {name: om.predict(s.score, groups=s.groups, tests=adult_tests(s.X, s.score)) for name, s in task.splits.items()}
    lines = ['# Lesson 60, exercise 4: the numbers its summary quotes (`benchmarks/bench_omniprediction_lesson_answers.py`)', '',
             f'Adult as in the lesson (seed 0), alpha = 0.1, method qr; load average {load0:.2f} at start.', '',
             '| allow_empty | group | n | coverage | empty_rate | coverage of label 0 rows |', '|---|---|---|---|---|---|']
    for allow in (True, False):
        sets = GroupConformal(alpha=0.1, method='qr', allow_empty=allow).fit(P['cal'], c.y, groups=c.groups).predict(P['test'], groups=t.groups)
        tab = coverage_report(t.y, sets, t.groups, 0.1).table.set_index('group')
        for g in [x for x in tab.index if x.startswith('age_group=')]:
            m = t.groups[g].to_numpy() & (np.asarray(t.y) == 0)
            cov0 = float(np.mean(sets['has0'].to_numpy()[m]))
            lines.append(f"| {allow} | {g} | {int(tab.loc[g, 'n'])} | {tab.loc[g, 'coverage']:.3f} | {tab.loc[g, 'empty_rate']:.3f} | {cov0:.3f} |")
    (OUT / 'omniprediction_lesson60_answers.md').write_text('\n'.join(lines) + '\n')
    print('\n'.join(lines))
