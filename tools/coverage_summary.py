"""Summarise a `make coverage` run: line coverage per module of trustml_nb/, and every test that ran no package line.

    .venv/bin/python tools/coverage_summary.py test-output/coverage.txt benchmarks/results/coverage.md

Reads the text report written by `coverage report` and the combined data file (.coverage, one context per test
function: `dynamic_context = "test_function"` in pyproject.toml). A test whose context executed no line of trustml_nb/
calls no package code (import-time lines belong to no test), so it could pass with the package replaced.
"""
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(report_txt: str, out_md: str):
    rows, total = [], None
    for line in Path(report_txt).read_text().splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[-1].endswith('%') and (parts[0].startswith('trustml_nb') or parts[0] == 'TOTAL'):
            r = dict(name=parts[0], stmts=int(parts[1]), miss=int(parts[2]), cover=parts[-1])
            if parts[0] == 'TOTAL': total = r
            else: rows.append(r)
    lines = ['# Line coverage of trustml_nb/ (coverage.py over the default suite, `make coverage`)', '',
             f"Total: {total['cover']} of {total['stmts']:,} statements ({total['miss']:,} missed). Load average at the end: "
             f"{os.getloadavg()[0]:.2f}.", '', '| module | statements | missed | cover |', '|---|---|---|---|']
    lines += [f"| {r['name']} | {r['stmts']} | {r['miss']} | {r['cover']} |" for r in rows]
    data_file = ROOT / '.coverage'
    if data_file.exists():
        from coverage import CoverageData
        data = CoverageData(str(data_file)); data.read()
        contexts = sorted(c for c in data.measured_contexts() if c)
        hit = set()
        for f in data.measured_files():
            if f'{os.sep}trustml_nb{os.sep}' not in f: continue
            for ctx in data.contexts_by_lineno(f).values(): hit.update(ctx)
        none = [c for c in contexts if c not in hit]
        lines += ['', f'## Tests that executed no line of trustml_nb/ ({len(none)} of {len(contexts)} test contexts)', '',
                  'A context is one test function (parametrised cases share it).', '']
        lines += [f'- `{c}`' for c in none] or ['- none']
    Path(out_md).write_text('\n'.join(lines) + '\n')
    print(f"coverage {total['cover']}; wrote {out_md}")


if __name__ == '__main__':
    main(*sys.argv[1:3])
