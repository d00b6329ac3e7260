"""Grade three submissions per lesson against the built course: the reference solutions, a blank copy, a wrong answer.

Used by tests/test_course.py and benchmarks/bench_course_grading.py. The reference submission is the student
release with every answer cell filled in from the instructor key (what a student who got everything right hands in);
the blank one is the release untouched; the wrong one is the reference with ONE answer replaced by a plausible
mistake from WRONG_ANSWERS. Expected: full marks, zero, and full marks minus the points of that exercise's tests.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import course  # noqa: E402

# lesson -> (exercise number, the code a student might plausibly write instead of the solution)
WRONG_ANSWERS = {
    '00_start_here': ('1', "slider_thresholds = np.round(np.arange(0.05, 0.96, 0.05), 2)\n"
                           "worst_threshold = min(slider_thresholds, key=lambda t: np.ptp(group_rates(t).selection_rate))  # min, not max"),
}

_SOLUTION_RE = re.compile(r'^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?', re.M)


def _src(cell) -> str:
    return ''.join(cell['source']) if isinstance(cell['source'], list) else cell['source']


def reference_submission(release: dict, key: dict) -> dict:
    "The student release with every answer cell taken from the instructor key (solution markers removed)."
    answers = {c['metadata']['nbgrader']['grade_id']: _src(c) for c in key['cells']
               if c['metadata'].get('nbgrader', {}).get('solution')}
    nb = json.loads(json.dumps(release))
    for cell in nb['cells']:
        meta = cell['metadata'].get('nbgrader', {})
        if meta.get('solution'): cell['source'] = _SOLUTION_RE.sub('', answers[meta['grade_id']])
    return nb


def wrong_submission(reference: dict, exercise: str, wrong_code: str) -> dict:
    "The reference submission with exercise `exercise`'s answer cell replaced by `wrong_code` (its comments kept)."
    nb = json.loads(json.dumps(reference))
    for cell in nb['cells']:
        if cell['metadata'].get('nbgrader', {}).get('grade_id') == f'exercise_{exercise}':
            comments = [l for l in _src(cell).splitlines() if l.startswith('#')][:3]
            cell['source'] = '\n'.join(comments + [wrong_code])
            return nb
    raise ValueError(f"no answer cell for exercise {exercise}")


def check_lessons(names, course_dir: Path, work: Path) -> list[dict]:
    "Build the course for `names`, grade reference/blank/wrong submissions of each; one row per lesson and kind."
    course_dir, work = Path(course_dir), Path(work)
    built = course.build(course_dir, names)
    subs = work / 'submissions'
    expected = {}
    for name in names:
        key = json.loads(built[name]['instructor'].read_text())
        release = json.loads(built[name]['student'].read_text())
        ex = course.exercise_cells(json.loads((course.TUTORIALS / f'{name}.ipynb').read_text()))
        ref = reference_submission(release, key)
        copies = {'reference': ref, 'blank': release}
        if name in WRONG_ANSWERS:
            n, code = WRONG_ANSWERS[name]
            copies['wrong'] = wrong_submission(ref, n, code)
            expected[name] = (n, ex['tests'][n])
        for kind, nb in copies.items():
            (subs / kind).mkdir(parents=True, exist_ok=True)
            (subs / kind / f'{name}.ipynb').write_text(json.dumps(nb))
    rows = course.grade(subs, course_dir, names)
    for r in rows:
        r['kind'] = r['student']
        r['wrong_exercise'], r['wrong_points'] = expected.get(r['lesson'], ('', 0)) if r['kind'] == 'wrong' else ('', 0)
    return rows


def verdict(row: dict) -> bool:
    "Does a graded row show what it should: full marks, zero, or full marks less the wrong exercise's points only?"
    if row['kind'] == 'reference': return row['auto_score'] == row['auto_max'] and not row['failed_tests']
    if row['kind'] == 'blank': return row['auto_score'] == 0 and row['written_to_grade'] == 0
    failed = row['failed_tests'].split()
    return (row['auto_score'] == row['auto_max'] - row['wrong_points']
            and all(f.startswith(f"exercise_{row['wrong_exercise']}_tests") for f in failed) and len(failed) >= 1)
