"""Student and instructor copies (nbgrader) built from tutorials/, and autograding (tools/nbgrader_course.py).

The default suite builds every lesson's instructor key and student release and checks what each contains, then
autogrades two representative lessons (00 and 90, the fastest) three ways: the reference solutions must score full
marks, a blank copy zero, and a plausible wrong answer must lose exactly the points of the tests of its exercise.
The slow test does the same for every lesson (about 3 x the lessons' run time); so does
benchmarks/bench_course_grading.py, which writes the per-lesson table to benchmarks/results/course_grading.md.
"""
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'tools'))
import nbgrader_course as course  # noqa: E402 (tools/nbgrader_course.py: named apart from trustml_nb.course)
import course_checks  # noqa: E402

LESSONS = course.lesson_names()
REPRESENTATIVE = ['00_start_here', '90_matroid_selection']


def _src(cell):
    return ''.join(cell['source']) if isinstance(cell['source'], list) else cell['source']


@pytest.fixture(scope='module')
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp('course')
    return folder, course.build(folder / 'course')


def test_every_lesson_has_graded_exercises():
    for name in LESSONS:
        ex = course.exercise_cells(json.loads((course.TUTORIALS / f'{name}.ipynb').read_text()))
        assert ex['answers'] and sum(ex['tests'].values()) >= 1, name
        assert name in course_checks.WRONG_ANSWERS and course_checks.WRONG_ANSWERS[name][0] in ex['answers'], name


@pytest.mark.parametrize('name', LESSONS)
def test_release_and_key(built, name):
    "The release has no solutions, hidden tests or model answers; the key has them; predictions come before checks."
    _, out = built
    key = json.loads(out[name]['instructor'].read_text())
    release = json.loads(out[name]['student'].read_text())
    key_text = '\n'.join(_src(c) for c in key['cells'])
    release_text = '\n'.join(_src(c) for c in release['cells'])
    assert '### BEGIN SOLUTION' in key_text and '### BEGIN HIDDEN TESTS' in key_text
    for marker in ('### BEGIN SOLUTION', '### BEGIN HIDDEN TESTS', '<summary>Solutions</summary>', '<summary>Answers</summary>'):
        assert marker not in release_text, (name, marker)
    lesson = json.loads((course.TUTORIALS / f'{name}.ipynb').read_text())
    assert not course_checks.answer_leaks(release, lesson), name      # no model answer, solution or hidden test line
    assert '<summary>Answers</summary>' not in key_text and 'check_your_understanding' in json.dumps(key)  # a graded cell
    # no line of any reference solution survives in the release (lines the lesson also has elsewhere excepted)
    elsewhere = '\n'.join(_src(c) for c in key['cells'] if not c['metadata'].get('nbgrader', {}).get('solution'))
    for cell in key['cells']:
        meta = cell['metadata'].get('nbgrader', {})
        if meta.get('solution') and cell['cell_type'] == 'code':
            body = re.search(r'### BEGIN SOLUTION\n(.*?)### END SOLUTION', _src(cell), re.S)
            lines = (body[1] if body else _src(cell)).splitlines()
            for line in lines:
                if len(line.strip()) > 25 and not line.lstrip().startswith('#') and line not in elsewhere:
                    assert line not in release_text, (name, line)
            rel = next(c for c in release['cells'] if c['metadata'].get('nbgrader', {}).get('grade_id') == meta['grade_id'])
            assert 'raise NotImplementedError()' in _src(rel)
        if meta.get('grade') and cell['cell_type'] == 'code':    # test cells: visible part kept, hidden part gone, read-only
            rel = next(c for c in release['cells'] if c['metadata'].get('nbgrader', {}).get('grade_id') == meta['grade_id'])
            assert 'assert' in _src(rel) and rel['metadata']['nbgrader']['locked']
    # every "predict first" prompt is followed by an empty prediction cell, before the code cell that checks it
    prompts = [i for i, c in enumerate(release['cells']) if c['cell_type'] == 'markdown' and course.PREDICT_RE.match(_src(c))]
    for i in prompts:
        assert _src(release['cells'][i + 1]).startswith('**Your prediction**'), (name, i)
        assert release['cells'][i + 2]['cell_type'] == 'code' or 'Your prediction' not in _src(release['cells'][i + 2])


def test_predict_prompts_found(built):
    "The lessons with a 'predict first' prompt (counted by hand: 20, 50, 60, 70 twice, 80, 90, 95, 97, 98) all get a prediction cell."
    _, out = built
    counts = {n: sum(_src(c).startswith('**Your prediction**') for c in json.loads(out[n]['student'].read_text())['cells'])
              for n in LESSONS}
    assert {n: k for n, k in counts.items() if k} == {'20_fedfact': 1, '50_multicalibration': 1, '60_selective_omniprediction': 1,
                                                     '70_mifpo': 2, '80_oath': 1, '90_matroid_selection': 1, '95_monoculture': 1,
                                                     '97_distributive_fairness': 1, '98_unreal': 1, '99_fingerprints': 1}


def _check(names, tmp_path):
    rows = course_checks.check_lessons(names, tmp_path / 'course', tmp_path)
    bad = [r for r in rows if not course_checks.verdict(r)]
    assert not bad, bad
    assert {(r['lesson'], r['kind']) for r in rows} == {(n, k) for n in names for k in ('reference', 'blank', 'wrong')}
    grades = (tmp_path / 'course' / 'grades.csv').read_text()
    assert grades.startswith('student,lesson,auto_score') and len(grades.splitlines()) == 1 + 3 * len(names)
    return rows


def test_autograde_representative(tmp_path):
    "Full marks for the reference, zero for a blank copy, and a wrong answer loses exactly its exercise's points."
    rows = _check(REPRESENTATIVE, tmp_path)
    wrong = {r['lesson']: r for r in rows if r['kind'] == 'wrong'}
    assert wrong['00_start_here']['failed_tests'] == 'exercise_1_tests' and wrong['00_start_here']['auto_score'] == 2
    assert wrong['90_matroid_selection']['failed_tests'] == 'exercise_2_tests'


@pytest.mark.slow
def test_autograde_every_lesson(tmp_path):
    _check(LESSONS, tmp_path)


def test_wrong_answer_is_not_the_reference(built):
    "A planted wrong answer really differs from the key's solution (so the partial score is earned, not vacuous)."
    _, out = built
    for name, (n, code) in course_checks.WRONG_ANSWERS.items():
        key = json.loads(out[name]['instructor'].read_text())
        ref = next(_src(c) for c in key['cells'] if c['metadata'].get('nbgrader', {}).get('grade_id') == f'exercise_{n}')
        assert code.strip() not in ref


def test_grade_needs_a_built_course(tmp_path):
    (tmp_path / 'subs').mkdir()
    with pytest.raises(FileNotFoundError, match='make course'):
        course.grade(tmp_path / 'subs', tmp_path / 'empty_course')
    with pytest.raises(ValueError, match='unknown lesson'):
        course.build(tmp_path / 'c', ['no_such_lesson'])


def test_the_leak_scan_finds_answers():
    "The scan below is not vacuous: on a lesson itself (the instructor's key) it finds its markers and answer lines."
    for name in LESSONS:
        lesson = json.loads((course.TUTORIALS / f'{name}.ipynb').read_text())
        leaks = course_checks.answer_leaks(lesson, lesson)
        assert '<summary>Answers</summary>' in leaks and '### BEGIN SOLUTION' in leaks and len(leaks) >= 8, (name, leaks)


def test_student_copies_hold_no_answers(tmp_path):
    "What `trustml-nb-lessons` (trustml_nb.course.copy_lessons) writes holds no answer, and no instructor file."
    from trustml_nb.course import INSTRUCTOR_ONLY, copy_lessons, main
    assert main([str(tmp_path / 'copy')]) == 0
    copied = sorted((tmp_path / 'copy').iterdir())
    assert {p.stem for p in copied if p.suffix == '.ipynb'} == set(LESSONS)
    assert not set(INSTRUCTOR_ONLY) & {p.name for p in copied} and 'SYLLABUS.md' in {p.name for p in copied}
    for p in copied:
        if p.suffix != '.ipynb': continue
        student = json.loads(p.read_text())
        lesson = json.loads((course.TUTORIALS / p.name).read_text())
        assert not course_checks.answer_leaks(student, lesson), (p.name, course_checks.answer_leaks(student, lesson)[:3])
        n_graded = sum('### BEGIN SOLUTION' in _src(c) for c in lesson['cells'])
        assert sum('raise NotImplementedError()' in _src(c) for c in student['cells']) == n_graded, p.name
        # every model-answer block became an empty answer cell, right after its questions
        n_blocks = sum('<details><summary>' in _src(c) for c in lesson['cells'])
        assert sum(_src(c).startswith('**Your answers**') for c in student['cells']) == n_blocks, p.name
        # the hidden tests are gone but the visible asserts stay
        for c in lesson['cells']:
            if c['cell_type'] == 'code' and course.TEST_RE.match(_src(c)):
                visible = _src(c).split('### BEGIN HIDDEN TESTS')[0].strip()
                assert any(_src(d).strip() == visible for d in student['cells']), (p.name, visible)
    assert len(copy_lessons(tmp_path / 'copy', overwrite=True)) == len(copied)   # a copy of the copy is the same copy
