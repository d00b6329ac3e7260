"""Build hook: the wheel carries the lessons.

All metadata lives in pyproject.toml. This file only adds a build step that copies `tutorials/*.ipynb` and
`tutorials/*.md` into `trustml_nb/lessons/` inside the build folder, so `pip install trustml_nb` gets the lessons
(`trustml-nb-lessons DEST` copies them out). Editable installs skip the copy: the package then reads `tutorials/` of the
checkout directly. The benchmark summaries the lessons quote are ordinary package data (`trustml_nb/results/`, written
there by `benchmarks/ship.py`); nothing from benchmarks/ is copied at build time.
"""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SHIPPED = (('tutorials', 'lessons', ('*.ipynb', '*.md')),)


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
            for p in files: shutil.copyfile(p, dest / p.name)


setup(cmdclass={'build_py': BuildWithLessons})
