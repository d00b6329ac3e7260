"""List the numbers in README.md, nbs/index.ipynb and the summary cells of every lesson and module notebook, and where each
comes from (issue 15, item 5: every number comes from a results file or is asserted by the cell that prints it).

A number is a decimal (0.017), a percentage (96%), or an integer with a unit or a multiplier (13 s, 4x, 2,146 tests).
For each, in this order:
- `asserted`: the notebook's own code cells hold it (or its rounding) in an assertion statement (assert / test_eq / test_close);
- `results`: a file of the notebook's topic under benchmarks/results/, benchmarks/studies/*/results/ or trustml_nb/results/ (fairdice_*, pse_*, ...; any file for the README) holds it:
  the same text, or a number that rounds to it at the printed precision. This is a lead for a reader, not a proof;
- `code`: the notebook's code cells hold it as a literal (a setting such as alpha=0.1, a seed, a size);
- `README code`: a code block of the README holds it (a setting in an example);
- `computed`: a closed-form answer recomputed here with package code (COMPUTED below);
- `exercise setting`: a number in an exercise prompt (a value the reader is asked to set);
- `lead`: the README's suite counts and timings, which the lead updates after the final CI run;
- `UNSOURCED`: none of these. Each such number needs a results file, an assertion, or rewording.
Writes benchmarks/results/claims.md; exit status 1 when a number is UNSOURCED.

    .venv/bin/python tools/check_claims.py [--show-all]
"""
import argparse
import ast
import json

import numpy as np
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / 'benchmarks' / 'results'
# where results live: the benchmarks' own folder, each study's (benchmarks/studies/*/results) and the summaries shipped in the package
RESULT_DIRS = [RESULTS, *sorted((ROOT / 'benchmarks' / 'studies').glob('*/results')), ROOT / 'trustml_nb' / 'results']
NUM = re.compile(r'(?<![\w.\-/])(\d{1,3}(?:,\d{3})+|\d+\.\d+|\d+)(\s?%|\s?(?:s|ms|min|minutes|seconds|h|GB|MB|x|×)\b)?(?![\w.]*\d)')
SKIP_CONTEXT = re.compile(r'(issue|Issue|nbs/|tutorials/|Python|python|torch==|==|doi|arXiv|NeurIPS|ICML|ICLR|AISTATS|JMLR|port|COLT|FAccT|'
                          r'\d{4}\)|CC BY|Section|section|Table|Eq\.|eq\.|Figure|Theorem|Lemma|Proposition|Algorithm|step \d)')
LEAD = re.compile(r'(tests passed|make test` took|pytest \d|long studies|skipped|fresh clone)')
ASSERTS = ('assert', 'test_eq', 'test_close', 'test_ne', 'assert_allclose')


TOPIC = {'path_specific': 'pse', 'fedfact': 'fedfact', 'gam': 'gam', 'fairdice': 'fairdice', 'multicalibration': 'multicalibration',
         'omniprediction': 'omniprediction', 'mifpo': 'mifpo', 'oath': 'oath', 'matroid': 'matroid', 'monoculture': 'monoculture',
         'quere': 'quere', 'llm': 'llm', 'data': 'lesson_times'}


def _topic(path) -> str:
    "The results-file prefix of a notebook's topic ('' for the README and the index: every file)."
    return next((v for k, v in TOPIC.items() if k in Path(path).stem), '')


def _results_index(prefix: str = ''):
    "Every numeric token of the results files (RESULT_DIRS) whose name starts with prefix, with the file it came from."
    idx = {}
    for p in sorted(p for folder in RESULT_DIRS for p in folder.glob(f'{prefix}*')):
        if p.suffix not in ('.md', '.csv', '.json', '.txt', '.log') or p.name == 'claims.md': continue
        for tok in re.findall(r'-?\d+(?:\.\d+)?(?:e-?\d+)?', p.read_text(errors='replace').replace(',', '')):
            idx.setdefault(tok, p.name)
    return idx


def _matches(value: str, tokens) -> str | None:
    "A token equal to value, or one that rounds to it at value's printed precision (a percentage: a share that rounds to it)."
    v = value.replace(',', ''); pct = v.endswith('%'); v = v.rstrip('%')
    if v in tokens and not pct: return tokens[v]
    d = len(v.split('.')[1]) if '.' in v else 0; target = float(v)
    if not pct and '.' not in v: return None
    for tok, where in tokens.items():
        x = _float(tok)
        if x is None: continue
        if pct and 0 <= x <= 1 and '.' in tok and len(tok.split('.')[1]) > d + 1 and round(x * 100, d) == target: return where
        if not pct and '.' in tok and len(tok.split('.')[1]) > d and round(x, d) == target: return where
    return None


def _float(t):
    try: return float(t)
    except ValueError: return None


def _cells(nb_path):
    return json.loads(nb_path.read_text())['cells']


def _summary_cells(cells):
    "Markdown cells from a '## Summary' heading up to the next '## ' heading."
    out, on = [], False
    for i, c in enumerate(cells):
        if c['cell_type'] != 'markdown': continue
        s = ''.join(c['source'])
        if re.match(r'#{1,3} (Summary|What you learned|Recap)', s): on = True
        elif re.match(r'#{1,2} ', s): on = False
        if on: out.append((i, s))
    return out


def _code_numbers(cells):
    "(numbers in assertion statements, numbers anywhere in code) of a notebook's code cells."
    asserted, literal = set(), set()
    for c in cells:
        if c['cell_type'] != 'code': continue
        src = ''.join(c['source'])
        src = re.sub(r'(?<=\d)[_,](?=\d{3})', '', src)                      # 16_281 and '16,281' read as 16281
        nums = set(re.findall(r'\d+(?:\.\d+)?(?:e-?\d+)?', src))
        literal |= nums | {n.split('e')[0] for n in nums}                  # 6.654e-3 also counts as 6.654
        for line in src.splitlines():
            if any(a in line for a in ASSERTS): asserted |= set(re.findall(r'\d+(?:\.\d+)?(?:e-?\d+)?', line))
    return asserted, literal


def _numbers(text):
    "(number with unit, context) for every claim-like number of a text (code spans and math excluded)."
    text = re.sub(r'```.*?```', ' ', text, flags=re.S)
    for line in text.splitlines():
        clean = re.sub(r'`[^`]*`|\$[^$]*\$|\([^()]*\.ipynb[^()]*\)|https?://\S+|\[[^\]]*\]\([^)]*\)', ' ', line)
        for m in NUM.finditer(clean):
            num, unit = m.group(1), (m.group(2) or '').strip()
            if '.' not in num and not unit and ',' not in num: continue          # bare integers: counts, seeds, list numbers
            ctx = clean[max(0, m.start() - 50): m.end() + 30].strip()
            if SKIP_CONTEXT.search(clean[max(0, m.start() - 14): m.end() + 3]): continue
            yield num + ('%' if unit.endswith('%') else (' ' + unit if unit else '')), num, ctx, line


# answers quoted in summaries that hold by a closed form or one call: (file, number) -> (what is computed, a function)
def _jain(k):
    from trustml_nb.fairdice import jain_index
    return round(jain_index(k), 2)


def _laminar_everyone():
    "Lesson 90, exercise 2: LaminarColouringSelector's acceptance probability on the funding example (the lesson's order): one value?"
    from trustml_nb.matroid_selection import LaminarColouringSelector, acceptance_probabilities, funding_example
    p = acceptance_probabilities(funding_example(), LaminarColouringSelector(), order=[0, 6, 1, 10, 2, 7, 3, 8, 11, 4, 9, 5],
                                 show_progress=False).table.probability
    return round(float(p.max()), 2) if p.min() == p.max() else float('nan')


COMPUTED = {('tutorials/40_fairdice.ipynb', '0.96'): ('jain_index([11/6, 11/4])', lambda: _jain([11 / 6, 11 / 4])),
            ('tutorials/40_fairdice.ipynb', '0.74'): ('jain_index([1, 4])', lambda: _jain([1, 4])),
            ('tutorials/00_start_here.ipynb', '20'): ('the 0.8 quantile leaves the top 100 (1 - 0.8) %', lambda: round(100 * (1 - 0.8))),
            ('tutorials/90_matroid_selection.ipynb', '0.2'): ('acceptance_probabilities(funding_example(), LaminarColouringSelector(), ...): '
                                                              'the same for everyone', _laminar_everyone)}
EXERCISE = re.compile(r'^\s*\d+\.\s+\*\((warm-up|understanding|going further|application|challenge)')   # a prompt: its numbers are settings


def classify(num, ctx, line, asserted, literal, tokens, readme_code=(), file=''):
    v = num.replace(',', '')
    if LEAD.search(line): return 'lead', ''
    if (file, v) in COMPUTED:
        what, fn = COMPUTED[file, v]; got = fn()
        return ('computed', what) if got == float(v) else ('UNSOURCED', f'{what} = {got}, not {v}')
    if EXERCISE.match(line): return 'exercise setting', ''
    pct = num + '%' in ctx or num + ' %' in ctx
    forms = {v} | ({f"{float(v) / 100:.10g}", f"{float(v) / 100:.10g}".lstrip('0')} if pct else set())
    sci = re.search(re.escape(num) + r'e(-?\d+)', line)                       # 6.654e-3 written as 0.006654 or 6.654e-03
    if sci:
        x = float(num + 'e' + sci.group(1)); forms |= {f"{x:.10g}", f"{x:.4g}", f"{x:.3e}".replace('e-0', 'e-')}
        forms |= {a for a in asserted if _float(a) is not None and np.isclose(_float(a), x, rtol=1e-3)}
    if forms & asserted or (('.' in v) and any(a.startswith(v) for a in asserted)): return 'asserted', ''
    where = _matches(num + ('%' if '%' in ctx[ctx.find(num):ctx.find(num) + len(num) + 2] else ''), tokens)
    if where: return 'results', where
    if v in literal: return 'code', ''
    if num + '%' in ctx or num + ' %' in ctx:                                 # 20% written as 0.2 in the code
        frac = f"{float(v) / 100:.10g}"
        if frac in literal or frac.lstrip('0') in literal: return 'code', ''
    if v in readme_code: return 'README code', ''
    return 'UNSOURCED', ''


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0]); ap.add_argument('--show-all', action='store_true')
    a = ap.parse_args()
    tokens = _results_index()
    rows = []
    readme = (ROOT / 'README.md').read_text()
    readme_code = set(re.findall(r'\d+(?:\.\d+)?', ' '.join(re.findall(r'```.*?```|`[^`]*`', readme, flags=re.S))))
    for full, num, ctx, line in _numbers(readme):      # README: only a results file holding the same text counts
        exact = next((p.name for p in sorted(p for folder in RESULT_DIRS for p in folder.glob('*')) if p.suffix in ('.md', '.csv') and p.name != 'claims.md' and (full in (t := p.read_text(errors='replace')) or full.replace(',', '') in t)), '')   # tables print 9996 for 9,996
        kind = ('results', exact) if exact and not LEAD.search(line) else classify(num, ctx, line, set(), set(), {}, readme_code)
        rows.append(('README.md', '', full, *kind, ctx))
    nbs = [ROOT / 'nbs' / 'index.ipynb'] + sorted((ROOT / 'tutorials').glob('*.ipynb')) + sorted((ROOT / 'nbs').glob('[0-9]*.ipynb'))
    for nb in nbs:
        cells = _cells(nb); tokens = _results_index(_topic(nb)) if _topic(nb) else {}
        asserted, literal = _code_numbers(cells)
        chosen = [(i, ''.join(c['source'])) for i, c in enumerate(cells) if c['cell_type'] == 'markdown'] if nb.name == 'index.ipynb' else _summary_cells(cells)
        for i, text in chosen:
            for full, num, ctx, line in _numbers(text):
                rel = str(nb.relative_to(ROOT))
                rows.append((rel, i, full, *classify(num, ctx, line, asserted, literal, tokens, file=rel), ctx))
    counts = {}
    for r in rows: counts[r[3]] = counts.get(r[3], 0) + 1
    lines = ['# Numbers in the README, the index and the summary cells, and where each comes from (`tools/check_claims.py`)', '',
             'Kinds: asserted (an assertion in the same notebook holds it), results (a file in benchmarks/results/ holds it or a number that',
             "rounds to it), code (a literal in the notebook's code: a setting), README code (a setting in a README example), lead (suite",
             'counts and timings the lead updates after the final CI run), UNSOURCED. A `results` match by rounding is a lead, not a proof:',
             'the file is named so that a reader can check it.', '',
             'Totals: ' + ', '.join(f'{k} {v}' for k, v in sorted(counts.items())), '',
             '| file | cell | number | kind | results file | context |', '|---|---|---|---|---|---|']
    for f, i, full, kind, where, ctx in rows:
        if a.show_all or kind in ('UNSOURCED', 'results', 'asserted', 'lead', 'computed'):
            lines.append(f"| {f} | {i} | {full} | {kind} | {where} | {ctx.replace('|', '/')} |")
    (RESULTS / 'claims.md').write_text('\n'.join(lines) + '\n')
    print('\n'.join(lines[:9]))
    for r in rows:
        if r[3] == 'UNSOURCED': print(f"UNSOURCED {r[0]} cell {r[1]}: {r[2]}  <- {r[5]}")
    sys.exit(1 if counts.get('UNSOURCED') else 0)


if __name__ == '__main__':
    main()
