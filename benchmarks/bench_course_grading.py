"""Study (no peer library): Autograding of every lesson: reference solutions (full marks), a blank copy (zero), a plausible wrong answer (partial).

    .venv/bin/python benchmarks/bench_course_grading.py [LESSON ...]

Builds the nbgrader course (tools/nbgrader_course.py) in a scratch folder, grades three submissions per lesson with
`nbgrader autograde` (every cell of the lesson runs) and writes benchmarks/results/course_grading.{csv,md}. Naming
lessons re-runs only those and replaces their rows; the other lessons' rows stay.
The load average is recorded beside the timings: on the shared 2-core machine they are upper bounds.
"""
import csv
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'tools'))
import nbgrader_course as course  # noqa: E402 (tools/nbgrader_course.py: named apart from trustml_nb.course)
import course_checks  # noqa: E402

OUT = ROOT / 'benchmarks' / 'results'


def main(names=None):
    names = course.lesson_names(names)
    rows = []
    for name in names:   # one lesson at a time, so progress shows and a failure costs one lesson
        load_before, t0 = os.getloadavg()[0], time.time()
        with tempfile.TemporaryDirectory() as tmp:
            got = course_checks.check_lessons([name], Path(tmp) / 'course', Path(tmp))
        for r in got:
            r.update(ok=course_checks.verdict(r), load_before=round(load_before, 2), load_after=round(os.getloadavg()[0], 2))
            rows.append(r)
        print(f"{name}: {[(r['kind'], r['auto_score'], r['auto_max'], r['ok']) for r in got]} ({time.time() - t0:.0f} s)", flush=True)
    return write_tables(rows, names)


def write_tables(rows, names=()):
    "Merge `rows` (lessons just graded) into benchmarks/results/course_grading.csv and rewrite course_grading.md."
    cols = ['lesson', 'kind', 'auto_score', 'auto_max', 'failed_tests', 'cells_with_errors', 'wrong_exercise', 'wrong_points', 'written_max',
            'written_to_grade', 'ok', 'seconds', 'load_before', 'load_after']
    # a run over some lessons replaces their rows in the table and keeps the other lessons' rows
    old_rows = list(csv.DictReader(open(OUT / 'course_grading.csv'))) if (OUT / 'course_grading.csv').exists() else []
    for r in old_rows:
        for k in ('auto_score', 'auto_max', 'wrong_points', 'written_max', 'written_to_grade', 'seconds', 'load_before', 'load_after'):
            r[k] = float(r[k]) if r.get(k) not in (None, '') else 0
        r['ok'] = r['ok'] == 'True'
    rows = [r for r in old_rows if r['lesson'] not in names] + rows
    rows.sort(key=lambda r: (r['lesson'], r['kind']))
    with open(OUT / 'course_grading.csv', 'w', newline='') as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction='ignore'); w.writeheader(); w.writerows(rows)
    by = {(r['lesson'], r['kind']): r for r in rows}
    names = sorted({r['lesson'] for r in rows})
    lines = [f"# Autograding every lesson ({time.strftime('%Y-%m-%d')}, nbgrader autograde, 2 shared cores)", '',
             "Three submissions per lesson: the student release filled in from the instructor key (reference), the release "
             "untouched (blank), the reference with one plausible wrong answer (wrong). Autograded points only; the written "
             "answers are graded by hand. `seconds`: autograde wall time per submission (the whole lesson runs), under the "
             "load shown (1-minute load average). Command: `.venv/bin/python benchmarks/bench_course_grading.py`.", '',
             '| lesson | reference | cells that raised (reference) | blank | wrong answer (exercise) | tests failed by the wrong answer | all as expected | s per submission | load |',
             '|---|---|---|---|---|---|---|---|---|']
    for name in names:
        ref, blank, wrong = by[(name, 'reference')], by[(name, 'blank')], by.get((name, 'wrong'))
        ok = ref['ok'] and blank['ok'] and (wrong is None or wrong['ok'])
        lines.append(f"| {name} | {ref['auto_score']:g} / {ref['auto_max']:g} | {ref.get('cells_with_errors', '')} | {blank['auto_score']:g} / {blank['auto_max']:g} | "
                     + (f"{wrong['auto_score']:g} / {wrong['auto_max']:g} (ex. {wrong['wrong_exercise']}, {float(wrong['wrong_points']):g} pt) | {wrong['failed_tests']} | "
                        if wrong else "- | - | ")
                     + f"{ok} | {ref['seconds']} | {ref['load_before']} |")
    n_ok = sum(1 for n in names if all(r['ok'] for k, r in by.items() if k[0] == n))
    lines += ['', f"{n_ok} of {len(names)} lessons graded exactly as expected (full, zero, and full minus the wrong exercise's points)."]
    (OUT / 'course_grading.md').write_text('\n'.join(lines) + '\n')
    print('\n'.join(lines))
    return rows


if __name__ == '__main__':
    if sys.argv[1:] == ['--table']: write_tables([])      # only rewrite the markdown table from the CSV
    else: main(sys.argv[1:] or None)
