"""Study (no peer library): Disk size of virtual environments: the student path (`lessons` extra) against the full development environment.

Usage: python benchmarks/bench_env_size.py NAME=VENV_DIR [NAME=VENV_DIR ...]
Writes benchmarks/results/env_size.md (du -sb of the venv, its package count from `pip list`, and torch's share).
Build the lean venv as the README's *For students* section says (wheel + `[lessons]` extra in a fresh `python -m venv`)."""
import subprocess, sys, time
from pathlib import Path

def du_bytes(path:Path)->int: return int(subprocess.run(['du', '-sb', str(path)], capture_output=True, text=True, check=True).stdout.split()[0])

def main(specs):
    rows = []
    for spec in specs:
        name, _, venv = spec.partition('=')
        venv = Path(venv)
        if not (venv / 'bin' / 'python').exists(): raise SystemExit(f"{venv}: not a virtual environment (no bin/python)")
        pkgs = subprocess.run([str(venv / 'bin' / 'python'), '-m', 'pip', 'list', '--format=freeze'], capture_output=True, text=True, check=True).stdout.split()
        torch = next(venv.glob('lib/python*/site-packages/torch'), None)
        rows.append((name, str(venv), du_bytes(venv) / 1e9, len(pkgs), du_bytes(torch) / 1e6 if torch else float('nan')))
    out = Path(__file__).parent / 'results' / 'env_size.md'
    lines = [f"# Environment sizes\n\nCommand: `python benchmarks/bench_env_size.py {' '.join(specs)}` ({time.strftime('%Y-%m-%d')}).\n",
             "| environment | path | size (GB, du -sb) | packages (pip list) | torch (MB) |", "|---|---|---|---|---|"]
    lines += [f"| {n} | `{p}` | {gb:.1f} | {k} | {t:.0f} |" for n, p, gb, k, t in rows]
    lines += ['', 'In words: ' + '; '.join(f"{n} {gb:.1f} GB ({k} packages, torch {t:.0f} MB)" for n, p, gb, k, t in rows) + '.']
    out.write_text('\n'.join(lines) + '\n'); print(out.read_text())

if __name__ == '__main__': main(sys.argv[1:])
