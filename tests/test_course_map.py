"""The course's maps agree with the lessons: 00_start_here's course map, SYLLABUS.md, INSTRUCTOR_NOTES.md, RUBRICS.md,
READING_LIST.md and GLOSSARY.md name every lesson in tutorials/ (and no other), and every file 00_start_here names is in
the folder a student gets from `trustml-nb-lessons` (which has no tutorials/ or nbs/)."""
import json
import re
from pathlib import Path

import pytest

from trustml_nb.course import copy_lessons

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / 'tutorials'
LESSONS = sorted(p.stem for p in TUTORIALS.glob('*.ipynb'))


def _cells(name):
    nb = json.loads((TUTORIALS / f'{name}.ipynb').read_text())
    return [''.join(c['source']) if isinstance(c['source'], list) else c['source'] for c in nb['cells'] if c['cell_type'] == 'markdown']


def _course_map():
    "The markdown cell of 00_start_here that holds the course map (the table of lessons)."
    (cell,) = [s for s in _cells('00_start_here') if '## How the course is organised' in s]
    return cell


def test_there_are_the_lessons():
    assert len(LESSONS) >= 12 and LESSONS[0] == '00_start_here', LESSONS


def test_the_course_map_lists_every_lesson_once_as_a_file_of_the_students_folder():
    table = [l for l in _course_map().splitlines() if l.startswith('| `')]
    named = [re.match(r'\| `([^`]+)\.ipynb` \|', l)[1] for l in table]
    assert named == LESSONS, named                                   # every lesson, in order, nothing else
    for path in ('tutorials/', 'nbs/'):                               # a student's copied folder has neither
        assert path not in _course_map(), path


def test_every_file_00_start_here_names_is_in_the_students_copy(tmp_path):
    copied = {p.name for p in copy_lessons(tmp_path / 'course')}
    text = '\n'.join(_cells('00_start_here'))
    named = set(re.findall(r'`([\w.-]+\.(?:ipynb|md))`', text))
    assert named and named <= copied, named - copied
    assert not re.search(r'`(?:tutorials|nbs)/', text)


@pytest.mark.parametrize('doc', ['SYLLABUS.md', 'INSTRUCTOR_NOTES.md', 'RUBRICS.md', 'READING_LIST.md', 'GLOSSARY.md'])
def test_every_lesson_is_in_the_course_documents(doc):
    text = (TUTORIALS / doc).read_text()
    named = set(re.findall(r'`?(\d\d_[a-z_]+)`?', text))
    missing = [n for n in LESSONS if n not in named]
    assert not missing, (doc, missing)
    assert named <= set(LESSONS), (doc, named - set(LESSONS))       # no lesson that does not exist


def test_the_syllabus_table_has_one_row_per_lesson():
    rows = re.findall(r'^\| `(\d\d_[a-z_]+)` \|', (TUTORIALS / 'SYLLABUS.md').read_text(), re.M)
    assert rows == LESSONS, rows


def test_instructor_notes_have_one_section_per_lesson_in_order():
    heads = re.findall(r'^## (\d\d_[a-z_]+):', (TUTORIALS / 'INSTRUCTOR_NOTES.md').read_text(), re.M)
    assert heads == LESSONS, heads


def test_instructor_notes_agree_with_lesson_40_on_the_returns_axis():
    "Issue 39: the notes said the axis could change between settings; the lesson (and its plot) keep it fixed."
    lesson = '\n'.join(_cells('40_fairdice'))
    notes = (TUTORIALS / 'INSTRUCTOR_NOTES.md').read_text()
    section = notes.split('## 40_fairdice')[1].split('\n## ')[0]
    assert 'returns axis stays the same for every setting' in lesson
    assert 'returns axis is the same for every setting' in section and 'can\n  change' not in section
    assert 'scale can' not in section


def test_the_course_glossary_is_every_lessons_glossary():
    "GLOSSARY.md is generated from the lessons (tools/course_checks.py glossary): current, and it has every term."
    import sys
    sys.path.insert(0, str(ROOT / 'tools'))
    import course_checks
    entries = course_checks.glossary_entries()
    assert len(entries) >= 80 and {lesson for _, lesson, _ in entries} == set(LESSONS)
    text = (TUTORIALS / 'GLOSSARY.md').read_text()
    assert text == course_checks.glossary_markdown(), "GLOSSARY.md is stale: python tools/course_checks.py glossary > tutorials/GLOSSARY.md"
    for term, lesson, _ in entries: assert f"- **{term}** (`{lesson}`)" in text


def test_the_reading_list_links_every_lessons_paper():
    "One row per lesson with a link (https) to its paper; official code linked where the brief names one."
    text = (TUTORIALS / 'READING_LIST.md').read_text()
    rows = {m[1]: m[0] for m in re.finditer(r'^\| `(\d\d_[a-z_]+)` \|.*$', text, re.M)}
    assert sorted(rows) == LESSONS
    for lesson, row in rows.items():
        cells = [c.strip() for c in row.strip('|').split('|')]
        assert re.search(r'<https://(arxiv\.org/abs|openreview\.net/forum\?id=|doi\.org)/?[\w.=/-]+>', cells[2]), (lesson, cells[2])
        assert cells[3].startswith('<https://github.com/') or cells[3].split()[0] in ('none', 'supplementary', '-'), (lesson, cells[3])
    assert len(re.findall(r'<https://github\.com/[^>]+>', text)) >= 7
