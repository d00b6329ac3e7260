"""Build hook: the wheel carries the lessons and the benchmark results they quote.

All metadata lives in pyproject.toml. This file only adds a build step that copies `tutorials/*.ipynb` and
`tutorials/*.md` into `trustml_nb/lessons/` and `benchmarks/results/*` into `trustml_nb/results/` inside the build
folder, so `pip install trustml_nb` gets the lessons (`trustml-nb-lessons DEST` copies them out) and
`trustml_nb.data.benchmark_result` finds the results without a clone. Editable installs skip the copy: the package
then reads `tutorials/` and `benchmarks/results/` of the checkout directly.
"""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SHIPPED = (('tutorials', 'lessons', ('*.ipynb', '*.md')), ('benchmarks/results', 'results', ('*.csv', '*.md', '*.json')))


class BuildWithLessons(build_py):
    "build_py, then copy the lessons and the benchmark results into the built package."

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
