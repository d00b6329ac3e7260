"""Sphinx configuration of the static site that `make site` builds (docs/_build/html): the lessons with their executed
outputs, an index, the API reference from the docments, and Sphinx's own offline search. Nothing on a page loads from
the network: MathJax 2.7 is served from the jupyter-server-mathjax package, and widget views (which need a kernel) are
replaced by a note that points to the Voila app of the lesson (`make apps`).

Environment knobs (used by tests/test_site.py): TRUSTML_SITE_EXECUTE = cache (default: execute each lesson once, reuse
the outputs until the notebook changes) | off | force; TRUSTML_SITE_EXECUTE_ONLY = comma-separated lesson names to
execute (the others are rendered without outputs); TRUSTML_SITE_CACHE = the jupyter-cache folder.
"""
import os
import re
import shutil
import sys
from pathlib import Path

from docutils import nodes

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
import trustml_nb  # noqa: E402
sys.path.insert(0, str(ROOT / "tools"))
import kernel_wakeup  # noqa: E402
kernel_wakeup.install()  # myst-nb executes the lessons through nbclient in this process (tools/kernel_wakeup.py says why)

os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")  # progress bars are widgets: off in the executed lessons (kernels inherit this)

project = "trustml_nb"
author = "trustml_nb contributors"
copyright = "trustml_nb contributors, Apache-2.0"
release = version = trustml_nb.__version__

# The public modules, in the order of the course (the API reference gets one page each).
MODULES = ["core", "groups", "data", "viz", "course", "pse_simulator", "pse", "fedfact", "fedfact_flower", "gam_models",
           "gam_explain", "momdp", "fairdice", "multicalibration", "omniprediction", "mifpo", "oath", "matroid_selection",
           "monoculture", "llm", "quere"]


def _write_if_changed(path: Path, text: str):
    "Write `text` to `path` unless it already holds it (keeps Sphinx's incremental build incremental)."
    if not path.exists() or path.read_text() != text: path.write_text(text)


def _stage_sources():
    "Copy the lessons (tutorials/) into docs/lessons/ and write one API page per module into docs/api/ (both generated)."
    lessons = DOCS / "lessons"; lessons.mkdir(exist_ok=True)
    wanted = {p.name for p in (ROOT / "tutorials").iterdir() if p.suffix in (".ipynb", ".md")}
    for p in lessons.iterdir():
        if p.name not in wanted: p.unlink()
    for name in sorted(wanted):
        src, dst = ROOT / "tutorials" / name, lessons / name
        if not dst.exists() or dst.read_bytes() != src.read_bytes(): shutil.copyfile(src, dst)
    api = DOCS / "api"; api.mkdir(exist_ok=True)
    for m in MODULES:
        _write_if_changed(api / f"{m}.md", f"# `trustml_nb.{m}`\n\n```{{eval-rst}}\n.. automodule:: trustml_nb.{m}\n"
                                           f"   :members:\n   :member-order: bysource\n```\n")


_stage_sources()

extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.mathjax"]
exclude_patterns = ["_build", "**.ipynb_checkpoints", "lessons/_html"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
master_doc = root_doc = "index"
smartquotes_action = "D"  # only dashes (the field lists use --): keep quotes and "..." of docstrings and lessons as written

# MyST: $...$ and $$...$$ as in JupyterLab; the MathJax settings are ours (below), not MyST's MathJax 3 ones.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_update_mathjax = False
myst_heading_anchors = 3

# Execution: once per lesson, cached by jupyter-cache until the notebook changes.
nb_execution_mode = os.environ.get("TRUSTML_SITE_EXECUTE", "cache")
nb_execution_cache_path = os.environ.get("TRUSTML_SITE_CACHE", str(DOCS / "_build" / ".jupyter_cache"))
nb_execution_timeout = int(os.environ.get("TRUSTML_SITE_CELL_TIMEOUT", "600"))  # per cell: 20_fedfact took 129 s in all at load 12, and once 694 s (the stall kernel_wakeup fixes); tools/build_site.py retries a failed build
nb_execution_raise_on_error = True
nb_execution_show_tb = True
_only = [s.strip() for s in os.environ.get("TRUSTML_SITE_EXECUTE_ONLY", "").split(",") if s.strip()]
nb_execution_excludepatterns = ([f"lessons/{p.stem}.ipynb" for p in sorted((ROOT / "tutorials").glob("*.ipynb"))
                                 if p.stem not in _only] if _only else [])
nb_ipywidgets_js = {}  # no widget manager from a CDN: widget views become a note (see _widget_notes)
nb_merge_streams = True

# API reference: core.document_parameters appends "Parameters" / "Returns" sections ("name : meaning" lines) to
# __doc__; _field_lists turns them into Sphinx field lists (napoleon would read each meaning as a type).
autodoc_default_options = {"members": True, "undoc-members": False}
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
autodoc_mock_imports = ["flwr", "ray"]  # the Flower simulation extra; its page still lists the functions

# MathJax 2.7 from the jupyter-server-mathjax package, copied into _static/mathjax (see _copy_mathjax).
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
mathjax2_config = {"HTML-CSS": {"availableFonts": ["STIX-Web"], "preferredFont": "STIX-Web", "webFont": "STIX-Web",
                                "imageFont": None},
                   "menuSettings": {"zoom": "None"}, "showMathMenu": False}
mathjax3_config = None

html_theme = "sphinx_book_theme"
html_title = f"trustml_nb {release}"
html_static_path = ["_static"]
html_theme_options = {"show_navbar_depth": 1, "use_download_button": False, "use_fullscreen_button": False,
                      "home_page_in_toc": True}
html_last_updated_fmt = None
html_show_sourcelink = False

WIDGET_VIEW = 'type="application/vnd.jupyter.widget-view+json"'


def _widget_notes(app, doctree):
    "Replace each widget view (it needs a live kernel) by a plain note; the lesson's first explorer is its Voila app."
    docname = app.env.docname
    app_name = f"apps/{Path(docname).name}.ipynb"
    views = [raw for raw in doctree.findall(nodes.raw) if WIDGET_VIEW in raw.astext()]
    for i, raw in enumerate(views):
        para = nodes.paragraph()
        para += nodes.Text("Interactive explorer: it needs a running Python kernel, so this static page cannot show it. ")
        if i == 0 and (ROOT / app_name).exists():
            para += [nodes.Text("Serve the code-free app with "), nodes.literal(text="make apps"),
                     nodes.Text(" and open "), nodes.literal(text=app_name), nodes.Text(", or run this lesson in JupyterLab (")]
        else:
            para += nodes.Text("Run this lesson in JupyterLab (")
        para += [nodes.literal(text="make lab"), nodes.Text(").")]
        note = nodes.admonition(classes=["note", "trustml-widget-note"])
        note += nodes.title(text="Needs a kernel")
        note += para
        raw.replace_self(note)


_LITERAL = re.compile(r"(``[^`]+``|`[^`]+`)")


def _plain(text: str) -> str:
    "Docstrings here are plain text with `code` in single backticks: make that reST (literals; |, * and _ stay literal)."
    parts = _LITERAL.split(text)
    return "".join(f"``{p.strip('`')}``" if i % 2 else re.sub(r"([|*_\\])", r"\\\1", p) for i, p in enumerate(parts))


def _field_lists(app, what, name, obj, options, lines):
    "Parameters/Returns sections of core.document_parameters -> :param name: meaning / :returns: meaning."
    if what == "module": lines[:] = [l for l in lines if not l.startswith("Docs: https://trustml-nb.github.io")]
    lines[:] = [_plain(l) for l in lines]
    out, section, i = [], None, 0
    while i < len(lines):
        line = lines[i]
        if line.strip() in ("Parameters", "Returns") and i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}:
            section, i = line.strip(), i + 2
            if out and out[-1].strip(): out.append("")
            continue
        if section == "Parameters" and " : " in line and not line.startswith(" "):
            pname, meaning = line.split(" : ", 1)
            out.append(f":param {pname.replace(chr(92), '').strip().lstrip('*')}: {meaning.strip()}")
        elif section == "Returns" and line.strip():
            out.append(f":returns: {line.strip()}")
        else:
            if not line.strip(): section = None
            out.append(line)
        i += 1
    lines[:] = out


def _skip_foreign(app, what, name, obj, skip, options):
    "Leave out what scikit-learn generates on our estimators (set_*_request) and members defined elsewhere."
    if name.startswith("set_") and name.endswith("_request"): return True
    mod = getattr(obj, "__module__", None)
    if mod and not mod.startswith("trustml_nb"): return True   # e.g. matplotlib's generated Figure.set
    return None


def _drop_widget_state(app, pagename, templatename, context, doctree):
    "Leave out the embedded widget state: without the widget manager it is dead weight."
    files = context.get("script_files")
    if files: context["script_files"] = [f for f in files if "widget-state" not in str(getattr(f, "attributes", {}).get("type", ""))]


def _copy_mathjax(app, exception):
    "Copy MathJax 2.7 (jupyter-server-mathjax) next to the pages: math renders offline."
    if exception is not None or app.builder.format != "html": return
    import jupyter_server_mathjax
    src = Path(jupyter_server_mathjax.__file__).parent / "static"
    dst = Path(app.outdir) / "_static" / "mathjax"
    if not (dst / "MathJax.js").exists():
        shutil.copytree(src, dst, dirs_exist_ok=True, ignore=shutil.ignore_patterns("localization", "*.map"))


def setup(app):
    app.connect("doctree-read", _widget_notes)
    app.connect("autodoc-process-docstring", _field_lists)
    app.connect("autodoc-skip-member", _skip_foreign)
    app.connect("html-page-context", _drop_widget_state)
    app.connect("build-finished", _copy_mathjax)
    app.add_css_file("trustml.css")
