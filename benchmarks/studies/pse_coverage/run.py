"""Study (PSE coverage, issue 13): the one entry point of the investigation into the short intervals of trustml_nb.pse.

Run:  python benchmarks/studies/pse_coverage/run.py STEP [ARGS ...]   e.g.  run.py nonlinear --n 2000 --reps 200
      python benchmarks/studies/pse_coverage/run.py list               (the steps and the script each runs)
      python benchmarks/studies/pse_coverage/run.py summaries          (only rewrite the summaries and ship them)
Each STEP runs bench_pse_STEP.py of this folder with ARGS (see that script's docstring); its tables and draws go to
results/ here. After every step the runner rewrites the small summaries nbs/11 reads (summaries.py) and copies the
shipped summaries into the package (benchmarks/ship.py), so the wheel carries the summaries and never the draws.
"""
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
STEPS = {p.stem.removeprefix('bench_pse_'): p for p in sorted(HERE.glob('bench_pse_*.py'))}


def main(argv:list)->int:
    "Dispatch one step; 'list' prints the steps, 'summaries' only rewrites and ships the summaries."
    if not argv or argv[0] in ('-h', '--help', 'list'):
        print(__doc__.strip() + "\n\nSteps:")
        for name, path in STEPS.items(): print(f"  {name:24s} {path.name}")
        return 0
    step, args = argv[0], argv[1:]
    if step != 'summaries':
        if step not in STEPS: raise SystemExit(f"unknown step {step!r}; one of {sorted(STEPS)} or 'summaries' ('list' describes them)")
        rc = subprocess.run([sys.executable, str(STEPS[step]), *args]).returncode
        if rc: return rc
    sys.path.insert(0, str(HERE)); sys.path.insert(0, str(HERE.parents[1]))
    import summaries, ship  # noqa: E402  (this folder and benchmarks/)
    for p in summaries.write(): print(f"wrote {p}")
    for p in ship.ship(): print(f"shipped {p}")
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
