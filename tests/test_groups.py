"Tests for trustml_nb.groups: sensitive attributes, membership tables matched by name, intersections, sizes."
import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from trustml_nb.core import SmallGroupWarning
from trustml_nb.groups import check_groups, check_sensitive, group_sizes, intersect


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
    with pytest.raises(ValueError, match="a must hold group labels or integer codes, got fractional"):
        check_sensitive([0.0, 0.5, 1.0], "a")


@given(st.lists(st.sampled_from(["A", "B", "C", "D"]), min_size=2, max_size=40))
def test_check_sensitive_codes_reconstruct_labels(labels):
    if len(set(labels)) < 2: return
    codes, groups = check_sensitive(labels, "g")
    assert list(groups[codes]) == labels
    assert list(groups) == sorted(set(labels))


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 6), st.integers(5, 40), st.randoms(use_true_random=False))
def test_reordered_columns_come_back_in_fitted_order(n_groups, n, rnd):
    "Any permutation of a membership table's columns is undone by matching names: same table, same order."
    rng = np.random.default_rng(rnd.randint(0, 2**31))
    M = rng.random((n, n_groups)) < 0.5
    M[0] = True                                    # no empty group
    names = [f"grp{j}" for j in range(n_groups)]
    fitted = check_groups(pd.DataFrame(M, columns=names))
    perm = list(rng.permutation(n_groups))
    shuffled = pd.DataFrame(M[:, perm], columns=[names[j] for j in perm])
    back = check_groups(shuffled, n=n, columns=names)
    assert list(back.columns) == names
    assert back.equals(fitted)


def test_check_groups_inputs_agree():
    as_frame = check_groups(pd.DataFrame({"a": [1, 0, 1], "b": [0, 1, 1]}))
    as_dict = check_groups({"a": [True, False, True], "b": np.array([0, 1, 1])})
    as_bool = check_groups(pd.DataFrame({"a": [True, False, True], "b": [False, True, True]}))
    assert as_frame.equals(as_dict) and as_frame.equals(as_bool)
    labels = check_groups(pd.DataFrame({"sex": pd.Categorical(["F", "M", "F"], ["M", "F"])}))
    assert list(labels.columns) == ["sex=M", "sex=F"]                  # categorical order is kept
    assert check_groups(pd.Series(["x", "y", "x"], name="site")).columns.tolist() == ["site=x", "site=y"]
    assert check_groups(np.array([True, False, True])).columns.tolist() == ["group"]


@pytest.mark.parametrize("bad,msg", [
    (pd.DataFrame({"a": [0.2, 0.8]}), "must be boolean or 0/1 membership"),
    (pd.DataFrame({"a": [1, 2]}), "must be boolean or 0/1 membership"),
    (pd.DataFrame([[1, 0]], columns=["a", "a"]), "duplicate column name"),
    (pd.DataFrame({"a": ["x", None]}), "has 1 missing value"),
    (pd.DataFrame({"a": [0, 0], "b": [1, 1]}), "1 empty: {'a': 0}"),
    (pd.DataFrame(index=range(3)), "at least one group column"),
    (pd.DataFrame({"a": pd.Series([], dtype=bool)}), "at least 1 row"),
    (pd.DataFrame({"a": [1, 0], "a=x": [1, 1], "b": ["x", "y"]}).rename(columns={"b": "a"}), "duplicate column name"),
    ({}, "at least one group"),
    ({"a": [1, 0], "b": [1, 0, 1]}, "same length"),
    ("sex", "groups must be a DataFrame"),
    (None, "groups must be a DataFrame"),
    (3, "groups must be a DataFrame"),
])
def test_check_groups_refuses_with_named_message(bad, msg):
    with pytest.raises((ValueError, TypeError)) as e: check_groups(bad)
    assert msg in str(e.value) and "groups" in str(e.value)


def test_check_groups_against_fitted_names():
    G = pd.DataFrame({"young": [1, 0, 1], "female": [0, 1, 1]})
    with pytest.raises(ValueError, match=r"missing \['old'\], unexpected \['young'\]"):
        check_groups(G, columns=["old", "female"])
    with pytest.raises(ValueError, match="pass a DataFrame with the fitted names"):
        check_groups(G.to_numpy(), columns=["young", "female"])
    assert check_groups(G.to_numpy(), columns=["g0", "g1"]).shape == (3, 2)   # fitted on an array: positional is all there is
    with pytest.raises(ValueError, match="groups_test has 3 rows, expected 4"): check_groups(G, n=4, name="groups_test")
    assert check_groups(pd.DataFrame({"a": [0, 0]}), min_size=0)["a"].sum() == 0
    with pytest.raises(ValueError, match="min_size must be in"): check_groups(G, min_size=-1)


def _brute_intersections(A, max_order, min_size):
    "Every group by brute force: each combination of attributes and each combination of their levels."
    out = {}
    for k in range(1, max_order + 1):
        for combo in itertools.combinations(A.columns, k):
            for levels in itertools.product(*[sorted(A[c].astype(str).unique()) for c in combo]):
                m = np.ones(len(A), bool)
                for c, v in zip(combo, levels): m &= (A[c].astype(str) == v).to_numpy()
                if m.sum() >= min_size: out[' & '.join(f"{c}={v}" for c, v in zip(combo, levels))] = m
    return out


@settings(max_examples=40, deadline=None)
@given(st.integers(20, 120), st.integers(1, 3), st.integers(1, 8), st.randoms(use_true_random=False))
def test_intersect_matches_brute_force(n, max_order, min_size, rnd):
    rng = np.random.default_rng(rnd.randint(0, 2**31))
    A = pd.DataFrame({"s": rng.choice(["F", "M"], n), "r": rng.choice(["B", "W", "A"], n, p=[0.2, 0.7, 0.1]),
                      "g": rng.choice(["<30", "30+"], n)})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        G = intersect(A, max_order=max_order, min_size=min_size)
    truth = _brute_intersections(A, max_order, min_size)
    assert set(G.columns) == set(truth)
    for name, m in truth.items(): np.testing.assert_array_equal(G[name].to_numpy(), m)
    all_groups = _brute_intersections(A, max_order, 1)
    left_out = len(all_groups) - len(truth)
    warned = [c for c in caught if c.category is SmallGroupWarning]
    assert (len(warned) == 1 and f"left out {left_out} of {len(all_groups)}" in str(warned[0].message)) if left_out else not warned


def test_intersect_and_group_sizes_errors():
    A = pd.DataFrame({"sex": ["F", "M", "F"], "race": ["B", "W", "W"]})
    with pytest.raises(ValueError, match=r"max_order must be in \[1, 2\]"): intersect(A, max_order=3)
    with pytest.raises(TypeError, match="attributes must be a DataFrame"): intersect(A.to_numpy())
    with pytest.raises(ValueError, match="attributes has duplicate column name"): intersect(A.set_axis(["a", "a"], axis=1))
    sizes = group_sizes(intersect(A, include_all=True))
    assert sizes.set_index("group").loc["all", "size"] == 3
    assert sizes.set_index("group").loc["sex=F & race=W", "share"] == pytest.approx(1 / 3)
