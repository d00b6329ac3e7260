"Headless tests of the shared plots and the Explorer widget scaffold (driven by setting trait values)."
import ipywidgets as widgets
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from trustml_nb.viz import (Explorer, explorer, figure_html, legend_outside, new_figure, plot_estimates, plot_group_metric, plot_tradeoff,
                            readability, set_theme)


def test_plots_draw_the_data():
    set_theme()
    df = pd.DataFrame({"label": ["a", "b"], "estimate": [0.1, -0.2], "ci_low": [0.0, -0.3], "ci_high": [0.2, -0.1],
                       "truth": [0.12, -0.25]})
    ax = plot_estimates(df, truth="truth")
    assert isinstance(ax.figure, Figure)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]
    np.testing.assert_allclose(ax.collections[-1].get_offsets()[:, 0], [0.12, -0.25])  # truth markers
    ax = plot_group_metric(pd.DataFrame({"g": ["x", "y", "z"], "v": [0.1, 0.2, 0.3]}), "g", "v")
    np.testing.assert_allclose([p.get_height() for p in ax.patches], [0.1, 0.2, 0.3])
    ax = plot_tradeoff(pd.DataFrame({"u": [0.3, 0.1, 0.2], "acc": [0.9, 0.7, 0.8], "m": ["A"] * 3}), "u", "acc", hue="m")
    np.testing.assert_allclose(ax.lines[0].get_xdata(), [0.1, 0.2, 0.3])  # sorted along x


def test_plot_errors_name_missing_columns():
    with pytest.raises(ValueError, match=r"df is missing column\(s\) \['estimate'\]"):
        plot_estimates(pd.DataFrame({"label": ["a"]}), lower=None, upper=None)


def _slider(**kw): return widgets.IntSlider(min=0, max=10, value=2, **kw)


def test_explorer_rerenders_on_every_change():
    calls = []
    def render(n, label): calls.append((n, label)); return f"{label}={n * n}"
    ex = explorer(render, n=_slider(), label=widgets.Text(value="sq"))
    assert isinstance(ex, widgets.VBox) and ex.output in ex.children and ex.status in ex.children
    assert ex.result == "sq=4"
    ex.controls["n"].value = 5
    assert ex.result == "sq=25" and ex.values == {"n": 5, "label": "sq"}
    ex.controls["label"].value = "square"
    assert ex.result == "square=25" and ex.n_renders == 3 and calls[-1] == (5, "square")


def test_explorer_run_button_waits_for_click():
    ex = Explorer(lambda n: n + 1, {"n": _slider()}, run_button=True)
    assert ex.run_button is not None and ex.result == 3
    ex.controls["n"].value = 7
    assert ex.result == 3 and "press Run" in ex.status.value
    ex.on_run(ex.run_button)
    assert ex.result == 8 and ex.status.value == ""


def test_explorer_shows_errors_and_recovers():
    def render(n):
        if n > 5: raise ValueError("n too large")
        return n
    ex = explorer(render, n=_slider())
    ex.controls["n"].value = 9
    assert isinstance(ex.error, ValueError) and "n too large" in ex.status.value and ex.result == 2
    ex.controls["n"].value = 4
    assert ex.error is None and ex.result == 4


def test_explorer_figures_and_tuples():
    def render(n):
        fig, ax = new_figure(); ax.plot(range(n)); return fig, pd.DataFrame({"n": [n]})
    ex = explorer(render, n=_slider())
    fig, table = ex.result
    assert isinstance(fig, Figure) and len(fig.axes[0].lines[0].get_xdata()) == 2 and table.n[0] == 2


def test_explorer_bad_arguments():
    with pytest.raises(TypeError, match="render must be callable, got int"): Explorer(3, {"n": _slider()})
    with pytest.raises(ValueError, match="controls must be a non-empty dict"): Explorer(lambda: 1, {})
    with pytest.raises(TypeError, match="control 'n' must be a widget with a value, got int"): explorer(lambda n: n, n=3)


def test_new_figure_displays_itself_as_png():
    "Detached figures are not shown by pyplot's inline backend, so they must carry their own PNG display."
    fig, ax = new_figure()
    ax.plot([0, 1], [1, 0])
    png = fig._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 1000


def test_readability_measures_text_and_legends():
    "Text size in screen pixels (pt * dpi / 72 * display scale) and legends over data, against hand-placed artists."
    fig, ax = new_figure(figsize=(5, 3))
    ax.bar([0, 1], [1.0, 1.0], label="bars"); ax.set_ylim(0, 1.2)
    ax.legend(loc="center")                       # in the middle of two full-height bars
    r = readability(fig)
    assert not r.ok and any("Rectangle" in o for o in r.legend_overlaps), r.legend_overlaps
    legend_outside(ax)
    r = readability(fig)
    assert r.legend_overlaps == () and ax.get_legend().get_bbox_to_anchor().x0 > ax.get_window_extent().x1 - 1
    ax.set_xlabel("small", fontsize=5)            # 5 pt at 100 dpi: 6.94 px
    r = readability(fig)
    assert r.small_texts == ("small",) and abs(r.min_text_px - 5 * 100 / 72) < 1e-9
    r = readability(fig, display_width=r.width_px / 2)   # shown at half size: every size halves
    assert abs(r.scale - 0.5) < 1e-6 and abs(r.min_text_px - 5 * 100 / 72 / 2) < 1e-6


def test_figure_html_marks_what_overlaps_for_the_browser_tests():
    "data-overlaps names a legend over bars and two texts drawn on each other; it is empty once both are moved apart."
    import html, re
    fig, ax = new_figure(figsize=(5, 3))
    ax.bar([0, 1], [1.0, 1.0], label="bars"); ax.set_ylim(0, 1.4); ax.legend(loc="center")
    ax.text(0.2, 1.2, "first label"); ax.text(0.25, 1.2, "second label")
    marked = lambda: html.unescape(re.search(r'data-overlaps="([^"]*)"', figure_html(fig, alt="two bars with labels")).group(1))
    got = marked()
    assert "legend over" in got and "'first label' over 'second label'" in got, got
    legend_outside(ax); ax.texts[1].set_position((0.2, 0.6))
    assert marked() == ""


def test_group_metric_reference_is_labelled_and_legend_outside():
    df = pd.DataFrame({"c": list("01") * 2, "v": [0.1, 0.2, 0.15, 0.05], "m": ["a", "a", "b", "b"]})
    ax = plot_group_metric(df, "c", "v", hue="m", reference=0.12, reference_label="budget")
    assert [t.get_text() for t in ax.texts][0] == "budget 0.12"   # then the bar values
    assert readability(ax.figure).legend_overlaps == ()
    assert ax.get_legend().get_title().get_text() == "m"


def test_figures_display_as_img_with_alt_text(monkeypatch):
    "NotebookFigure, explorer figures and (after set_theme, in IPython) pyplot figures display as <img alt> with the PNG as fallback."
    import base64, html
    from trustml_nb.viz import alt_text, figure_bundle, set_alt
    set_theme()
    fig, ax = new_figure(); ax.bar(["a", "b"], [1, 2], label="count"); ax.set(title="counts", xlabel="letter", ylabel="count"); legend_outside(ax)
    bundle = fig._repr_mimebundle_()
    assert set(bundle) == {"text/html", "image/png", "text/plain"}
    want = "Figure: a bar chart titled 'counts' showing count against letter, series 'count'."
    assert alt_text(fig) == want and f'alt="{html.escape(want)}"' in bundle["text/html"] and bundle["text/plain"] == want
    assert base64.b64decode(bundle["image/png"])[:4] == b"\x89PNG"
    set_alt(fig, "Two bars: b is twice a.")
    assert 'alt="Two bars: b is twice a."' in figure_bundle(fig)["text/html"]
    # explorers show their figures the same way
    import trustml_nb.viz as viz
    shown = []
    monkeypatch.setattr(viz, "display", lambda obj, **kw: shown.append((obj, kw)))
    explorer(lambda n: new_figure()[0].axes[0].plot([0, n])[0].figure, n=_slider())
    assert [(o["text/html"][:28], 'alt="Figure: a plot' in o["text/html"], kw) for o, kw in shown] == [('<img class="trustml-figure" ', True, {"raw": True})]


def test_wide_figures_fit_the_column_with_text_at_full_size():
    "A two-panel figure 12 inches wide (1200 px) is stacked into a column 760 px wide; its text keeps its size (>= 10 px)."
    import base64, struct
    from trustml_nb.viz import figure_bundle
    set_theme()
    fig, axs = new_figure(1, 2, figsize=(12, 3.5))
    for a in axs: a.plot([0, 1, 2], [2, 0, 1], label="a line"); a.set_title("a panel with a title"); legend_outside(a)
    png = base64.b64decode(figure_bundle(fig)["image/png"])
    assert struct.unpack(">I", png[16:20])[0] <= 760
    assert [a.get_subplotspec().rowspan.start for a in axs] == [0, 1]
    r = readability(fig, display_width=760)
    assert r.ok and r.min_text_px >= 10, r



def test_stacking_keeps_a_twin_axis_labels_on_the_right():
    "A wide row of panels, one with a twinx axis: after stacking, the twin's tick labels stay on the right only (they were drawn over the left ones)."
    from trustml_nb.viz import figure_bundle
    set_theme()
    fig, axs = new_figure(1, 2, figsize=(12, 3.5))
    axs[0].bar([0, 1], [0.2, 0.9]); tw = axs[1].twinx(); tw.plot([0, 1], [70, 80]); axs[1].bar([0, 1], [0.5, 1.0])
    figure_bundle(fig)   # stacks the row into a column
    assert axs[1].get_subplotspec().rowspan.start == 1 and axs[1].yaxis.get_tick_params()['labelleft']
    params = tw.yaxis.get_tick_params()
    assert not params.get('labelleft', False) and params.get('labelright', True)

def test_readability_finds_texts_over_texts_and_across_edges():
    fig, ax = new_figure(figsize=(4, 3)); ax.plot([0, 1], [0, 1])
    ax.text(0.3, 0.5, "budget 0.02"); ax.text(0.33, 0.51, "xi_l=0.04"); ax.text(0.95, 0.2, "edge label", transform=ax.transAxes)
    r = readability(fig)
    assert r.text_overlaps == ("'budget 0.02' over 'xi_l=0.04'",) and r.edge_texts == ("'edge label'",) and not r.ok
