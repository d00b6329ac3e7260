"""reveal.js slides of the lessons that open offline, from file:// or any folder (`make slides`).

    python tools/build_slides.py [--out course/slides] [--execute] [LESSON ...]

The lessons in tutorials/ stay the single source. Each is turned into its student copy (trustml_nb.course.student_notebook:
no solutions or model answers on a projected slide), given slide metadata, and converted by nbconvert's SlidesExporter. A cell
that already has `slideshow.slide_type` metadata keeps it; every other cell gets one by a fixed rule: a markdown cell that
starts with a `#` or `##` heading opens a new slide; one that starts with `###`, or that follows a code cell, a sub-slide
(down); anything else continues the slide it follows (long slides scroll). So a lesson author steers the slides by headings, or by setting the metadata
(JupyterLab: Property Inspector > Slide Type).

Nothing is fetched at run time: reveal.js (5.2.0, MIT) comes from the sphinx-revealjs wheel on the package index, require.js
from Voila and MathJax 2 from jupyter-server-mathjax (both in the `site` extra); they are copied into OUT/_assets/, and every
script and style sheet of a slide deck points there. nbconvert's other CDN scripts (jQuery, mermaid, the widget manager)
are left out by a small template that extends nbconvert's reveal template: the decks show code, text, maths and (with --execute) static outputs; the
interactive widgets need a kernel (`make lab` or `make apps`).
"""
from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import re
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / 'tutorials'
DEFAULT_OUT = ROOT / 'course' / 'slides'
CELL_TIMEOUT = 600


def slide_type(cell: dict) -> str:
    "The reveal.js slide type of a cell: its own `slideshow.slide_type`, else by the heading rule of the module docstring."
    own = cell.get('metadata', {}).get('slideshow', {}).get('slide_type')
    if own: return own
    if cell['cell_type'] != 'markdown': return '-'
    src = ''.join(cell['source']) if isinstance(cell['source'], list) else cell['source']
    first = src.lstrip().split('\n', 1)[0]
    if re.match(r'#{1,2} ', first): return 'slide'
    if first.startswith('### '): return 'subslide'
    return '-'


def with_slide_metadata(nb: dict) -> dict:
    "A copy of `nb` in which every cell has `slideshow.slide_type`; the first cell always opens a slide."
    nb = copy.deepcopy(nb)
    previous = None
    for i, cell in enumerate(nb['cells']):
        own = cell.get('metadata', {}).get('slideshow', {}).get('slide_type')
        kind = 'slide' if i == 0 else slide_type(cell)
        if not own and kind == '-' and cell['cell_type'] == 'markdown' and previous == 'code': kind = 'subslide'
        cell.setdefault('metadata', {}).setdefault('slideshow', {})['slide_type'] = kind
        previous = cell['cell_type']
    nb['metadata'].pop('widgets', None)   # the saved widget state makes nbconvert load the widget manager from a CDN
    return nb


def _package_dir(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{module} is not installed in {sys.executable}: run `make slides` (it installs the site extra and "
                         "sphinx-revealjs from the package index, through constraints.txt)")
    return Path(spec.submodule_search_locations[0])


def asset_sources() -> dict:
    "Where the offline copies of reveal.js, require.js and MathJax are in this environment."
    reveal = _package_dir('sphinx_revealjs') / '_static' / 'revealjs'
    mathjax = _package_dir('jupyter_server_mathjax') / 'static'
    require = Path(sys.prefix) / 'share' / 'jupyter' / 'voila' / 'templates' / 'base' / 'static' / 'require.min.js'
    missing = [str(p) for p in (reveal / 'dist' / 'reveal.js', mathjax / 'MathJax.js', require) if not p.exists()]
    if missing: raise SystemExit(f"offline slide assets missing: {missing}; run `make slides`")
    return {'revealjs': reveal, 'mathjax': mathjax, 'require.min.js': require}


def copy_assets(out: Path) -> Path:
    "Copy the assets into out/_assets/ (once; a later build reuses them) and return that folder."
    assets = out / '_assets'
    for name, src in asset_sources().items():
        dst = assets / name
        if dst.exists(): continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir(): shutil.copytree(src, dst)
        else: shutil.copyfile(src, dst)
    return assets


TEMPLATE = r"""{%- extends 'reveal/index.html.j2' -%}
{#- nbconvert's reveal template, without the scripts an offline deck does not use (each would be fetched from a CDN) -#}
{%- block html_head_js_jquery -%}{%- endblock html_head_js_jquery -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{#- MathJax 2.7 from jupyter-server-mathjax, with the web fonts it ships (STIX-Web), as the site uses it -#}
{%- block html_head_js_mathjax -%}
<script type="text/x-mathjax-config">
MathJax.Hub.Config({
  tex2jax: {inlineMath: [['$', '$'], ['\\(', '\\)']], displayMath: [['$$', '$$'], ['\\[', '\\]']],
            processEscapes: true, processEnvironments: true},
  "HTML-CSS": {availableFonts: ["STIX-Web"], preferredFont: "STIX-Web", webFont: "STIX-Web", imageFont: null},
  showMathMenu: false, menuSettings: {zoom: "None"}
});
</script>
<script src="{{ resources.mathjax_url }}"></script>
{%- endblock html_head_js_mathjax -%}
{#- the start-up script without jQuery (nbconvert's uses it only to make long slides scroll) -#}
{%- block footer_js -%}
<script>
require({waitSeconds: 15},
  ["{{ resources.reveal.url_prefix }}/dist/reveal.js", "{{ resources.reveal.url_prefix }}/plugin/notes/notes.js"],
  function (Reveal, RevealNotes) {
    Reveal.initialize({controls: true, progress: true, history: true, transition: "{{ resources.reveal.transition }}",
                       slideNumber: "{{ resources.reveal.number | default('c/t', true) }}", plugins: [RevealNotes],
                       width: {{ resources.reveal.width | default('1280', true) }}, height: {{ resources.reveal.height | default('800', true) }}});
    window.Reveal = Reveal;
    function rerenderMaths() {
      if (window.MathJax && MathJax.Hub && MathJax.Hub.getAllJax(Reveal.getCurrentSlide())) MathJax.Hub.Rerender(Reveal.getCurrentSlide());
    }
    function scrollLongSlide() {   // a slide taller than the window scrolls instead of being cut
      var h = document.querySelector('.reveal').offsetHeight * 0.95;
      document.querySelectorAll('section.present').forEach(function (s) {
        if (s.scrollHeight > h) { s.style.height = 'calc(95vh)'; s.style.overflowY = 'scroll'; s.style.marginTop = '20px'; }
      });
    }
    Reveal.on('slidechanged', rerenderMaths);
    Reveal.on('slidechanged', scrollLongSlide);
    Reveal.on('ready', scrollLongSlide);
  });
</script>
{%- endblock footer_js -%}
"""


def template_dir(out: Path) -> Path:
    "Write the offline variant of nbconvert's reveal template (out/_assets/templates/trustml_reveal) and return its parent."
    folder = out / '_assets' / 'templates'
    (folder / 'trustml_reveal').mkdir(parents=True, exist_ok=True)
    (folder / 'trustml_reveal' / 'index.html.j2').write_text(TEMPLATE)
    (folder / 'trustml_reveal' / 'conf.json').write_text(json.dumps({'base_template': 'reveal', 'mimetypes': {'text/html': True}}))
    return folder


def exporter(out: Path):
    "nbconvert's SlidesExporter config: the offline template, and every URL pointing into _assets/ (relative, so the folder can move)."
    from traitlets.config import Config
    c = Config()
    c.SlidesExporter.extra_template_basedirs = [str(template_dir(out))]
    c.SlidesExporter.template_name = 'trustml_reveal'
    c.SlidesExporter.reveal_url_prefix = '_assets/revealjs'
    c.SlidesExporter.reveal_theme = 'white'
    c.SlidesExporter.reveal_scroll = True
    c.SlidesExporter.require_js_url = '_assets/require.min.js'
    c.SlidesExporter.mathjax_url = '_assets/mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe'
    return c


def remote_references(html: str) -> list[str]:
    "The http(s) URLs a deck would load (scripts, style sheets, module imports); links a reader may click are not counted."
    found = re.findall(r'<(?:script|link|img)\b[^>]*?(?:src|href)="(https?://[^"]+)"', html)
    found += re.findall(r'''\bimport\b[^'"]*['"](https?://[^'"]+)['"]''', html)
    found += re.findall(r'''@import\s+(?:url\()?['"]?(https?://[^'")]+)''', html)
    return found


def build(out: Path = DEFAULT_OUT, names=None, execute: bool = False) -> dict:
    "Write out/<lesson>.slides.html for the lessons (all by default); return {lesson: (path, slides, seconds)}."
    sys.path.insert(0, str(ROOT))
    from nbconvert import SlidesExporter
    from trustml_nb.course import student_notebook
    import nbformat
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    copy_assets(out)
    all_names = sorted(p.stem for p in TUTORIALS.glob('*.ipynb'))
    unknown = [n for n in (names or []) if n not in all_names]
    if unknown: raise SystemExit(f"unknown lesson(s) {unknown}: expected some of {all_names}")
    config = exporter(out)
    done = {}
    for name in names or all_names:
        t0 = time.time()
        nb = with_slide_metadata(student_notebook(json.loads((TUTORIALS / f'{name}.ipynb').read_text())))
        node = nbformat.reads(json.dumps(nb), as_version=4)   # joins list sources, as nbconvert expects
        if execute:
            from nbclient import NotebookClient
            NotebookClient(node, timeout=CELL_TIMEOUT, kernel_name='python3', allow_errors=True,
                           resources={'metadata': {'path': str(TUTORIALS)}}).execute()
            node.metadata.pop('widgets', None)
            for cell in node.cells:   # the empty answer cells raise NotImplementedError, and their tests fail: not for a slide
                if cell.cell_type == 'code': cell.outputs = [o for o in cell.outputs if o.get('output_type') != 'error']
        html, _ = SlidesExporter(config=config).from_notebook_node(node, resources={'metadata': {'name': name}})
        remote = remote_references(html)
        if remote: raise RuntimeError(f"{name}: the deck would load {remote[:3]} from the network")
        path = out / f'{name}.slides.html'
        path.write_text(html, encoding='utf-8')
        n = sum(c['metadata']['slideshow']['slide_type'] in ('slide', 'subslide') for c in nb['cells'])
        done[name] = (path, n, round(time.time() - t0, 1))
        print(f"{name}: {n} slides and sub-slides -> {path.relative_to(out.parent) if out.parent in path.parents else path} ({done[name][2]} s)")
    index = ['<!doctype html><meta charset="utf-8"><title>trustml_nb slides</title><h1>trustml_nb: lesson slides</h1><ul>']
    index += [f'<li><a href="{p.name}">{n}</a> ({k} slides)</li>' for n, (p, k, _) in sorted(done.items())]
    (out / 'index.html').write_text('\n'.join(index + ['</ul>']) + '\n', encoding='utf-8')
    return done


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('lessons', nargs='*', help='lesson names (default: every lesson in tutorials/)')
    p.add_argument('--out', type=Path, default=DEFAULT_OUT, help='output folder (default: course/slides)')
    p.add_argument('--execute', action='store_true', help='run each lesson first so the slides show its outputs (minutes)')
    args = p.parse_args(argv)
    t0 = time.time()
    done = build(args.out, args.lessons, args.execute)
    print(f"{len(done)} decks in {args.out} ({time.time() - t0:.1f} s); open {Path(args.out) / 'index.html'} in a browser")


if __name__ == '__main__':
    main()
