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
import nbgrader_course as course  # noqa: E402

# lesson -> (exercise number, the code a student might plausibly write instead of the solution)
WRONG_ANSWERS = {
    '00_start_here': ('1', "slider_thresholds = np.round(np.arange(0.05, 0.96, 0.05), 2)\n"
                           "worst_threshold = min(slider_thresholds, key=lambda t: np.ptp(group_rates(t).selection_rate))  # min, not max"),
    '10_path_specific_effects': ('1', "t = res.to_frame().query(\"estimator == 'DR'\").set_index('effect').estimate\n"
                                      "vde_share, nie_share = t['VDE'] / t['TE'], t['NIE*'] / t['TE']  # NIE* taken for NIE"),
    '20_fedfact': ('1', "most_accurate_run = summary['accuracy'].idxmin()  # idxmin, not idxmax\n"
                        "fedavg_least_accurate = bool(base.report_.accuracy < summary['accuracy'].min())"),
    '30_explaining_gams': ('2', "g = GAM([TableComponent({0: -1, 1: 0}), TableComponent({0: -1, 1: 0})], EnumerableDomain([0, 1]), task='classification')\n"
                                "empty_is_sufficient = True  # trusts the sign test\nsign_test_says_sufficient = True"),
    '40_fairdice': ('2', "maxmin = solve_unregularised(cx, 'nsw')  # Nash welfare instead of max-min\n"
                         "p_maxmin, returns_maxmin = maxmin.occupancy[0, 0], maxmin.returns"),
    '50_multicalibration': ('1', "big = make_mc_synthetic(80000, seed=11)\n"
                                 "floor_4x = mc_error(big['y'], big['p0'], big['groups'])  # the base score, not the true probabilities"),
    '60_selective_omniprediction': ('1', "interval = (0.5 / 2, 1 - 0.5 / 2)  # divides by l_FP + l_FN\never_abstains = True"),
    '70_mifpo': ('1', "E0 = best_fair_classifier(tiny, 1.0).error  # the unconstrained error, not gamma = 0\ngamma_flat = 0.5"),
    '80_oath': ('1', "nu_needed = int(np.ceil(np.log(1e-6) / np.log(1 - 0.01)))  # eps where the bound has eps / 2\n"
                     "exact_at_nu = worst_case_escape(10**6, 0.01, nu_needed)"),
    '90_matroid_selection': ('2', "laminar_probabilities = acceptance_probabilities(funding, ColouringSelector(), order=submitted)"
                                  ".table['probability'].to_numpy()  # the general colouring selector"),
    '95_monoculture': ('1', "pmf4 = poisson_binomial_pmf([0.6, 0.7, 0.8, 0.9])  # acceptance rates, not rejection rates\n"
                            "all_four, none = pmf4[4], pmf4[0]"),
    '96_quere': ('1', "X = sets['QueRE'][:, -2:]  # the answer probabilities, not pre/post\n"
                      "sol1 = compare_probes({'pre + post only': X, 'QueRE': sets['QueRE']}, y, test_fraction=0.4, n_bootstrap=500, seed=0)\n"
                      "auroc_pre_post = sol1.table.set_index('features').auroc['pre + post only']"),
    '97_distributive_fairness': ('2', "def has_complete_equitable(m):\n"
                                      "    return bool(fair_division(hp7.valuations, money=m).table['EQ'].any())  # forgets that every good must be given away\n"
                                      "smallest_money = next(m for m in range(11) if has_complete_equitable(m))"),
    '98_unreal': ('1', "y20 = imbalanced_split(g.y, 10, n_per_class=20, n_minority=2, seed=0)  # ratio 10, not 20\n"
                       "u20 = np.flatnonzero(y20 < 0)\n"
                       "bacc = {name: class_scores(g.y[u20], est.fit(g.X, y20, edges=g.edges).predict(g.X, edges=g.edges)[u20]).balanced_accuracy\n"
                       "        for name, est in {'GCN': GCNClassifier(epochs=60, show_progress=False),\n"
                       "                          'UNREAL': UNREAL(epochs=60, rounds=3, budget=8, n_clusters=30, show_progress=False)}.items()}\n"
                       "gain_20 = bacc['UNREAL'] - bacc['GCN']"),
    '99_fingerprints': ('1', "cand = list(perinucleus_candidates(q, 0.6, 2))\n"
                             "bound = stats.binom.sf(20, 100, 0.05)  # P(X > 20), not P(X >= 20)"),
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
    if row['kind'] == 'reference':      # full marks, and every cell of the lesson ran without an error
        return row['auto_score'] == row['auto_max'] and not row['failed_tests'] and row.get('cells_with_errors', 0) == 0
    if row['kind'] == 'blank': return row['auto_score'] == 0 and row['written_to_grade'] == 0
    failed = row['failed_tests'].split()
    return (row['auto_score'] == row['auto_max'] - row['wrong_points']
            and all(f.startswith(f"exercise_{row['wrong_exercise']}_tests") for f in failed) and len(failed) >= 1)


_MARKERS = ('### BEGIN SOLUTION', '### BEGIN HIDDEN TESTS', '<summary>Solutions</summary>', '<summary>Answers</summary>')


def answer_texts(lesson: dict) -> tuple[list[str], str]:
    """The answers a lesson holds (model answers, solutions, hidden tests, worked solutions), and the rest of its text.

    Found from the markers the lessons use (tools/nbgrader_course.py's docstring lists them), independently of
    trustml_nb.course.student_notebook, whose output this is used to check."""
    answers, rest = [], []
    for cell in lesson['cells']:
        s = _src(cell)
        worked = re.sub(r'^(#\|.*\n)*', '', s).startswith('# Solution to') or s.startswith('**Solution')
        body = s if worked else ''   # a worked solution is an answer as a whole (70's first line explains it)
        found = re.findall(r'<details><summary>(?:Solutions|Answers)</summary>(.*?)</details>', s, re.S)
        found += re.findall(r'### BEGIN SOLUTION\n(.*?)### END SOLUTION', s, re.S)
        found += re.findall(r'### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS', s, re.S)
        if body: found.append(body)
        answers += found
        for a in found: s = s.replace(a, '')
        rest.append(s)
    return answers, '\n'.join(rest)


def answer_leaks(student: dict, lesson: dict, min_chars: int = 25) -> list[str]:
    "Markers and answer lines (over `min_chars` long, not also elsewhere in the lesson) that a student copy still holds."
    text = '\n'.join(_src(c) for c in student['cells'])
    answers, rest = answer_texts(lesson)
    leaks = [m for m in _MARKERS if m in text]
    for a in answers:
        for line in a.splitlines():
            line = line.strip()
            if len(line) > min_chars and line not in rest and line in text: leaks.append(line)
    return leaks


GLOSSARY_HEAD = """# Glossary of the course

Every term of the lessons' glossaries, in one alphabetical list, with the lesson that defines it (the lesson's
own glossary is at its end, after *Check your understanding*). Generated from the lessons by
`python tools/course_checks.py glossary > tutorials/GLOSSARY.md`; tests/test_course_map.py checks that it is current.
"""


def glossary_entries(tutorials: Path = course.TUTORIALS) -> list[tuple[str, str, str]]:
    "(term, lesson, definition) for every item of every lesson's `## Glossary` section."
    found = []
    for path in sorted(Path(tutorials).glob('*.ipynb')):
        for cell in json.loads(path.read_text())['cells']:
            s = _src(cell)
            if cell['cell_type'] != 'markdown' or '## Glossary' not in s: continue
            section = s[s.index('## Glossary'):].split('\n## ')[0]
            for term, definition in re.findall(r'^- \*\*((?:[^*\\]|\\.)+?)\*\*:?[ \t]*(.*)$', section, re.M):
                found.append((term.strip().rstrip(':'), path.stem, definition.strip()))
    return found


def glossary_markdown(tutorials: Path = course.TUTORIALS) -> str:
    "The course-wide glossary (tutorials/GLOSSARY.md): every lesson's terms, sorted, each with its lesson."
    key = lambda e: re.sub(r'[^a-z0-9 ]', '', e[0].lower().replace('$', '')).strip()
    lines = [f"- **{t}** (`{lesson}`): {d}" for t, lesson, d in sorted(glossary_entries(tutorials), key=key)]
    return GLOSSARY_HEAD + '\n' + '\n'.join(lines) + '\n'


if __name__ == '__main__' and sys.argv[1:] == ['glossary']:
    sys.stdout.write(glossary_markdown())
