"""The wheel a student installs: it carries the LICENSE, the lessons and the benchmark results they quote, and its
`trustml-nb-lessons` command copies the lessons into a folder. Built offline from a copy of the source (no build
isolation: the environment's setuptools), installed with --no-deps into a folder; about 20 s."""
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ['pyproject.toml', 'setup.py', 'MANIFEST.in', 'LICENSE', 'README.md', 'trustml_nb', 'tutorials']   # no benchmarks/: the package ships its own summaries


@pytest.fixture(scope='module')
def wheel(tmp_path_factory):
    src = tmp_path_factory.mktemp('src')
    for name in SOURCE:
        path = ROOT / name
        if path.is_dir(): shutil.copytree(path, src / name, ignore=shutil.ignore_patterns('__pycache__', '.ipynb_checkpoints', '_html'))
        else: shutil.copyfile(path, src / name)
    out = tmp_path_factory.mktemp('dist')
    subprocess.run([sys.executable, '-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation', '--no-index', '-q', '-w', str(out), str(src)],
                   check=True, capture_output=True, text=True, timeout=300)
    (whl,) = out.glob('trustml_nb-*.whl')
    return whl


def test_the_wheel_carries_license_lessons_and_results(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith('.dist-info/licenses/LICENSE') for n in names), names
    license_text = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith('licenses/LICENSE'))).decode()
    assert 'Apache License' in license_text and 'Version 2.0, January 2004' in license_text
    lessons = sorted(n.split('/')[-1] for n in names if n.startswith('trustml_nb/lessons/'))
    expected = sorted(p.name for pattern in ('*.ipynb', '*.md') for p in (ROOT / 'tutorials').glob(pattern)
                      if p.name not in ('INSTRUCTOR_NOTES.md', 'RUBRICS.md'))       # the instructor's files stay out
    for n in names:   # the wheel's lessons are the student's copy: no answers
        if n.startswith('trustml_nb/lessons/') and n.endswith('.ipynb'):
            text = zipfile.ZipFile(wheel).read(n).decode()
            assert '<summary>Answers</summary>' not in text and '### BEGIN SOLUTION' not in text, n
    assert {'trustml_nb/datasets/DATASHEET_adult.md', 'trustml_nb/datasets/DATASHEET_german.md', 'trustml_nb/datasets/DATASHEET_planetoid.md'} <= set(names)
    assert lessons == expected and len([n for n in lessons if n.endswith('.ipynb')]) >= 10, lessons
    results = {n.split('/')[-1] for n in names if n.startswith('trustml_nb/results/')}
    for needed in ('oath_detection.csv', 'oath_throughput.csv', 'multicalibration_vs_mcgrad.csv', 'mifpo.json', 'mifpo_random.csv'):
        assert needed in results, needed
    assert 'trustml_nb/datasets/adult.data.gz' in names
    # summaries only: exactly the package's results folder, no per-replication draws, nothing big, nothing from benchmarks/
    assert results == {p.name for p in (ROOT / 'trustml_nb' / 'results').iterdir()}, results
    assert not [n for n in names if 'draws' in n or n.startswith('benchmarks/')], names
    assert max(i.file_size for i in zipfile.ZipFile(wheel).infolist() if i.filename.startswith('trustml_nb/results/')) < 100_000
    entry = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith('entry_points.txt'))).decode()
    assert 'trustml-nb-lessons = trustml_nb.course:main' in entry


def test_the_shipped_summaries_match_the_benchmarks_that_wrote_them():
    "trustml_nb/results/ holds exactly benchmarks/ship.py's list, each byte-equal to the file its benchmark script wrote."
    run = subprocess.run([sys.executable, str(ROOT / 'benchmarks' / 'ship.py'), '--check'], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_installed_wheel_copies_its_lessons(wheel, tmp_path):
    target = tmp_path / 'site'
    subprocess.run([sys.executable, '-m', 'pip', 'install', '--no-deps', '--no-index', '-q', '--target', str(target), str(wheel)],
                   check=True, capture_output=True, text=True, timeout=300)
    env = {**os.environ, 'PYTHONPATH': str(target)}
    dest = tmp_path / 'my course'
    run = subprocess.run([str(target / 'bin' / 'trustml-nb-lessons'), str(dest)], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert f"copied {len(list(dest.iterdir()))} files to {dest}" in run.stdout
    first = json.loads((dest / '00_start_here.ipynb').read_text())
    assert first['cells'][0]['cell_type'] == 'markdown'
    sys.path.insert(0, str(ROOT))
    from trustml_nb.course import student_notebook
    assert first == student_notebook(json.loads((ROOT / 'tutorials' / '00_start_here.ipynb').read_text()))   # no answers
    assert not (dest / 'INSTRUCTOR_NOTES.md').exists() and (dest / 'DATASHEET_german.md').exists()
    again = subprocess.run([str(target / 'bin' / 'trustml-nb-lessons'), str(dest)], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert again.returncode == 1 and 'overwrite' in again.stderr
    # the installed package (not a checkout) finds its lessons and the benchmark results the lessons read
    probe = ("import trustml_nb, trustml_nb.course as c, trustml_nb.data as d; "
             "print(c.lessons_dir()); print(d.benchmark_result('oath_detection.csv')); print(trustml_nb.__file__)")
    out = subprocess.run([sys.executable, '-c', probe], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path).stdout.split()
    assert out[0] == str(target / 'trustml_nb' / 'lessons') and out[1] == str(target / 'trustml_nb' / 'results' / 'oath_detection.csv'), out
    assert out[2].startswith(str(target)), out
