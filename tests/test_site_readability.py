"""Readability and alt text on the static site (issue 39): every figure of every lesson page at a 1280 x 800 window.

The default suite measures the site that tests/test_site.py builds (one lesson executed, 90_matroid_selection; the
others are rendered without outputs). To measure the whole course, build it (`make site`, or
`python tools/build_site.py`) and point the test at it: `TRUSTML_SITE_HTML=docs/_build/html pytest tests/test_site_readability.py`.
Each lesson page is opened over http://127.0.0.1 in chromium (every other request aborted); every `<img>` in the page's
content must show its smallest text at >= 10 px (its `data-min-text-px` at natural size, written by
`trustml_nb.viz.figure_html`, times the shown width over the natural width) and carry alt text, a sentence (not the
file path Sphinx writes by default). The pages are also read as files: no `<img>` without alt, no path to a temporary
file (`/tmp/ipykernel_...`) in a page's text. Rows go to test-output/readability/site/<lesson>.json (see tools/run_tour.py --table).
"""
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from lab_helpers import chromium_page, require_chromium, twice
from test_browser import figure_failures, figure_rows, save_rows, alt_problem
from test_site import VIEWPORT, _serve, site  # noqa: F401  (the module fixture: one build for both files when run together)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def built(request):
    "The site to measure: TRUSTML_SITE_HTML (a full `make site` build) or the test build of tests/test_site.py."
    given = os.environ.get("TRUSTML_SITE_HTML")
    if given: return Path(given).resolve()
    import sys; sys.path.insert(0, str(ROOT / "tools"))
    from build_site import tidy_pages
    out = request.getfixturevalue("site")
    tidy_pages(out)   # what tools/build_site.py (`make site`) does after sphinx-build
    return out


class _Images(HTMLParser):
    def __init__(self):
        super().__init__(); self.imgs = []

    def handle_starttag(self, tag, attrs):
        if tag == "img": self.imgs.append(dict(attrs))


def _lesson_pages(built: Path) -> list:
    return sorted((built / "lessons").glob("[0-9][0-9]_*.html"))


def test_site_images_have_alt_text_and_no_temporary_paths(built):
    "Read as files: every <img> on a lesson page has alt text that is a sentence; no page shows a /tmp path."
    bad, counted = [], 0
    for page in _lesson_pages(built):
        html = page.read_text(errors="replace")
        p = _Images(); p.feed(html)
        for k, img in enumerate(p.imgs):
            counted += 1
            problem = alt_problem(img.get("alt") or "")
            if problem: bad.append(f"{page.stem}: image #{k} ({(img.get('src') or '')[:60]}): {problem}")
        text = re.sub(r"<[^>]+>", " ", html)
        assert not re.search(r"/tmp/ipykernel_\d+", text), f"{page.stem} shows a temporary file path: " + \
            re.search(r".{0,80}/tmp/ipykernel_\d+.{0,80}", text).group(0)
    assert counted, "no figure on any lesson page"
    assert not bad, f"{len(bad)} site image(s) without alt text:\n" + "\n".join(bad)


@pytest.mark.browser
def test_site_figures_are_readable_at_laptop_size(built, test_output_dir):
    require_chromium()
    pages = [p for p in _lesson_pages(built) if "<img" in p.read_text(errors="replace")]
    assert pages, "no lesson page with a figure"

    def attempt_once(attempt):
        server, base = _serve(built)
        try:
            with chromium_page(VIEWPORT, test_output_dir / f"site_readability_failure{attempt}.png") as page:
                page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("http://127.0.0.1", "data:", "blob:")) else r.abort())
                out = {}
                for p in pages:
                    page.goto(f"{base}/lessons/{p.name}", wait_until="load", timeout=60_000)
                    out[p.stem] = figure_rows(page, "article img, .bd-article img, div[role=main] img, .body img", p.stem, "site")
                return out
        finally:
            server.shutdown(); server.server_close()

    out, _ = twice("site readability", attempt_once)
    rows = []
    for stem, r in out.items():
        save_rows(test_output_dir, "site", stem, r); rows += r
    assert rows, "no figure measured on the site"
    bad = figure_failures(rows)
    assert not bad, f"{len(bad)} figure problem(s) on the site at 1280 x 800:\n" + "\n".join(bad)
