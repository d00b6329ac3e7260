"""Build hook: the wheel carries the lessons.

All metadata lives in pyproject.toml. This file only adds a build step that copies `tutorials/*.ipynb` (as the
student's copy, trustml_nb.course.student_notebook: no answers) and `tutorials/*.md` (less the instructor's notes and rubrics)
into `trustml_nb/lessons/` inside the build folder, so `pip install trustml_nb` gets the lessons
(`trustml-nb-lessons DEST` copies them out). Editable installs skip the copy: the package then reads `tutorials/` of the
checkout directly. The benchmark summaries the lessons quote are ordinary package data (`trustml_nb/results/`, written
there by `benchmarks/ship.py`); nothing from benchmarks/ is copied at build time.
"""
import importlib.util
import json
import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SHIPPED = (('tutorials', 'lessons', ('*.ipynb', '*.md')),)
INSTRUCTOR_ONLY = ('INSTRUCTOR_NOTES.md', 'RUBRICS.md')  # the answers' side of the course: never in the wheel (trustml_nb.course)


def _student_notebook():
    "trustml_nb.course.student_notebook, loaded from its file: a build environment may lack numpy, so the package is not imported."
    spec = importlib.util.spec_from_file_location('_trustml_nb_course', ROOT / 'trustml_nb' / 'course.py')
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.student_notebook


class BuildWithLessons(build_py):
    "build_py, then copy the lessons into the built package."

    def run(self):
        super().run()
        if getattr(self, 'editable_mode', False): return
        for source, target, patterns in SHIPPED:
            files = sorted(p for pattern in patterns for p in (ROOT / source).glob(pattern) if p.is_file())
            if not files: raise FileNotFoundError(f"nothing to ship from {ROOT / source}: build from a full checkout or its sdist")
            dest = Path(self.build_lib) / 'trustml_nb' / target
            dest.mkdir(parents=True, exist_ok=True)
            strip = _student_notebook()   # the wheel's lessons are the student's copy: no solutions, hidden tests or model answers
            for p in files:
                if p.name in INSTRUCTOR_ONLY: continue
                if p.suffix == '.ipynb':
                    nb = strip(json.loads(p.read_text(encoding='utf-8')))
                    (dest / p.name).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n', encoding='utf-8')
                else: shutil.copyfile(p, dest / p.name)


setup(cmdclass={'build_py': BuildWithLessons})
