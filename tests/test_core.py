"Unit and property tests for trustml_nb.core: validation messages, seeding, results, progress."
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from trustml_nb.core import (DroppedRowsWarning, NumericalWarning, Result, check_array, check_binary, check_columns,
                             check_option, check_probabilities, check_same_length, check_scalar, check_sensitive,
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


def test_check_sensitive_binary_and_categorical():
    codes, groups = check_sensitive(pd.Series(["b", "a", "b"]), "race", kind="binary")
    np.testing.assert_array_equal(codes, [1, 0, 1]); assert list(groups) == ["a", "b"]
    codes, groups = check_sensitive([2, 0, 1, 1], "region")
    assert len(groups) == 3 and codes.max() == 2
    with pytest.raises(ValueError, match=r"race must be binary \(exactly 2 groups\), got 3 group\(s\)"):
        check_sensitive(["a", "b", "c"], "race", kind="binary")
    with pytest.raises(ValueError, match="sex must contain at least 2 groups to compare, got 1"):
        check_sensitive(["F", "F"], "sex")
    with pytest.raises(ValueError, match="sex contains 1 missing value"):
        check_sensitive(["F", np.nan, "M"], "sex")
    with pytest.raises(ValueError, match="kind must be one of 'binary', 'categorical'; got 'multi'"):
        check_sensitive(["F", "M"], "sex", kind="multi")
    with pytest.raises(ValueError, match=r"sex must have 1 dimension\(s\), got 2"):
        check_sensitive(np.array([["F", "M"]]), "sex")


@given(st.lists(st.sampled_from(["A", "B", "C", "D"]), min_size=2, max_size=40))
def test_check_sensitive_codes_reconstruct_labels(labels):
    if len(set(labels)) < 2: return
    codes, groups = check_sensitive(labels, "g")
    assert list(groups[codes]) == labels
    assert list(groups) == sorted(set(labels))


def test_check_scalar_option_columns():
    assert check_scalar(0, "n", int, low=0) == 0
    with pytest.raises(ValueError, match=r"n must be in \(0, inf\], got 0"): check_scalar(0, "n", int, low=0, closed="right")
    with pytest.raises(TypeError, match="flag must be a real number, got bool True"): check_scalar(True, "flag")
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

def test_result_container():
    table = pd.DataFrame({"group": ["a", "b"], "rate": [0.25, 0.5]})
    res = Result(table, title="Rates", summary={"gap": 0.25}, notes=["2 rows dropped"], history=[1, 2])
    assert res["gap"] == 0.25 and res.history == [1, 2]
    out = res.to_frame(); out.loc[0, "rate"] = 9
    assert res.table.loc[0, "rate"] == 0.25, "to_frame must return a copy"
    html = res._repr_html_()
    assert "<h4>Rates</h4>" in html and "2 rows dropped" in html and "0.25" in html
    assert "gap: 0.25" in repr(res)
    with pytest.raises(TypeError, match="table must be a pandas DataFrame, got list"): Result([1, 2])
    with pytest.raises(KeyError, match="'acc' is not in this result's summary"): res["acc"]


def test_result_html_escapes_user_text():
    res = Result(pd.DataFrame({"x": [1]}), title="<script>", notes=["a < b"])
    assert "<script>" not in res._repr_html_() and "&lt;script&gt;" in res._repr_html_()


def test_progress_counts_and_can_be_silenced(monkeypatch):
    monkeypatch.setenv("TRUSTML_NB_PROGRESS", "off")
    bar = progress(range(5), desc="rounds")
    assert bar.disable and list(bar) == [0, 1, 2, 3, 4]
    monkeypatch.setenv("TRUSTML_NB_PROGRESS", "1")
    bar = progress(total=3, desc="manual", file=open("/dev/null", "w"))
    assert not bar.disable
    bar.update(3); assert bar.n == 3; bar.close()


def test_dropped_rows_warn_every_time_not_once_per_location():
    import warnings as w
    with w.catch_warnings(record=True) as caught:
        w.simplefilter("default")  # Python's default: once per location ...
        import trustml_nb.core as core
        w.filterwarnings("always", category=core.DroppedRowsWarning)  # ... which core overrides for dropped rows
        for _ in range(3): report_dropped(1, 5, "NaN", "loader")
    assert sum(issubclass(c.category, DroppedRowsWarning) for c in caught) == 3


def test_markdown_table():
    from trustml_nb.core import markdown_table
    df = pd.DataFrame({"method": ["ours", "peer"], "rmse": [0.0123456, np.nan], "n": [10, 20]})
    assert markdown_table(df, digits=2).split("\n") == ["| method | rmse | n |", "|---|---|---|", "| ours | 0.012 | 10 |", "| peer |  | 20 |"]
    with pytest.raises(ValueError, match="digits must be in"): markdown_table(df, digits=0)
