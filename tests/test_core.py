"Unit and property tests for trustml_nb.core: validation messages, seeding, results, progress."
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from trustml_nb.core import (DroppedRowsWarning, NumericalWarning, PrefitClassifier, Report, SmallGroupWarning, check_array,
                             check_binary, check_columns, check_is_fitted, check_option, check_probabilities,
                             check_same_length, check_scalar, quiet, report, require,
                             make_rng, progress, report_dropped, report_numerical, seed_everything)


# ---- check_array: shapes, NaN, dtypes -------------------------------------------------------------

@pytest.mark.parametrize("x", [[1.0, 2.0], np.arange(3), pd.Series([1, 2]), (4, 5)])
def test_check_array_accepts_array_likes(x):
    assert isinstance(check_array(x, "x"), np.ndarray)


@pytest.mark.parametrize("x,kw,exc,msg", [
    (np.zeros((4, 2)), dict(shape=(None, 3)), ValueError, "X must have shape (any, 3), got (4, 2)"),
    (np.zeros((4, 2)), dict(shape=(5, 2)), ValueError, "X must have shape (5, 2), got (4, 2)"),
    (np.zeros(3), dict(ndim=2), ValueError, "X must have 2 dimension(s), got 1"),
    (np.zeros((2, 2, 2)), dict(ndim=(1, 2)), ValueError, "X must have 1 or 2 dimension(s), got 3"),
    ([1.0, np.nan, np.nan], {}, ValueError, "X contains 2 NaN value(s)"),
    ([1.0, np.inf], {}, ValueError, "X contains 1 infinite value(s)"),
    (["a", "b"], {}, TypeError, "X must be numeric"),
    (np.array(["1", "2"]), {}, TypeError, "X must be numeric, got dtype <U1"),
    (None, {}, TypeError, "X must be array-like, got None"),
    ("abc", {}, TypeError, "X must be array-like, got str"),
    ({"a": 1}, {}, TypeError, "X must be array-like, got dict"),
    ([], {}, ValueError, "X must have at least 1 row(s), got 0"),
])
def test_check_array_rejects_with_named_message(x, kw, exc, msg):
    with pytest.raises(exc) as e: check_array(x, "X", **kw)
    assert msg in str(e.value)


def test_check_array_nan_allowed_and_object_numbers():
    assert np.isnan(check_array([1.0, np.nan], "x", allow_nan=True)).sum() == 1
    np.testing.assert_array_equal(check_array(np.array([1, 2], dtype=object), "x"), [1.0, 2.0])
    with pytest.raises(ValueError, match="group contains 1 missing value"):
        check_array(["a", None], "group", numeric=False)


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=6),
                  elements=st.floats(allow_nan=False, allow_infinity=False, width=32)))
def test_check_array_roundtrips_finite_arrays(a):
    np.testing.assert_array_equal(check_array(a, "a"), a)


@given(hnp.arrays(np.float64, st.integers(1, 20), elements=st.floats(allow_infinity=False, width=32)))
def test_check_array_counts_nans_exactly(a):
    n = int(np.isnan(a).sum())
    if n == 0: check_array(a, "a")
    else:
        with pytest.raises(ValueError, match=f"a contains {n} NaN value"): check_array(a, "a")


def test_check_same_length():
    assert check_same_length(a=[1, 2], b=np.zeros(2), c=None) == 2
    with pytest.raises(ValueError, match="a has 2 but b has 3, c has 1"):
        check_same_length(a=[1, 2], b=[1, 2, 3], c=[1])


# ---- probabilities, binary labels, sensitive attributes ------------------------------------------

def test_check_probabilities():
    np.testing.assert_allclose(check_probabilities([0, 0.5, 1], "p"), [0, 0.5, 1])
    with pytest.raises(ValueError, match=r"p must contain probabilities in \[0, 1\], got values in \[0, 1.5\]"):
        check_probabilities([0, 1.5], "p")
    with pytest.raises(ValueError, match="must be a matrix"):
        check_probabilities([0.5, 0.5], "p", rows_sum_to_one=True)
    with pytest.raises(ValueError, match="p contains 1 NaN"):
        check_probabilities([0.5, np.nan], "p")


@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 8), st.integers(2, 5)), elements=st.floats(0.01, 1.0)))
def test_normalised_rows_pass_the_row_sum_check(w):
    p = w / w.sum(1, keepdims=True)
    np.testing.assert_allclose(check_probabilities(p, "p", rows_sum_to_one=True).sum(1), 1.0)


def test_check_binary():
    np.testing.assert_array_equal(check_binary(pd.Series([True, False]), "y"), [1, 0])
    np.testing.assert_array_equal(check_binary([0.0, 1.0], "y"), [0, 1])
    with pytest.raises(ValueError, match=r"y_pred must contain only 0 and 1 \(or True/False\), got values \{-1, 1\}"):
        check_binary([-1, 1], "y_pred")


def test_check_scalar_option_columns():
    assert check_scalar(0, "n", int, low=0) == 0
    with pytest.raises(ValueError, match=r"n must be in \(0, inf\], got 0"): check_scalar(0, "n", int, low=0, closed="right")
    with pytest.raises(TypeError, match="flag must be a real number, got bool True"): check_scalar(True, "flag")
    with pytest.raises(ValueError, match="beta0 must be finite, got inf"): check_scalar(np.inf, "beta0")
    assert check_scalar(np.float32(0.5), "lr") == np.float32(0.5) and check_scalar(np.int64(3), "n", int) == 3
    with pytest.raises(ValueError, match="lr must be a number, got NaN"): check_scalar(float("nan"), "lr")
    with pytest.raises(ValueError, match="welfare must be one of 'nash', 'maxmin'; got 'utilitarian'"):
        check_option("utilitarian", "welfare", ("nash", "maxmin"))
    with pytest.raises(TypeError, match="frame must be a pandas DataFrame, got list"): check_columns([1], ["a"], "frame")


# ---- warnings -------------------------------------------------------------------------------------

def test_report_dropped_and_numerical_warn_with_counts():
    with pytest.warns(DroppedRowsWarning, match=r"load_x: dropped 3 of 10 rows \(30.0%\): NaN in age"):
        report_dropped(3, 10, "NaN in age", "load_x")
    with pytest.warns(NumericalWarning, match="weights clipped"):
        report_numerical("weights clipped at 50")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert report_dropped(0, 10, "nothing") == ""


# ---- seeding ------------------------------------------------------------------------------------

@given(st.integers(0, 2**40))
@settings(max_examples=25)
def test_make_rng_same_seed_same_stream(seed):
    np.testing.assert_array_equal(make_rng(seed).random(4), make_rng(seed).random(4))


def test_make_rng_rejects_bad_seeds():
    with pytest.raises(ValueError, match="seed must be >= 0, got -1"): make_rng(-1)
    with pytest.raises(TypeError, match="got float"): make_rng(1.5)
    with pytest.raises(TypeError, match="got bool"): make_rng(True)


def test_seed_everything_repeats_torch_and_numpy():
    import torch
    seed_everything(3); a = (np.random.rand(2), torch.randn(2))
    seed_everything(3); b = (np.random.rand(2), torch.randn(2))
    np.testing.assert_array_equal(a[0], b[0]); assert torch.equal(a[1], b[1])
    with pytest.raises(ValueError, match="seed must be in"): seed_everything(-5)


# ---- results and progress -------------------------------------------------------------------------

@report
class RatesReport(Report):
    "Rates per group (a test report)."
    title = 'Rates'
    table: pd.DataFrame # one row per group
    rate_gap: float # largest minus smallest rate
    label: str # a label with <html> in it
    notes: tuple = () # sentences a reader must see


def test_report_is_frozen_documented_and_displays():
    from dataclasses import FrozenInstanceError
    table = pd.DataFrame({"group": ["a", "b"], "rate": [0.25, 0.5]})
    rep = RatesReport(table, rate_gap=0.25, label="<script>", notes=("2 rows dropped",))
    assert rep.summary() == {"rate_gap": 0.25, "label": "<script>"}
    out = rep.to_frame(); out.loc[0, "rate"] = 9
    assert rep.table.loc[0, "rate"] == 0.25, "to_frame must return a copy"
    with pytest.raises(FrozenInstanceError): rep.rate_gap = 0.0
    assert RatesReport.field_docs() == {"table": "one row per group", "rate_gap": "largest minus smallest rate",
                                        "label": "a label with <html> in it", "notes": "sentences a reader must see"}
    html = rep._repr_html_()
    assert "<h4>Rates</h4>" in html and "2 rows dropped" in html and "largest minus smallest rate" in html
    assert "<script>" not in html and "&lt;script&gt;" in html, "user text must be escaped"
    assert "rate_gap: 0.25" in repr(rep)
    assert RatesReport(table, 0.1, "x") is not RatesReport(table, 0.1, "x") and rep == rep  # identity equality (no DataFrame ==)
    with pytest.raises(TypeError, match="@report applies to subclasses of Report"): report(dict)


def test_report_shows_a_named_table_in_place_of_a_long_main_table():
    @report
    class Long(RatesReport):
        "A report whose main table is long; its display shows a short summary table instead."
        summary_table: pd.DataFrame = None # per kind: how many rows
        shown_table = 'summary_table'
    table = pd.DataFrame({"group": [f"g{i:03d}" for i in range(500)], "rate": np.linspace(0, 1, 500)})
    rep = Long(table, 0.5, "x", summary_table=pd.DataFrame({"kind": ["low", "high"], "rows": [250, 250]}))
    html, text = rep._repr_html_(), repr(rep)
    for out in (html, text):
        assert "g000" not in out and "high" in out, "the display must show the named table, not the main one"
        assert "to_frame() holds the full table (500 rows)" in out
    assert len(rep.to_frame()) == 500, "to_frame stays the main table"
    assert "g000" in RatesReport(table, 0.5, "x")._repr_html_(), "without shown_table the main table is shown"


def test_report_field_docs_follow_inheritance():
    @report
    class More(RatesReport):
        "With one more field."
        n_groups: int = 2 # number of groups
    docs = More.field_docs()
    assert docs["rate_gap"] == "largest minus smallest rate" and docs["n_groups"] == "number of groups"


def test_check_is_fitted_and_prefit_classifier():
    from sklearn.exceptions import NotFittedError
    from sklearn.base import clone
    clf = PrefitClassifier()
    with pytest.raises(NotFittedError, match="this PrefitClassifier is not fitted yet"): check_is_fitted(clf, "classes_")
    assert clf.fit() is clf
    np.testing.assert_array_equal(clf.predict(np.array([[0.1], [0.9]])), [0, 1])
    three = PrefitClassifier(proba_fn=lambda X: np.tile([0.2, 0.5, 0.3], (len(X), 1)), classes=("a", "b", "c")).fit()
    assert list(three.predict(np.zeros((2, 1)))) == ["b", "b"]
    assert clone(three).get_params()["classes"] == ("a", "b", "c")
    with pytest.raises(ValueError, match="classes must list at least 2 distinct labels"): PrefitClassifier(classes=(1, 1)).fit()
    with pytest.raises(TypeError, match="proba_fn must be callable"): PrefitClassifier(proba_fn=3).fit()
    bad = PrefitClassifier(proba_fn=lambda X: np.full((len(X), 2), 0.7)).fit()
    with pytest.raises(ValueError, match="each row of proba_fn"): bad.predict_proba(np.zeros((2, 1)))


def test_require_names_the_extra():
    import math
    assert require("math", "core") is math
    with pytest.raises(ImportError, match=r"Thing needs the optional package 'no_such_pkg_42'.*pip install 'trustml_nb\[fl\]'"):
        require("no_such_pkg_42.sub", "fl", "Thing")


def test_quiet_hides_only_the_named_categories():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with quiet(DroppedRowsWarning, SmallGroupWarning):
            report_dropped(1, 2, "x"); warnings.warn("small", SmallGroupWarning); report_numerical("bad")
    assert [c.category for c in caught] == [NumericalWarning]
    for bad in ((), (Warning,), (UserWarning,), ("DroppedRowsWarning",)):
        with pytest.raises(TypeError):
            with quiet(*bad): pass


def test_progress_counts_and_can_be_silenced(monkeypatch):
    monkeypatch.setenv("TRUSTML_NB_PROGRESS", "off")
    bar = progress(range(5), desc="rounds")
    assert bar.disable and list(bar) == [0, 1, 2, 3, 4]
    monkeypatch.setenv("TRUSTML_NB_PROGRESS", "1")
    bar = progress(total=3, desc="manual", file=open("/dev/null", "w"))
    assert not bar.disable
    bar.update(3); assert bar.n == 3; bar.close()


def test_dropped_rows_warn_every_time_not_once_per_location():
    with warnings.catch_warnings(record=True) as caught:
        # no filter of the test's own: only the package's 'always' filter can make all three dropped-row warnings show
        for _ in range(3): report_dropped(1, 5, "NaN", "loader")
        for _ in range(3): warnings.warn("plain", UserWarning)   # control: Python shows this once per location
    assert sum(c.category is DroppedRowsWarning for c in caught) == 3
    assert sum(c.category is UserWarning for c in caught) == 1


def test_markdown_table():
    from trustml_nb.core import markdown_table
    df = pd.DataFrame({"method": ["ours", "peer"], "rmse": [0.0123456, np.nan], "n": [10, 20]})
    assert markdown_table(df, digits=2).split("\n") == ["| method | rmse | n |", "|---|---|---|", "| ours | 0.012 | 10 |", "| peer |  | 20 |"]
    with pytest.raises(ValueError, match="digits must be in"): markdown_table(df, digits=0)
