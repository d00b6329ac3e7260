"""Split exported notebook cells into one top-level definition per cell, and long classes into `@patch` cells.

    python tools/split_cells.py nbs/41_fairdice.ipynb [--max-class 80] [--dry-run]

nbdev's own notebooks keep one definition per exported cell so the prose and the check that belong to it can follow
it. This tool does the mechanical part of that: every exported cell is cut at its top-level definitions (comments and
constants above a definition go with it; statements after the last one stay with it), and a class longer than
`--max-class` lines keeps its docstring, fields, dunder methods and any method that needs the class body (`super()`,
`__class__`, static methods, other decorators), while its other methods move, in order, to cells of
`@patch def method(self:Class, ...)` (fastcore.basics.patch; properties become `@patch(as_prop=True)`). The first cell
keeps the old cell id, so the `# %%` markers in the module still point at real cells. Run nbdev-export and the
notebook's tests afterwards: the module's behaviour must not change.
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import secrets
import statistics
import sys
import textwrap
from pathlib import Path

DIRECTIVE = re.compile(r"^\s*#\|")


def _new_cell(src: str) -> dict:
    return dict(cell_type='code', execution_count=None, id=secrets.token_hex(4), metadata={}, outputs=[],
                source=src.splitlines(True))


def _is_definition(node) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))


def _start(node) -> int:
    "First line (1-based) of a node, decorators included."
    return min([node.lineno] + [d.lineno for d in getattr(node, 'decorator_list', [])])


def split_source(body: str) -> list:
    "Cut cell code (no directives) into chunks with one top-level definition each (strings, in order)."
    try: tree = ast.parse(body)
    except SyntaxError: return [body]
    lines = body.splitlines(True)
    defs = [n for n in tree.body if _is_definition(n)]
    if len(defs) <= 1: return [body]
    # imports at the very top stay in their own chunk only if the cell has nothing else before the first definition
    cuts, prev_end = [], 0
    for k, node in enumerate(tree.body):
        if not _is_definition(node) or node is defs[0]: continue
        # the chunk of this definition starts after the previous definition's last line (its comments and constants come along)
        prior = [n for n in tree.body[:k] if _is_definition(n)][-1]
        cut = prior.end_lineno
        # statements between the previous definition and this one: constants go with this one, calls stay with the previous
        between = [n for n in tree.body if prior.end_lineno < n.lineno < _start(node)]
        for n in between:
            if isinstance(n, ast.Expr): cut = n.end_lineno      # e.g. Cls.method = ... or a registration call
        cuts.append(cut)
    chunks, last = [], 0
    for c in cuts + [len(lines)]:
        chunk = ''.join(lines[last:c]).strip('\n')
        if chunk: chunks.append(chunk)
        last = c
    return chunks


KEEP_IN_CLASS = re.compile(r"\bsuper\(\)|__class__|\bself\.__[a-z]")


def patch_class(chunk: str, max_lines: int) -> list:
    "A class chunk longer than `max_lines`: the class with the methods that must stay, then `@patch` chunks."
    tree = ast.parse(chunk)
    cls = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    if len(cls) != 1 or len(chunk.splitlines()) <= max_lines: return [chunk]
    cls = cls[0]; lines = chunk.splitlines(True)
    moved, keep_spans = [], []
    for node in cls.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name == '__init__': continue
        decos = [ast.unparse(d) for d in node.decorator_list]
        if any(d not in ('property',) for d in decos): continue        # staticmethod, classmethod, setters...: stay
        src = ''.join(lines[_start(node) - 1:node.end_lineno])
        if KEEP_IN_CLASS.search(src) or node.name.startswith('__'): continue   # dunders: dataclass and Python look them up in the class body
        if not node.args.args or node.args.args[0].arg != 'self': continue
        moved.append(node)
    if not moved: return [chunk]
    # the comment lines directly above a moved method go with it
    def span(node):
        a = _start(node) - 1
        while a > 0 and lines[a - 1].strip().startswith('#'): a -= 1
        return a, node.end_lineno
    spans = [span(n) for n in moved]
    drop = set(i for a, b in spans for i in range(a, b))
    kept = ''.join(l for i, l in enumerate(lines) if i not in drop).rstrip('\n')
    kept = re.sub(r"\n\s*\n(\s*\n)+", "\n\n", kept)
    out, group = [kept], []
    for node, (a, b) in zip(moved, spans):
        src = textwrap.dedent(''.join(lines[a:b]))
        is_prop = any(ast.unparse(d) == 'property' for d in node.decorator_list)
        src = re.sub(r"^@property\n", "", src, flags=re.M)
        deco = '@patch(as_prop=True)' if is_prop else '@patch'
        # self -> self:Class (keeping what follows: a comma, a paren or a comment)
        src = re.sub(rf"^((?:async )?def {node.name}\(\s*)self\b(\s*:[^,)]*)?", rf"\1self:{cls.name}", src, count=1, flags=re.M)
        m = re.search(rf"^(?:async )?def {node.name}\(", src, flags=re.M)
        src = src[:m.start()] + deco + '\n' + src[m.start():]
        out.append(src.rstrip('\n'))
    return out


def split_notebook(path: Path, max_class: int = 80, dry_run: bool = False) -> tuple:
    nb = json.loads(path.read_text())
    new_cells, before, after, needs_patch = [], [], [], False
    for cell in nb['cells']:
        src = ''.join(cell['source'])
        if cell['cell_type'] != 'code' or not re.search(r"^#\|\s*export\b", src, flags=re.M):
            new_cells.append(cell); continue
        dirs = [l for l in src.splitlines(True) if DIRECTIVE.match(l)]
        body = ''.join(l for l in src.splitlines(True) if not DIRECTIVE.match(l))
        before.append(len(body.strip('\n').splitlines()))
        chunks = []
        for ch in split_source(body.strip('\n')):
            parts = patch_class(ch, max_class)
            if len(parts) > 1: needs_patch = True
            chunks.extend(parts)
        for k, ch in enumerate(chunks):
            text = ''.join(dirs) + ch
            if k == 0:
                c = dict(cell); c['source'] = text.splitlines(True); new_cells.append(c)
            else: new_cells.append(_new_cell(text))
            after.append(len(ch.splitlines()))
    if needs_patch:    # fastcore's patch must be importable in the module: add it to the first exported import cell
        for c in new_cells:
            s = ''.join(c['source'])
            if c['cell_type'] == 'code' and re.search(r"^#\|\s*export", s, flags=re.M) and re.search(r"^(import|from) ", s, flags=re.M):
                if 'from fastcore.basics import patch' not in s:
                    c['source'] = (s.rstrip('\n') + '\nfrom fastcore.basics import patch\n').splitlines(True)
                break
    if not dry_run:
        nb['cells'] = new_cells
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n')
    return before, after


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('notebooks', nargs='+', type=Path)
    ap.add_argument('--max-class', type=int, default=80, help='classes longer than this many lines move methods to @patch cells')
    ap.add_argument('--dry-run', action='store_true', help='report the cell sizes without writing')
    args = ap.parse_args(argv)
    allb, alla = [], []
    for p in args.notebooks:
        b, a = split_notebook(p, args.max_class, args.dry_run)
        allb += b; alla += a
        print(f"{p}: {len(b)} -> {len(a)} exported cells; over 80 lines {sum(x > 80 for x in b)} -> {sum(x > 80 for x in a)}; "
              f"median {statistics.median(b) if b else 0} -> {statistics.median(a) if a else 0}")
    if len(args.notebooks) > 1 and allb:
        print(f"all: {len(allb)} -> {len(alla)} cells; over 80 {sum(x > 80 for x in allb)} -> {sum(x > 80 for x in alla)}; "
              f"median {statistics.median(allb)} -> {statistics.median(alla)}")


if __name__ == '__main__':
    main()
