"""Student and instructor copies of the lessons, and autograding, with nbgrader.

    python tools/nbgrader_course.py build [--course DIR] [LESSON ...]     # `make course`
    python tools/nbgrader_course.py grade SUBMISSIONS [--course DIR]      # `make grade SUBMISSIONS=dir`

The lessons in tutorials/ are the single source. Inside them, exercise cells carry plain-text markers that run as
ordinary comments in JupyterLab and in the notebook tests:

- a graded answer cell: a code cell whose first line is `# Exercise N (graded): ...` with the reference solution
  between `### BEGIN SOLUTION` and `### END SOLUTION`;
- its test cell: a code cell whose first line is `# Tests for exercise N (P points)`: visible asserts, then hidden
  ones between `### BEGIN HIDDEN TESTS` and `### END HIDDEN TESTS`;
- a worked solution that is not autograded: a code cell whose first line is `# Solution to exercise N ...`; the
  student copy gets an empty answer cell in its place;
- the written answers: the `<details><summary>Solutions</summary>` block of the Exercises cell (and a markdown cell
  that starts with `**Solution`) becomes a manually graded answer cell holding the model answers;
- the questionnaire: the `<details><summary>Answers</summary>` block of "Check your understanding" becomes a manually
  graded answer cell too (one point per question), so its answers are in the instructor key only.

The same markers are what trustml_nb.course.student_notebook strips from the copy `trustml-nb-lessons` makes; the
answers exist only in tutorials/ (the instructor's key) and in course/source/.

`build` converts each lesson into an nbgrader source notebook (course/source/<lesson>/<lesson>.ipynb: the instructor
key, with solutions and hidden tests), inserts an empty "Your prediction" cell after every "predict first" prompt,
then runs `nbgrader generate_assignment`, which writes the student release (course/release/<lesson>/: no
solutions, no hidden tests, answer cells that raise NotImplementedError until filled in).

`grade` takes a folder of submissions, laid out as SUBMISSIONS/<student>/<lesson>.ipynb or
SUBMISSIONS/<student>/<lesson>/<lesson>.ipynb, runs `nbgrader autograde` (every cell of the lesson is executed, the
hidden tests restored from the instructor key) and writes the grade table course/grades.csv and course/grades.md.
"""
from __future__ import annotations

import argparse
import copy
import csv
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / 'tutorials'
DEFAULT_COURSE = ROOT / 'course'
CELL_TIMEOUT = 600  # seconds per cell when autograde executes a lesson (the longest lesson takes about two minutes in all)

ANSWER_RE = re.compile(r'^# Exercise (\d+)\b.*\(graded\)')
TEST_RE = re.compile(r'^# Tests for exercise (\d+) \((\d+) points?\)')
SOLUTION_RE = re.compile(r'^# Solution to (exercises? (\d+)(?: to \d+)?)')
DETAILS_RE = re.compile(r'\n*<details><summary>(Solutions|Answers)</summary>\s*(.*?)\s*</details>\s*', re.S)
PREDICT_RE = re.compile(r'^\*\*(Check yourself|Predict first)\.\*\*.*\bpredict', re.S | re.I)
PREDICTION_CELL = ("**Your prediction** (write it here *before* you run the next cell, then compare):\n\n"
                   "*...*")

NBGRADER_CONFIG = """\
c = get_config()
c.CourseDirectory.root = {root!r}
c.CourseDirectory.db_url = 'sqlite:///' + {db!r}
c.Execute.timeout = {timeout}
c.Execute.interrupt_on_timeout = True
c.ClearSolutions.code_stub = {{'python': '# YOUR CODE HERE\\nraise NotImplementedError()'}}
c.ClearSolutions.text_stub = 'YOUR ANSWER HERE'
"""


def lesson_names(names=None) -> list[str]:
    "The lesson notebooks' names (without .ipynb), all of tutorials/ unless `names` picks some."
    found = sorted(p.stem for p in TUTORIALS.glob('*.ipynb'))
    if not names: return found
    unknown = [n for n in names if n not in found]
    if unknown: raise ValueError(f"unknown lesson(s) {unknown}: expected some of {found}")
    return list(names)


def _src(cell) -> str:
    return ''.join(cell['source']) if isinstance(cell['source'], list) else cell['source']


def _head(cell) -> str:
    "A code cell's source without its leading `#|` directive lines (where the markers are looked for)."
    lines = _src(cell).splitlines(True)
    while lines and lines[0].startswith('#|'): lines = lines[1:]
    return ''.join(lines)


def _cell(cell_type: str, source: str, cell_id: str) -> dict:
    c = {'cell_type': cell_type, 'id': cell_id, 'metadata': {}, 'source': source}
    if cell_type == 'code': c.update(execution_count=None, outputs=[])
    return c


def _meta(grade_id: str, *, grade: bool, solution: bool, points: int = 0) -> dict:
    m = {'grade': grade, 'solution': solution, 'locked': grade and not solution, 'grade_id': grade_id,
         'schema_version': 3, 'task': False}
    if grade: m['points'] = points
    return {'nbgrader': m}


def exercise_cells(nb: dict) -> dict:
    "Graded cells found in a lesson: {'answers': {n: source}, 'tests': {n: points}, 'written': count}."
    answers, tests, written = {}, {}, 0
    for cell in nb['cells']:
        s = _head(cell) if cell['cell_type'] == 'code' else _src(cell)
        if cell['cell_type'] == 'code':
            if (m := ANSWER_RE.match(s)):
                if '### BEGIN SOLUTION' not in s or '### END SOLUTION' not in s:
                    raise ValueError(f"exercise {m[1]}: an answer cell needs ### BEGIN SOLUTION / ### END SOLUTION")
                answers[m[1]] = s
            elif (m := TEST_RE.match(s)):
                tests[m[1]] = tests.get(m[1], 0) + int(m[2])
        elif DETAILS_RE.search(s) or s.startswith('**Solution'):
            written += 1
    missing = sorted(set(answers) ^ set(tests))
    if missing: raise ValueError(f"exercise(s) {missing}: every graded answer cell needs a test cell and vice versa")
    return {'answers': answers, 'tests': tests, 'written': written}


def to_source(nb: dict) -> dict:
    "The nbgrader source notebook (the instructor key) of a lesson notebook."
    nb = copy.deepcopy(nb)
    cells, n_tests, pending_answer = [], {}, None
    auto = set(exercise_cells(nb)['answers'])
    for cell in nb['cells']:
        kind = cell['cell_type']
        s = _head(cell) if kind == 'code' else _src(cell)
        cell['metadata'] = {k: v for k, v in cell['metadata'].items() if k != 'nbgrader'}
        if kind == 'code' and (m := ANSWER_RE.match(s)):
            cell['metadata'].update(_meta(f'exercise_{m[1]}', grade=False, solution=True))
            cells.append(cell)
        elif kind == 'code' and (m := TEST_RE.match(s)):
            k = n_tests[m[1]] = n_tests.get(m[1], 0) + 1
            cell['metadata'].update(_meta(f'exercise_{m[1]}_tests' + (f'_{k}' if k > 1 else ''), grade=True,
                                          solution=False, points=int(m[2])))
            cells.append(cell)
        elif kind == 'code' and (m := SOLUTION_RE.match(s)):   # an ungraded worked solution: the release gets an empty cell
            cell['metadata'].update(_meta(f'solution_{m[2]}', grade=False, solution=True))
            cell['source'] = (f"# {m[1].capitalize()} (not autograded: write your answer and your own checks here)\n"
                              f"### BEGIN SOLUTION\n{s.rstrip()}\n### END SOLUTION")
            cells.append(cell)
        elif kind == 'markdown' and (m := DETAILS_RE.search(s)):
            exercises = m[1] == 'Solutions'   # the Exercises' written answers, else the Check-your-understanding questionnaire
            note = ('the ones marked (graded) in code cells are checked automatically' if exercises else 'one point per question')
            questions = DETAILS_RE.sub('\n', s).rstrip() + f'\n\n*Write your answers in the cell below; {note}.*'
            cells.append(_cell('markdown', questions, cell['id']))
            answer = _cell('markdown', m[2], cell['id'] + ('a' if exercises else 'q'))
            n_items = len(re.findall(r'^\d+\.', m[2], re.M))
            points = max(1, n_items - len(auto)) if exercises else max(1, n_items)
            answer['metadata'].update(_meta('written_answers' if exercises else 'check_your_understanding', grade=True,
                                            solution=True, points=points))
            cells.append(answer)
        elif kind == 'markdown' and s.startswith('**Solution'):
            cell['metadata'].update(_meta(f'written_answer_{cell["id"]}', grade=True, solution=True, points=1))
            cells.append(cell)
        else:
            if kind == 'markdown' and PREDICT_RE.match(s):
                # the prompt, an empty cell for the prediction, then the check; a paragraph that answers the prompt
                # moves after the check (70_mifpo's "Predict first" cell explains the answer in its second paragraph)
                paragraphs = s.split('\n\n')
                k = next((i for i, p in enumerate(paragraphs) if '?' in p), 0) + 1
                cell['source'] = '\n\n'.join(paragraphs[:k])
                cells += [cell, _cell('markdown', PREDICTION_CELL, cell['id'] + 'p')]
                if paragraphs[k:]: pending_answer = _cell('markdown', '\n\n'.join(paragraphs[k:]), cell['id'] + 'r')
                continue
            cells.append(cell)
            if kind == 'code' and pending_answer is not None:
                cells.append(pending_answer); pending_answer = None
    for cell in cells:
        if cell['cell_type'] == 'code': cell.update(execution_count=None, outputs=[])
    nb['cells'] = cells
    return nb


def write_config(course: Path) -> Path:
    "Write course/nbgrader_config.py (course root, gradebook, cell timeout) and return its path."
    course.mkdir(parents=True, exist_ok=True)
    path = course / 'nbgrader_config.py'
    path.write_text(NBGRADER_CONFIG.format(root=str(course), db=str(course / 'gradebook.db'), timeout=CELL_TIMEOUT))
    return path


def _api(course: Path):
    "An nbgrader API object for the course folder (configured here, so no nbgrader_config.py needs to be found)."
    # nbgrader runs `alembic` (installed beside this Python) when it creates a gradebook: put that folder first on PATH,
    # or the first call in a new course folder fails with FileNotFoundError 'alembic' when the venv is not activated.
    os.environ['PATH'] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get('PATH', '')])
    os.environ.setdefault('TRUSTML_NB_PROGRESS', '0')
    try: from nbgrader.apps import NbGraderAPI
    except ImportError as e:
        raise SystemExit(f"nbgrader is not installed in {sys.executable}: pip install -c constraints.txt '.[course]' ({e})")
    sys.path.insert(0, str(ROOT / 'tools'))
    import kernel_wakeup
    kernel_wakeup.install()   # autograde runs each lesson through nbclient here: without it a cell's reply can be missed
    from traitlets.config import Config
    c = Config()
    c.CourseDirectory.root = str(course)
    c.CourseDirectory.db_url = 'sqlite:///' + str(course / 'gradebook.db')
    c.Execute.timeout = CELL_TIMEOUT
    c.Execute.interrupt_on_timeout = True
    c.Exchange.root = str(course / 'exchange')
    return NbGraderAPI(config=c)


def _run(course: Path, job: str, *args, retries: int = 1) -> None:
    "Run one nbgrader API call (generate_assignment or autograde); retry once: a first call in a new course failed once."
    api = _api(course)
    for attempt in range(retries + 1):
        result = getattr(api, job)(*args)
        if result['success']: return
        print(f"nbgrader {job} {args} failed (attempt {attempt + 1}):\n{result.get('error', '')[-3000:]}\n"
              f"{result.get('log', '')[-2000:]}", file=sys.stderr)
        time.sleep(1)
    raise RuntimeError(f"nbgrader {job} {args} failed {retries + 1} times; its log is above")


def build(course: Path = DEFAULT_COURSE, names=None) -> dict:
    "Build the nbgrader source course (instructor key) and the student release of the lessons; return their paths."
    course = Path(course).resolve()
    write_config(course)
    out = {}
    for name in lesson_names(names):
        nb = json.loads((TUTORIALS / f'{name}.ipynb').read_text())
        src_dir = course / 'source' / name
        if src_dir.exists(): shutil.rmtree(src_dir)
        src_dir.mkdir(parents=True)
        (src_dir / f'{name}.ipynb').write_text(json.dumps(to_source(nb), indent=1, ensure_ascii=False) + '\n')
        _run(course, 'generate_assignment', name)
        out[name] = {'instructor': src_dir / f'{name}.ipynb', 'student': course / 'release' / name / f'{name}.ipynb'}
        print(f"{name}: instructor key {out[name]['instructor'].relative_to(course)}, "
              f"student copy {out[name]['student'].relative_to(course)}")
    return out


def _find_submissions(submissions: Path, names) -> dict:
    "{(student, lesson): notebook path} for every lesson notebook under SUBMISSIONS/<student>/."
    found = {}
    for student in sorted(p for p in submissions.iterdir() if p.is_dir() and not p.name.startswith('.')):
        for name in names:
            for cand in (student / f'{name}.ipynb', student / name / f'{name}.ipynb'):
                if cand.exists(): found[(student.name, name)] = cand; break
    return found


def grade(submissions: Path, course: Path = DEFAULT_COURSE, names=None) -> list[dict]:
    "Autograde every submission in `submissions` against the built course; write course/grades.{csv,md}; return the rows."
    course, submissions = Path(course).resolve(), Path(submissions).resolve()
    if not submissions.is_dir(): raise FileNotFoundError(f"submissions folder {submissions} does not exist")
    built = [n for n in lesson_names(names) if (course / 'release' / n / f'{n}.ipynb').exists()]
    if not built: raise FileNotFoundError(f"no built lessons in {course}/release: run `make course` first")
    found = _find_submissions(submissions, built)
    if not found: raise FileNotFoundError(f"no submissions in {submissions} (expected <student>/<lesson>.ipynb for lessons {built})")
    write_config(course)
    for folder in ('submitted', 'autograded'):  # copies of an earlier grading run: the submissions folder is the truth
        if (course / folder).exists(): shutil.rmtree(course / folder)
    for (student, name), path in found.items():
        dest = course / 'submitted' / student / name
        if dest.exists(): shutil.rmtree(dest)
        dest.mkdir(parents=True)
        shutil.copy(path, dest / f'{name}.ipynb')
    rows = []
    for name in sorted({n for _, n in found}):
        students = sorted(s for s, n in found if n == name)
        t0 = time.time()
        broken = set()
        for student in students:   # one submission that nbgrader cannot grade (a dead kernel) does not stop the others
            try: _run(course, 'autograde', name, student, retries=0)
            except RuntimeError as e: broken.add(student); print(e, file=sys.stderr)
        seconds = (time.time() - t0) / len(students)
        rows += [dict(r, seconds=round(seconds, 1)) for r in scores(course, name, students, broken)]
    write_table(rows, course)
    return rows


def scores(course: Path, name: str, students, broken=()) -> list[dict]:
    "Scores of the autograded submissions of one lesson, read from the gradebook (`broken`: autograde failed)."
    from nbgrader.api import Gradebook, MissingEntry
    rows = []
    with Gradebook('sqlite:///' + str(Path(course) / 'gradebook.db')) as gb:
        for student in students:
            try: sub = gb.find_submission_notebook(name, name, student)
            except MissingEntry: sub = None
            if sub is None or student in broken:
                rows.append({'student': student, 'lesson': name, 'auto_score': 0, 'auto_max': '', 'written_max': '',
                             'written_to_grade': '', 'failed_tests': 'AUTOGRADE FAILED (see the log)', 'cells_with_errors': ''})
                continue
            auto = [g for g in sub.grades if g.cell_type == 'code']
            written = [g for g in sub.grades if g.cell_type == 'markdown']
            failed = sorted(g.name for g in auto if (g.score or 0) < g.max_score)
            graded = Path(course) / 'autograded' / student / name / f'{name}.ipynb'
            cells = json.loads(graded.read_text())['cells'] if graded.exists() else []
            errors = sum(any(o.get('output_type') == 'error' for o in c.get('outputs', [])) for c in cells)
            rows.append({'student': student, 'lesson': name, 'auto_score': sum(g.score or 0 for g in auto),
                         'auto_max': sum(g.max_score for g in auto),
                         'written_max': sum(g.max_score for g in written),
                         'written_to_grade': sum(1 for g in written if g.needs_manual_grade),
                         'failed_tests': ' '.join(failed), 'cells_with_errors': errors})
    return rows


def write_table(rows: list[dict], course: Path) -> None:
    "Write the grade table as course/grades.csv and course/grades.md."
    cols = ['student', 'lesson', 'auto_score', 'auto_max', 'written_max', 'written_to_grade', 'failed_tests', 'cells_with_errors',
            'seconds']
    with open(course / 'grades.csv', 'w', newline='') as f:
        w = csv.DictWriter(f, fieldnames=cols); w.writeheader(); w.writerows(rows)
    lines = ['| ' + ' | '.join(cols) + ' |', '|' + '---|' * len(cols)]
    lines += ['| ' + ' | '.join(str(r[c]) for c in cols) + ' |' for r in rows]
    (course / 'grades.md').write_text(
        "# Grades (autograded points; written answers are graded by hand in formgrader)\n\n" + '\n'.join(lines) + '\n')
    print('\n'.join(lines))
    print(f"grade table: {course / 'grades.csv'} and {course / 'grades.md'}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest='command', required=True)
    b = sub.add_parser('build', help='write the instructor key (course/source) and the student release (course/release)')
    b.add_argument('lessons', nargs='*', help='lesson names (default: every lesson in tutorials/)')
    b.add_argument('--course', type=Path, default=DEFAULT_COURSE)
    g = sub.add_parser('grade', help='autograde a folder of submissions and write course/grades.{csv,md}')
    g.add_argument('submissions', type=Path)
    g.add_argument('--course', type=Path, default=DEFAULT_COURSE)
    args = p.parse_args(argv)
    if args.command == 'build': build(args.course, args.lessons)
    else: grade(args.submissions, args.course)


if __name__ == '__main__':
    main()
