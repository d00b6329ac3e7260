"""Slides of the lessons (tools/build_slides.py, `make slides`): slide metadata by the heading rule, no answers on a slide,
and decks that load nothing from the network. The build needs sphinx-revealjs (reveal.js) and the site extra; where they
are missing the build tests skip and say so. One deck is opened in Chromium from file:// with every network request
refused, as a class without internet would."""
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'tools'))
import build_slides  # noqa: E402


def _cell(kind, src, **meta):
    c = {'cell_type': kind, 'id': 'x', 'metadata': meta, 'source': src}
    if kind == 'code': c.update(outputs=[], execution_count=None)
    return c


def test_slide_metadata_rule():
    nb = {'metadata': {'widgets': {'state': {}}}, 'nbformat': 4, 'nbformat_minor': 5, 'cells': [
        _cell('markdown', 'intro text'), _cell('markdown', '## A section'), _cell('markdown', 'more text'),
        _cell('code', 'x = 1'), _cell('markdown', 'after the code'), _cell('markdown', '### a detail'),
        _cell('markdown', 'kept', slideshow={'slide_type': 'skip'}), _cell('code', 'y = 2')]}
    out = build_slides.with_slide_metadata(nb)
    assert [c['metadata']['slideshow']['slide_type'] for c in out['cells']] == \
        ['slide', 'slide', '-', '-', 'subslide', 'subslide', 'skip', '-']
    assert 'widgets' not in out['metadata'] and 'widgets' in nb['metadata']        # a copy; no CDN widget manager


def test_remote_references_are_found():
    html = ('<script src="https://cdn.example/x.js"></script><link rel="stylesheet" href="http://a/b.css">'
            '<a href="https://arxiv.org/abs/1">paper</a><script type="module">import m from "https://c/m.mjs";</script>')
    assert build_slides.remote_references(html) == ['https://cdn.example/x.js', 'http://a/b.css', 'https://c/m.mjs']


@pytest.fixture(scope='module')
def deck(tmp_path_factory):
    pytest.importorskip('sphinx_revealjs', reason='make slides installs sphinx-revealjs (reveal.js) from the package index')
    pytest.importorskip('jupyter_server_mathjax', reason='the site extra (MathJax 2) is needed for the slides')
    out = tmp_path_factory.mktemp('slides')
    done = build_slides.build(out, ['00_start_here', '40_fairdice'])
    return out, done


def test_decks_are_offline_and_answer_free(deck):
    out, done = deck
    for name, (path, n_slides, _) in done.items():
        html = path.read_text()
        assert not build_slides.remote_references(html), name
        for ref in re.findall(r'(?:src|href)="(_assets/[^"?]+)', html):
            assert (out / ref).exists(), (name, ref)
        assert '"_assets/revealjs/dist/reveal.js"' in html and n_slides >= 5
        assert '<summary>Answers</summary>' not in html and 'BEGIN SOLUTION' not in html   # the student copy, on a slide
        lesson = json.loads((build_slides.TUTORIALS / f'{name}.ipynb').read_text())
        heads = sum(1 for c in lesson['cells'] if c['cell_type'] == 'markdown'
                    and re.match(r'#{1,2} ', ''.join(c['source']).lstrip()))
        assert html.count('<section') >= heads, name
    assert (out / 'index.html').exists()


def test_a_deck_opens_offline_in_chromium(deck):
    pytest.importorskip('playwright.sync_api')
    if not shutil.which('chromium') and not Path('/usr/bin/chromium').exists(): pytest.skip('no Debian chromium')
    from playwright.sync_api import sync_playwright
    out, done = deck
    remote, errors = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path='/usr/bin/chromium', args=[
            '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'])
        try:
            page = browser.new_page(viewport={'width': 1280, 'height': 800})
            page.route('**/*', lambda r: (remote.append(r.request.url), r.abort()) if not r.request.url.startswith('file:')
                       else r.continue_())
            page.on('pageerror', lambda e: errors.append(str(e)))
            page.goto(done['40_fairdice'][0].as_uri())
            page.wait_for_selector('.reveal.ready', timeout=30000)
            page.keyboard.press('ArrowRight')
            page.wait_for_function('document.querySelectorAll(".MathJax, .MathJax_Display").length > 20', timeout=30000)
            total = page.evaluate('Reveal.getTotalSlides()')
        finally:
            browser.close()
    assert not remote and not errors, (remote, errors)
    assert total >= done['40_fairdice'][1]
