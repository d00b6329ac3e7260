"""Tests of the batch explanation API of trustml_nb.gam_explain (issue 38): every batch query equals the loop of its
per-instance function on seeded random GAMs of every component kind and domain, including wide models (pairwise sums),
decision-boundary ties (small integer contributions) and chunk boundaries; DataFrames are matched by column name; bad
input names the argument."""
import numpy as np
import pandas as pd
import pytest

from trustml_nb.gam_models import GAM, EnumerableDomain, TableComponent, random_gam, random_instance
from trustml_nb.gam_explain import (cc, cc_batch, csr, csr_batch, mcr, mcr_batch, msr, msr_batch, shap_classification,
                                    shap_classification_batch, shap_regression, shap_regression_batch)

KINDS = [('table', 'enumerable'), ('step', 'grid'), ('step', 'interval'), ('spline', 'enumerable'), ('spline', 'interval'),
         ('nam', 'grid'), ('nam', 'interval')]


def _cases(n_seeds=12, wide=(40, 150)):
    "Seeded random GAMs of every kind (1 to 7 features, and two wide ones) with 30 random rows each."
    for seed in range(n_seeds):
        for comp, dom in KINDS:
            for n in ([1 + seed % 7] + ([wide[seed % 2]] if seed < 2 else [])):
                task = 'classification' if seed % 3 else 'regression'
                gam = random_gam(n, comp, dom, task=task, grid_bits=3, n_values=3, max_abs=2, seed=seed)
                yield gam, np.array([random_instance(gam, 1000 * seed + r) for r in range(30)]), task


def _lists(mask): return [np.flatnonzero(r).tolist() for r in mask]


def test_reasons_equal_the_loop_exactly():
    n_ties = 0
    for gam, X, task in _cases():
        thr = None if task == 'classification' else 0.25
        n_ties += int((gam.score(X) == (thr or 0)).sum())
        assert _lists(msr_batch(gam, X, thr, chunk_rows=7)) == [msr(gam, x, thr) for x in X]
        assert [r or None for r in _lists(mcr_batch(gam, X, thr))] == [mcr(gam, x, thr) for x in X]
        for S in ([], [0], list(range(gam.n))):
            assert csr_batch(gam, X, S, thr, chunk_rows=11).tolist() == [csr(gam, x, S, thr) for x in X]
    assert n_ties >= 20, "the generator should put rows on the decision boundary"


def test_shap_regression_equals_the_loop():
    worst = 0.0
    for gam, X, _ in _cases():
        ref = np.array([shap_regression(gam, x) for x in X])
        worst = max(worst, np.abs(shap_regression_batch(gam, X, chunk_rows=4) - ref).max())
        bg = X[::3]
        ref = np.array([shap_regression(gam, x, background=bg) for x in X])
        worst = max(worst, np.abs(shap_regression_batch(gam, X, background=bg) - ref).max())
    assert worst <= 1e-12


def test_counting_and_shap_of_the_decision_equal_the_loop():
    worst = 0.0
    for seed in range(40):
        comp, dom = [('table', 'enumerable'), ('step', 'grid')][seed % 2]
        gam = random_gam(1 + seed % 6, comp, dom, grid_bits=3, n_values=3, max_abs=2, seed=seed)
        X = np.array([random_instance(gam, 77 * seed + r) for r in range(25)])
        for S in ([], [0], list(range(gam.n))):
            assert cc_batch(gam, X, S, chunk_rows=6).tolist() == [cc(gam, x, S) for x in X]       # exactly equal
        ref = np.array([shap_classification(gam, x) for x in X])
        worst = max(worst, np.abs(shap_classification_batch(gam, X, chunk_rows=4) - ref).max())
    # real contributions with scale=, and a thresholded regression GAM
    gam = random_gam(4, 'spline', 'enumerable', task='regression', seed=5); X = np.array([random_instance(gam, r) for r in range(20)])
    assert cc_batch(gam, X, [1], threshold=0.1, scale=100).tolist() == [cc(gam, x, [1], threshold=0.1, scale=100) for x in X]
    ref = np.array([shap_classification(gam, x, threshold=0.1, scale=100) for x in X])
    worst = max(worst, np.abs(shap_classification_batch(gam, X, threshold=0.1, scale=100) - ref).max())
    assert worst <= 1e-12


def test_shap_regression_batch_matches_interpret_and_data_weights():
    interpret = pytest.importorskip('interpret.glassbox')
    from trustml_nb.gam_models import from_interpret_ebm
    rng = np.random.default_rng(0); X = rng.uniform(-2, 2, (300, 5)); y = np.sin(X) @ rng.normal(size=5)
    ebm = interpret.ExplainableBoostingRegressor(interactions=0, outer_bags=1, max_rounds=40, n_jobs=1, random_state=0).fit(X, y)
    gam = from_interpret_ebm(ebm)
    phi = shap_regression_batch(gam, X[:50], dist='data')
    assert np.abs(phi - np.array([shap_regression(gam, x, dist='data') for x in X[:50]])).max() <= 1e-12
    assert np.abs(phi - ebm.eval_terms(X[:50]) + ebm.eval_terms(X).mean(0)).max() < 1e-6   # EBM terms are centred on the training data


def test_dataframes_are_matched_by_name_and_chunks_change_nothing():
    gam = random_gam(5, 'step', 'grid', grid_bits=3, seed=2)
    gam.feature_names = ['age', 'income', 'debt', 'term', 'rate']
    X = np.array([random_instance(gam, r) for r in range(40)])
    df = pd.DataFrame(X, columns=gam.feature_names)[['rate', 'debt', 'age', 'term', 'income']]   # any column order
    phi = shap_regression_batch(gam, X)
    for rows in (1, 3, 40, 1000): assert (shap_regression_batch(gam, df, chunk_rows=rows) == phi).all()
    assert (msr_batch(gam, df) == msr_batch(gam, X)).all()
    assert (csr_batch(gam, df, ['income', 'debt']) == csr_batch(gam, X, [1, 2])).all()
    with pytest.raises(ValueError, match='X'): shap_regression_batch(gam, df.rename(columns={'age': 'years'}))


def test_batch_input_errors_name_the_argument():
    gam = random_gam(3, 'table', 'enumerable', seed=0); X = np.array([random_instance(gam, r) for r in range(10)])
    with pytest.raises(ValueError, match='X must have 2 dimension'): msr_batch(gam, X[0])
    with pytest.raises(ValueError, match='X must have 3 columns'): shap_regression_batch(gam, X[:, :2])
    bad = X.copy(); bad[7, 1] = 0.5
    with pytest.raises(ValueError, match=r'X\[5:10\]\[2, 1\] = 0.5 is outside'): mcr_batch(gam, bad, chunk_rows=5)
    with pytest.raises(ValueError, match='chunk_rows'): cc_batch(gam, X, [], chunk_rows=0)
    with pytest.raises(TypeError, match='chunk_rows'): shap_classification_batch(gam, X, chunk_rows=2.5)
    with pytest.raises(TypeError, match='show_progress'): csr_batch(gam, X, [0], show_progress='yes')
    with pytest.raises(ValueError, match='features'): csr_batch(gam, X, [5])
    with pytest.raises(TypeError, match='gam'): msr_batch(None, X)
    with pytest.raises(ValueError, match='dist or background'): shap_regression_batch(gam, X, dist='data', background=X)
    reg = random_gam(3, 'table', 'enumerable', task='regression', seed=0)
    with pytest.raises(ValueError, match='threshold'): msr_batch(reg, X)
    with pytest.raises(ValueError, match='X must have at least 1 row'): shap_regression_batch(gam, X[:0])


def test_nam_components_do_not_depend_on_the_batch_size():
    # the batch API relies on it: a value computed in a column equals the value computed alone, to the bit
    for seed in range(5):
        gam = random_gam(3, 'nam', 'interval', seed=seed)
        v = np.random.default_rng(seed).uniform(0, 1, 257)
        for comp in gam.components: assert [float(comp(t)) for t in v] == comp(v).tolist()


def test_ties_on_a_hand_made_model():
    # score exactly 0 at x = (0, 0): class 1; the empty set is not sufficient, MSR = both features
    g = GAM([TableComponent({0: -1, 1: 0}), TableComponent({0: 1, 1: 0})], EnumerableDomain([0, 1]), task='classification')
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], float)
    assert _lists(msr_batch(g, X)) == [msr(g, x) for x in X]
    assert [r or None for r in _lists(mcr_batch(g, X))] == [mcr(g, x) for x in X]
    assert cc_batch(g, X, []).tolist() == [cc(g, x, []) for x in X]


def test_step_lookup_grid_is_exact():
    # EBM-like step components with many thresholds take the lookup grid; clustered thresholds (many per cell) fall back
    from trustml_nb.gam_models import IntervalDomain, StepComponent
    from trustml_nb.gam_explain import _step_lookup
    rng = np.random.default_rng(0)
    comps = [StepComponent(np.sort(rng.uniform(-2, 2, T)), rng.normal(size=T + 1)) for T in (16, 50, 399, 1023)]
    comps.append(StepComponent(np.r_[np.linspace(0, 1e-9, 40), np.linspace(0.5, 2, 60)], rng.normal(size=101)))   # clustered
    for c in comps:
        v = np.r_[rng.uniform(-3, 3, 5_000), c.thresholds, np.nextafter(c.thresholds, -np.inf), np.nextafter(c.thresholds, np.inf)]
        assert (_step_lookup(c)(v) == c(v)).all()
    gam = GAM(comps, IntervalDomain(-3, 3), task='classification')
    X = rng.uniform(-3, 3, (500, len(comps))); X[:50, 2] = comps[2].thresholds[:50]
    assert (shap_regression_batch(gam, X) == np.array([shap_regression(gam, x) for x in X])).all()
    assert _lists(msr_batch(gam, X)) == [msr(gam, x) for x in X]


def _ebm_like(n, seed, bins=399, changes=50):
    "A GAM of step components like an EBM's: many bins, few score changes, clustered thresholds, interval domains."
    from trustml_nb.gam_models import IntervalDomain, StepComponent
    rng = np.random.default_rng(seed); comps = []
    for i in range(n):
        t = np.unique(np.r_[np.sort(rng.normal(size=bins - 20)), 1e-9 * np.arange(20)])   # a cluster of near-equal thresholds
        s = np.repeat(rng.normal(size=changes + 1), np.diff(np.r_[0, np.sort(rng.choice(len(t), changes, replace=False)), len(t) + 1]))
        comps.append(StepComponent(t, s if i % 7 else np.zeros(len(t) + 1)))   # some features constant
    return GAM(comps, [IntervalDomain(-4.0, 4.0)] * n, betas=rng.uniform(0.5, 2, n), beta0=0.1)


@pytest.mark.parametrize('n', [12, 100])
def test_grid_route_equals_the_loop_to_the_bit(n):
    # the shared grid (merged thresholds, one set of tables for all features) against the per-row search, at and beside
    # every threshold, at the domain's ends, and in every chunk layout
    from trustml_nb.gam_explain import _grid
    gam = _ebm_like(n, seed=n); assert _grid(gam) is not None
    rng = np.random.default_rng(1); X = rng.uniform(-4, 4, (600, n))
    t = gam.components[1].thresholds
    X[:len(t), 1] = t; X[len(t):2 * len(t) - 200, 1] = np.nextafter(t[:len(t) - 200], -np.inf)
    X[0] = -4.0; X[1] = 4.0
    ref = np.array([shap_regression(gam, x) for x in X])
    for rows in (None, 1, 37):
        phi = shap_regression_batch(gam, X, chunk_rows=rows)
        assert np.abs(phi - ref).max() <= 1e-12 and (phi == ref).all()
    bg = X[:20]; ref_bg = np.array([shap_regression(gam, x, background=bg) for x in X[:50]])
    assert (shap_regression_batch(gam, X[:50], background=bg) == ref_bg).all()
    thr = float(np.median(gam.score(X)))
    assert _lists(msr_batch(gam, X[:80], thr)) == [msr(gam, x, thr) for x in X[:80]]


def test_the_bar_follows_show_progress_for_one_chunk_or_many(capsys):
    gam = random_gam(3, 'step', 'interval', seed=0); X = np.array([random_instance(gam, r) for r in range(20)])
    shap_regression_batch(gam, X, show_progress=True); one = capsys.readouterr().err
    shap_regression_batch(gam, X, chunk_rows=5, show_progress=True); many = capsys.readouterr().err
    assert 'SHAP values' in one and '20/20' in one and 'SHAP values' in many and '20/20' in many
    shap_regression_batch(gam, X, show_progress=False); assert capsys.readouterr().err == ''


@pytest.mark.parametrize('shape', [(10000, 12), (10001, 12), (7, 12), (1, 3), (333, 100), (50, 1000), (1000, 1)])
def test_column_extremes_fold_rows_without_changing_the_answer(shape):
    # the chunk check folds a narrow array into long lines before reducing: the same minima and maxima, NaN found
    from trustml_nb.gam_explain import _column_extremes
    X = np.random.default_rng(0).normal(size=shape)
    assert all(np.array_equal(a, b) for a, b in zip(_column_extremes(X), (X.min(0), X.max(0))))
    X[-1, -1] = np.nan
    assert all(np.isnan(v[-1]) for v in _column_extremes(X))
    F = np.asfortranarray(X[:, ::-1])
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(_column_extremes(F), (F.min(0), F.max(0))))


def _accepted(lo, hi, v):
    "The values the domain check accepts (check_X: lo - 1e-12 <= v <= hi + 1e-12)."
    v = np.asarray(v, float); return v[(v >= lo - 1e-12) & (v <= hi + 1e-12)]


def _adversarial_column(rng, t, lo, hi, rows):
    "Values at and beside every threshold and domain end, signed zeros and uniform values, all inside what the check accepts."
    ends = [lo, hi, lo - 1e-12, hi + 1e-12, np.nextafter(lo - 1e-12, np.inf), np.nextafter(hi + 1e-12, -np.inf), 0.0, -0.0,
            np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)]
    pool = _accepted(lo, hi, np.r_[t, np.nextafter(t, -np.inf), np.nextafter(t, np.inf), ends, rng.uniform(lo, hi, 50)])
    return rng.choice(pool, rows)


def _search(comp, v):
    "The per-instance definition: the piece of v is the number of thresholds <= v (np.searchsorted, side='right')."
    return comp.scores[np.searchsorted(comp.thresholds, v, side='right')]


from hypothesis import given, settings, strategies as st


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_grid_lookup_equals_searchsorted_on_adversarial_values(data):
    # the bucketed lookup (uniform cells, one comparison, crowded cells redone, clipped where a domain is far wider than
    # the thresholds) against np.searchsorted at ties, nextafter neighbours, domain ends and signed zeros
    from trustml_nb.gam_models import IntervalDomain, StepComponent
    from trustml_nb.gam_explain import _grid, _grid_lookup
    n = data.draw(st.integers(1, 4), 'n'); rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), 'seed'))
    comps, doms = [], []
    for i in range(n):
        mag = data.draw(st.sampled_from([1e-6, 1.0, 1e3, 1e12]), 'scale')
        base = data.draw(st.lists(st.floats(-mag, mag, allow_nan=False), max_size=60), 'thresholds')
        c0 = data.draw(st.floats(-mag, mag, allow_nan=False), 'cluster at'); k = data.draw(st.sampled_from([0, 0, 2, 5, 8]), 'cluster')
        t = np.unique(np.r_[base, c0 + mag * 1e-12 * np.arange(k)]).astype(float)
        scores = rng.normal(size=len(t) + 1) if data.draw(st.booleans(), 'distinct') else rng.integers(-1, 2, len(t) + 1).astype(float)
        lo = data.draw(st.floats(-2 * mag, 2 * mag, allow_nan=False), 'lo'); width = data.draw(st.sampled_from([0.0, 1e-9, 1.0, 1e6]), 'width') * mag
        comps.append(StepComponent(t, scores)); doms.append(IntervalDomain(lo, lo + width if width > 0 else lo + mag))
    gam = GAM(comps, doms); g = _grid(gam)
    if g is None: return   # clustered beyond max_per_cell: the per-column route (tested elsewhere)
    X = np.stack([_adversarial_column(rng, c.thresholds, d.lo, d.hi, 300) for c, d in zip(comps, doms)], 1)
    ref = np.stack([_search(c, X[:, i]) for i, c in enumerate(comps)], 1)
    merged = _grid_lookup(g, X, g.scores, np.empty(X.shape))
    assert np.array_equal(merged, ref)
    assert np.array_equal(shap_regression_batch(gam, X[:20]), np.array([shap_regression(gam, x) for x in X[:20]]))


@pytest.mark.parametrize('route', ['plain', 'clip', 'crowded', 'groups', 'fortran'])
def test_every_grid_route_equals_searchsorted(route, monkeypatch):
    # each branch of the grid lookup taken on purpose: no clip, clip (a domain 1000x wider than the thresholds), crowded
    # cells (near-equal thresholds), several column groups (tiny cache budget) and a Fortran-ordered X (copied blocks)
    import trustml_nb.gam_explain as ge
    from trustml_nb.gam_models import IntervalDomain, StepComponent
    rng = np.random.default_rng(3); comps = []
    for i in range(5):
        t = np.sort(rng.uniform(-2, 2, 80))
        if route == 'crowded': t = np.unique(np.r_[t, 0.5 + 1e-13 * np.arange(6)])
        comps.append(StepComponent(t, rng.normal(size=len(t) + 1)))
    doms = [IntervalDomain(-2000, 2000) if route == 'clip' else IntervalDomain(-2.5, 2.5)] * 5
    if route == 'groups': monkeypatch.setattr(ge, '_GRID_GROUP_BYTES', 4096)
    gam = GAM(comps, doms); g = ge._grid(gam)
    assert g.clip == (route == 'clip') and (len(g.groups) > 1) == (route == 'groups') and (route != 'crowded' or len(g.crowded) > 0)
    X = np.stack([_adversarial_column(rng, c.thresholds, d.lo, d.hi, 5000) for c, d in zip(comps, doms)], 1)
    if route == 'fortran': X = np.asfortranarray(X)
    ref = np.stack([_search(c, X[:, i]) for i, c in enumerate(comps)], 1)
    assert np.array_equal(ge._grid_lookup(g, X, g.scores, np.empty(X.shape)), ref)
    assert np.array_equal(shap_regression_batch(gam, X[:300], chunk_rows=77), np.array([shap_regression(gam, x) for x in X[:300]]))
    for bad in (np.inf, -np.inf, np.nan, 2.6 if route != 'clip' else 2000.1):   # outside the domain: the same error as one row
        Xb = X[:10].copy(); Xb[4, 2] = bad
        with pytest.raises(ValueError, match='outside|NaN|finite'): shap_regression_batch(gam, Xb)
        with pytest.raises(ValueError, match='outside|NaN|finite'): shap_regression(gam, Xb[4])


def test_the_grid_is_built_once_per_model_and_rebuilt_when_it_changes():
    from trustml_nb.gam_explain import _grid
    gam = _ebm_like(4, seed=5); g = _grid(gam); assert _grid(gam) is g
    x = np.zeros((1, 4)); before = shap_regression_batch(gam, x)
    gam.components[1].scores[:] *= 2.0   # changed in place: a new grid, the new values
    assert _grid(gam) is not g
    assert np.array_equal(shap_regression_batch(gam, x), np.array([shap_regression(gam, x[0])])) and not np.array_equal(before, shap_regression_batch(gam, x))


@pytest.mark.parametrize('rows', [1, 7, 8, 9, 127, 129, 1000])
def test_background_means_through_the_grid_equal_the_loop(rows):
    # the batch call reads the background's scores from the grid and averages each (contiguous) column: the same pairwise
    # sums as the per-instance mean of one column, at every block length of numpy's pairwise summation
    gam = _ebm_like(12, seed=rows); rng = np.random.default_rng(rows)
    bg = rng.uniform(-4, 4, (rows, 12)); X = rng.uniform(-4, 4, (30, 12))
    assert np.array_equal(shap_regression_batch(gam, X, background=bg), np.array([shap_regression(gam, x, background=bg) for x in X]))
