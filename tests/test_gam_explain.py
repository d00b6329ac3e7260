"""Tests of trustml_nb.gam_models and trustml_nb.gam_explain: every fast algorithm against its brute-force oracle on
at least 500 seeded random small instances per query (ties at the decision boundary are frequent by construction:
small integer contributions), reductions against solvers, adapters against their libraries, and clear errors."""
import itertools
import math

import numpy as np
import pandas as pd
import pytest

from trustml_nb.gam_models import (GAM, EnumerableDomain, GridDomain, IntervalDomain, ReLUNetComponent, SplineComponent,
                                   StepComponent, TableComponent, random_gam, random_instance, sawtooth_net, from_interpret_ebm,
                                   from_pygam, from_torch_nam, TorchNAM)
from trustml_nb.gam_explain import (csr, msr, mcr, cc, fr, shap_regression, shap_classification, csr_tol, mcr_tol, msr_tol,
                                    csr_bf, msr_bf, mcr_bf, cc_bf, fr_bf, shap_bf, csr_paper_sign, _table, _step,
                                    knapsack_to_cc, subsetsum_to_fr, subsetsum_to_nam, bit_extraction_net, partition_to_msr_tol,
                                    balanced_partition_bf, subset_sum_count, taut_to_ebm, dnf_is_tautology, gam_explorer, render_gam_explorer,
                                    tolerance_greedy_study, explain, plot_explanation, runtime_table)

N_INSTANCES = 500


def _instances(n_inst=N_INSTANCES, seed0=0):
    "Seeded random small table GAMs (n <= 5, |K| <= 3, contributions in [-2, 2]) with an instance each."
    for seed in range(seed0, seed0 + n_inst):
        rng = np.random.default_rng(seed)
        n, K = int(rng.integers(1, 6)), int(rng.integers(2, 4))
        gam = random_gam(n, 'table', 'enumerable', n_values=K, max_abs=2, seed=seed)
        yield gam, random_instance(gam, seed + 10_000), rng


def _mixed(n_inst=200):
    "Seeded discrete GAMs of every component kind: steps and NAMs on small grids, splines and NAMs on enumerable domains."
    combos = [('step', 'grid'), ('nam', 'grid'), ('spline', 'enumerable'), ('nam', 'enumerable'), ('step', 'enumerable')]
    for seed in range(n_inst):
        comp, dom = combos[seed % len(combos)]
        rng = np.random.default_rng(seed)
        gam = random_gam(int(rng.integers(1, 4)), comp, dom, grid_bits=2, seed=seed)
        yield gam, random_instance(gam, seed + 1), rng


# ---------------------------------------------------------------- reasons (A1-A3)
def test_csr_msr_mcr_match_bruteforce_500():
    n_ties = 0
    for gam, x, rng in _instances():
        n_ties += gam.score(x) == 0
        for S in [[], list(range(gam.n))] + [sorted(rng.choice(gam.n, int(rng.integers(0, gam.n + 1)), replace=False).tolist()) for _ in range(2)]:
            assert csr(gam, x, S) == csr_bf(gam, x, S), (gam, x, S)
        S = msr(gam, x); Sb = msr_bf(gam, x)
        assert csr_bf(gam, x, S) and len(S) == len(Sb)
        C = mcr(gam, x); Cb = mcr_bf(gam, x)
        assert (C is None) == (Cb is None)
        if C is not None:
            assert len(C) == len(Cb)
            assert not csr_bf(gam, x, [j for j in range(gam.n) if j not in C])   # duality: the complement of C is not sufficient
    assert n_ties >= 20, "the generator should hit the decision boundary s(x) = 0 often"


def test_reasons_all_component_kinds():
    for gam, x, rng in _mixed():
        S = msr(gam, x); assert csr_bf(gam, x, S) and len(S) == len(msr_bf(gam, x))
        C, Cb = mcr(gam, x), mcr_bf(gam, x); assert (C is None) == (Cb is None) and (C is None or len(C) == len(Cb))
        for T in itertools.chain.from_iterable(itertools.combinations(range(gam.n), k) for k in range(gam.n + 1)):
            assert csr(gam, x, list(T)) == csr_bf(gam, x, list(T))


def test_duality_all_subsets():
    for gam, x, _ in _instances(100, seed0=7000):
        P, _, s = _table(gam); y = gam.predict(x)
        for k in range(gam.n + 1):
            for S in itertools.combinations(range(gam.n), k):
                rest = [j for j in range(gam.n) if j not in S]
                agree = np.all(np.isclose(P[:, list(S)], x[list(S)]), 1) if S else np.ones(len(P), bool)
                contrastive_rest = np.any(_step(s[agree]) != y)
                assert csr(gam, x, list(S)) == (not contrastive_rest)


def test_c5_boundary_case():
    gam = GAM([TableComponent({0: -1, 1: 0}), TableComponent({0: -1, 1: 0})], EnumerableDomain([0, 1]), task='classification')
    x = np.array([0, 0])
    assert gam.predict(x) == 0
    assert csr(gam, x, []) is False and csr_bf(gam, x, []) is False
    assert csr_paper_sign(gam, x, []) is True          # the paper's sign-product test is wrong here
    assert len(msr(gam, x)) >= 1 and mcr(gam, x) is not None


def test_one_sided_regression_threshold_equals_classification():
    for gam, x, _ in _instances(100, seed0=9000):
        reg = GAM(gam.components, gam.domains, beta0=gam.beta0 + 1.5, task='regression')
        assert msr(reg, x, threshold=1.5) == msr(gam, x)
        assert mcr(reg, x, threshold=1.5) == mcr(gam, x)


# ---------------------------------------------------------------- counting and SHAP
def test_cc_matches_bruteforce_500():
    for gam, x, rng in _instances(seed0=1000):
        S = sorted(rng.choice(gam.n, int(rng.integers(0, gam.n + 1)), replace=False).tolist())
        assert abs(cc(gam, x, S) - cc_bf(gam, x, S)) < 1e-12
    for gam, x, rng in _mixed(100):
        if gam.components[0].kind == 'step':
            assert abs(cc(gam, x, [0]) - cc_bf(gam, x, [0])) < 1e-12


def test_shap_regression_matches_bruteforce_500_and_efficiency():
    for gam, x, rng in _instances(seed0=2000):
        dist = [rng.dirichlet(np.ones(d.size)) for d in gam.domains] if rng.random() < 0.5 else None
        phi = shap_regression(gam, x, dist=dist)
        assert np.allclose(phi, shap_bf(gam, x, 'score', dist=dist), atol=1e-9)
        assert abs(phi.sum() - (gam.score(x) - (gam.beta0 + gam.means(dist).sum()))) < 1e-9
    for gam, x, _ in _mixed(100):
        assert np.allclose(shap_regression(gam, x), shap_bf(gam, x, 'score'), atol=1e-9)


def test_shap_classification_matches_bruteforce_500_and_efficiency():
    for gam, x, rng in _instances(seed0=3000):
        dist = [rng.dirichlet(np.ones(d.size)) for d in gam.domains] if rng.random() < 0.3 else None
        phi = shap_classification(gam, x, dist=dist)
        assert np.allclose(phi, shap_bf(gam, x, 'class', dist=dist), atol=1e-9), (gam, x)
        if dist is None:
            _, _, s = _table(gam)
            assert abs(phi.sum() - (gam.predict(x) - _step(s).mean())) < 1e-9


def test_shap_classification_quantised_spline_close():
    gam = random_gam(4, 'spline', 'enumerable', seed=3); x = random_instance(gam, 1)
    phi = shap_classification(gam, x, scale=10_000)
    assert np.allclose(phi, shap_bf(gam, x, 'class'), atol=1e-3)


# ---------------------------------------------------------------- redundancy
def test_fr_matches_bruteforce_500():
    for gam, x, rng in _instances(seed0=4000):
        i = int(rng.integers(0, gam.n))
        assert fr(gam, i) == fr_bf(gam, i)
    for gam, x, rng in _mixed(100):
        assert all(fr(gam, i) == fr_bf(gam, i) for i in range(gam.n))


def test_fr_continuous_vs_dense_sampling():
    for seed in range(60):
        gam = random_gam(2, 'spline', 'interval', seed=seed)
        gam = GAM(gam.components, gam.domains, betas=[1.0, 0.0 if seed % 5 == 0 else 1.0], beta0=gam.beta0, task='classification')
        pts = []
        for c in gam.components:
            crit = np.concatenate([c._critical(k, a, b) for k, a, b in c._spans(0, 1)] + [np.array([0.0, 1.0])])
            pts.append(np.unique(np.r_[np.linspace(0, 1, 400), crit]))
        V = [b * c(p) for b, c, p in zip(gam.betas, gam.components, pts)]
        for i in range(2):
            j = 1 - i; g = gam.beta0 + V[j][:, None] + V[i][None, :]
            dense_red = bool(np.all((g >= 0).all(1) | (g < 0).all(1)))
            assert fr(gam, i) == dense_red, (seed, i)
    # C4: a nonzero constant component is redundant ("constant", not "zero")
    const = GAM([SplineComponent([0, 1], [[2.0]]), SplineComponent([0, 1], [[0, 1.0]])], IntervalDomain(0, 1), beta0=-2.5, task='classification')
    assert fr(const, 0) is True and fr(const, 1) is False


# ---------------------------------------------------------------- two-sided tolerance (A10)
def test_tolerance_queries_match_bruteforce_500():
    for gam, x, rng in _instances(seed0=5000):
        reg = GAM(gam.components, gam.domains, beta0=gam.beta0, task='regression')
        delta = float(rng.integers(0, 5)); P, _, s = _table(reg); fx = reg.score(x)
        def ok(S):
            agree = np.all(np.isclose(P[:, S], x[S]), 1) if S else np.ones(len(P), bool)
            return bool(np.all(np.abs(s[agree] - fx) <= delta + 1e-12))
        subsets = [list(T) for k in range(reg.n + 1) for T in itertools.combinations(range(reg.n), k)]
        for S in subsets: assert csr_tol(reg, x, S, delta) == ok(S)
        best = min(len(S) for S in subsets if ok(S))
        S = msr_tol(reg, x, delta, 'dp'); assert ok(S) and len(S) == best
        assert len(msr_tol(reg, x, delta, 'greedy')) >= best
        cand = [S for S in subsets if not ok([j for j in range(reg.n) if j not in S]) or
                any(abs(sv - fx) > delta + 1e-12 for sv in s[np.all(np.isclose(P[:, [j for j in range(reg.n) if j not in S]], x[[j for j in range(reg.n) if j not in S]]), 1)])]
        C = mcr_tol(reg, x, delta)
        assert (C is None) == (not cand) and (C is None or len(C) == min(len(T) for T in cand))


def test_r6_partition_reduction():
    res = tolerance_greedy_study(60, seed=1)
    assert res.n_instances == 60 and res.dp_equals_bruteforce == 60 and res.reduction_holds == 60
    t = res.to_frame()
    assert len(t) == 60 and (t.dp_size == t.bruteforce_size).all() and (t.greedy_size >= t.bruteforce_size).all()
    assert res.greedy_not_minimum == int((t.greedy_size > t.bruteforce_size).sum())
    assert t.has_balanced_partition.tolist() == [balanced_partition_bf(list(b)) for b in t['items']]


# ---------------------------------------------------------------- reductions
def test_r1_knapsack_counts():
    rng = np.random.default_rng(0)
    for _ in range(50):
        a = rng.integers(1, 10, int(rng.integers(1, 8))).tolist(); C = int(rng.integers(0, sum(a) + 1))
        gam, x = knapsack_to_cc(a, C)
        count = sum(sum(comb) <= C for k in range(len(a) + 1) for comb in itertools.combinations(a, k))
        assert round(2 ** len(a) * cc(gam, x, [])) == count


def test_r2_subset_sum_fr():
    rng = np.random.default_rng(1)
    for _ in range(200):
        a = rng.integers(1, 12, int(rng.integers(1, 7))).tolist(); T = int(rng.integers(1, sum(a) + 2))
        gam = subsetsum_to_fr(a, T); yes = subset_sum_count(a, T) > 0
        assert fr(gam, len(a)) == fr_bf(gam, len(a)) == (not yes)
        assert fr(subsetsum_to_fr(a, T, 'interval'), len(a)) == (T > sum(a))   # on [0,1]: redundant only if T is out of reach


def test_r3_nam_subset_sum():
    rng = np.random.default_rng(2)
    for _ in range(200):
        m = int(rng.integers(1, 8)); a = rng.integers(0, 10, m).tolist(); T = int(rng.integers(1, 20))
        net = bit_extraction_net(a, T); xs = np.arange(2 ** m)
        bits = (xs[:, None] >> np.arange(m - 1, -1, -1)) & 1
        assert np.array_equal(net(xs), -np.abs(bits @ np.array(a) - T))
        gam = subsetsum_to_nam(a, T); x0 = np.array([0.0]); yes = subset_sum_count(a, T) > 0
        assert gam.predict(x0) == 0
        assert csr(gam, x0, []) == (not yes) == csr_bf(gam, x0, [])
        assert (mcr(gam, x0) == [0]) == yes
        g3 = GAM([bit_extraction_net(a, T, indicator=True)], GridDomain(0, 2 ** m - 1, 1))
        xv = float(rng.integers(0, 2 ** m))
        assert abs(shap_regression(g3, [xv])[0] - (float(g3.score(np.array([xv]))) - subset_sum_count(a, T) / 2 ** m)) < 1e-9


def test_c1_taut_construction_is_polynomial_and_unsound():
    dnf = [[(0, True)], [(1, False)]]
    assert not dnf_is_tautology(dnf, 2) and csr(taut_to_ebm(dnf, 2), np.array([0.0]), [])
    assert len(taut_to_ebm([[(j, True)] for j in range(30)], 30).components[0].thresholds) == 30


# ---------------------------------------------------------------- primitives
def test_component_primitives_vs_dense():
    saw = sawtooth_net(8)
    assert len(saw.breakpoints(0, 1)) == 2 ** 8 + 1
    g = GridDomain(0, 1, 1 / 999)
    assert np.allclose(saw.extremes(g), (saw(g.points()).min(), saw(g.points()).max()), atol=1e-12)
    assert abs(saw.mean(g) - saw(g.points()).mean()) < 1e-12
    for seed in range(30):
        gam = random_gam(1, 'spline', 'interval', seed=seed); c = gam.components[0]
        gd = GridDomain(-0.2, 1.3, 0.0037)
        assert np.allclose(c.extremes(gd), (c(gd.points()).min(), c(gd.points()).max()), atol=1e-12)
        assert abs(c.mean(gd) - c(gd.points()).mean()) < 1e-10
        nam = random_gam(1, 'nam', 'interval', seed=seed).components[0]
        assert abs(nam.mean(gd) - nam(gd.points()).mean()) < 1e-10
        assert np.allclose(nam.extremes(gd), (nam(gd.points()).min(), nam(gd.points()).max()), atol=1e-12)
        st = random_gam(1, 'step', 'interval', seed=seed).components[0]
        assert np.allclose(st.extremes(gd), (st(gd.points()).min(), st(gd.points()).max()))
        assert abs(st.mean(gd) - st(gd.points()).mean()) < 1e-12


# ---------------------------------------------------------------- adapters
def test_ebm_shap_regression_equals_interpret_local():
    from interpret.glassbox import ExplainableBoostingRegressor
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(300, 4)); y = X[:, 0] + np.sin(2 * X[:, 1]) - X[:, 3] ** 2 + 0.1 * rng.normal(size=300)
    ebm = ExplainableBoostingRegressor(interactions=0, outer_bags=1, max_rounds=200, n_jobs=1, random_state=0).fit(X, y)
    gam = from_interpret_ebm(ebm)
    loc = ebm.explain_local(X[:20])
    for r in range(20):
        phi = shap_regression(gam, X[r], dist='data')
        assert np.allclose(phi, loc.data(r)['scores'], atol=1e-9, rtol=0)
        assert abs(phi.sum() - (ebm.predict(X[r:r + 1])[0] - (gam.beta0 + gam.means('data').sum()))) < 1e-9
    # background SHAP equals shap's exact explainer
    shap = pytest.importorskip('shap')
    bg = X[:30]
    ex = shap.explainers.Exact(gam.score, shap.maskers.Independent(bg, max_samples=30))
    sv = ex(X[:3]).values
    for r in range(3): assert np.allclose(shap_regression(gam, X[r], background=bg), sv[r], atol=1e-9)


def test_pygam_and_torch_adapters():
    from pygam import LinearGAM, s
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, size=(200, 2)); y = np.sin(4 * X[:, 0]) + X[:, 1] + 0.1 * rng.normal(size=200)
    pg = LinearGAM(s(0, n_splines=7) + s(1, n_splines=5)).fit(X, y)
    gam = from_pygam(pg, IntervalDomain(0, 1))
    assert np.allclose(gam.score(X), pg.predict(X), atol=1e-8)
    torch = pytest.importorskip('torch')
    nam = TorchNAM(3, hidden=(6, 6), seed=1)
    ng = from_torch_nam(nam, IntervalDomain(-1, 1), task='classification')
    Xt = torch.rand(30, 3) * 2 - 1
    with torch.no_grad(): assert np.allclose(ng.score(Xt.double().numpy()), nam(Xt).double().numpy(), atol=1e-5)
    x = Xt[0].double().numpy(); S = msr(ng, x); assert csr(ng, x, S)


# ---------------------------------------------------------------- bad inputs
def test_bad_inputs_give_clear_errors():
    gam = random_gam(3, 'table', 'enumerable', seed=0)
    with pytest.raises(ValueError, match=r"x\[1\] = 7 is outside feature 1"): msr(gam, [0, 7, 1])
    with pytest.raises(ValueError, match="x must have 3 features"): shap_regression(gam, [0, 1])
    with pytest.raises(ValueError, match="empty domain"): EnumerableDomain([])
    with pytest.raises(ValueError, match="would be empty"): GridDomain(3, 1)
    with pytest.raises(TypeError, match="gam must be a trustml_nb GAM"): msr(object(), [0, 1, 2])
    with pytest.raises(TypeError, match="gam must be a trustml_nb GAM"): shap_regression('model', [0])
    with pytest.raises(TypeError, match="ebm must be a fitted interpret"): from_interpret_ebm(object())
    with pytest.raises(TypeError, match="gam must be a fitted pygam"): from_pygam(object(), IntervalDomain(0, 1))
    reg = GAM(gam.components, gam.domains, task='regression')
    with pytest.raises(ValueError, match="pass threshold="): msr(reg, [0, 1, 2])
    with pytest.raises(ValueError, match=r"features must hold feature indices in \[0, 2\]"): csr(gam, [0, 1, 2], [5])
    with pytest.raises(ValueError, match="not integers: pass scale="): cc(random_gam(3, 'spline', 'enumerable'), [0, 1, 2], [])
    with pytest.raises(ValueError, match="brute force needs discrete domains"): msr_bf(random_gam(2, 'spline', 'interval'), [0.5, 0.5])
    with pytest.raises(ValueError, match="domains must have one entry per component"): GAM(gam.components, [EnumerableDomain([0])])
    with pytest.raises(ValueError, match="needs an EnumerableDomain"): GAM([TableComponent({0: 1})], IntervalDomain(0, 1))


# ---------------------------------------------------------------- widget and helpers
def test_explorer_slider_to_max_and_menus():
    ex = gam_explorer()
    assert ex.report.n_features == 6 and 'n = 6 features' in ex.report.title     # the browser test waits for this title
    first = list(ex.controls)[0]; assert first == 'n_features'
    ex.controls[first].value = ex.controls[first].max
    rep = ex.report
    assert ex.error is None and rep.n_features == 12 and 'n = 12 features' in rep.title
    # the report's numbers are the explanation's and the runtime table's, checked against brute force
    gam = random_gam(12, 'table', 'enumerable', seed=0, grid_bits=4); x = random_instance(gam, 0)
    assert rep.prediction == gam.predict(x) and rep.sufficient_size == len(msr_bf(gam, x, max_points=3 ** 12)) == rep.explanation.sufficient_size
    assert rep.table.n.tolist() == [2, 4, 6, 8, 10, 12] and rep.table.agree.dropna().all()
    assert rep.fast_ms == rep.table.fast_s.iloc[-1] * 1e3 and rep.bruteforce_ms is None     # 3^12 points: brute force skipped
    for dom, comp, q in [('grid', 'nam', 'SHAP-R'), ('interval', 'spline', 'FR'), ('enumerable', 'step', 'CC')]:
        ex.controls['domain'].value = dom; ex.controls['component'].value = comp; ex.controls['query'].value = q
        assert ex.error is None, (dom, comp, q, ex.error)
        assert (ex.report.domain, ex.report.component, ex.report.query) == (dom, comp, q)
    view, _ = render_gam_explorer(4, 'interval', 'table')       # tables need an enumerable domain: step components stand in
    assert view.component == 'step' and any('step components' in n for n in view.notes)


def test_runtime_table_agrees():
    df = runtime_table('MCR', sizes=(2, 4), repeat=1)
    assert df.agree.all() and (df.fast_s > 0).all()


def test_nam_milp_equals_breakpoints():
    rng = np.random.default_rng(5)
    for _ in range(10):
        net = ReLUNetComponent([(rng.normal(size=(1, 5)), rng.normal(size=5)), (rng.normal(size=(5, 5)), rng.normal(size=5)),
                                (rng.normal(size=(5, 1)), rng.normal(size=1))])
        for dom in (IntervalDomain(-3, 2), GridDomain(-3, 2, 0.05)):
            assert np.allclose(net.extremes_milp(dom), net.extremes(dom), atol=1e-6)
    assert np.allclose(sawtooth_net(16).extremes_milp(IntervalDomain(0, 1)), (0, 1), atol=1e-6)


def test_delta_sufficient_reason_and_quantisation_bound():
    from trustml_nb.gam_explain import delta_sufficient_reason
    for gam, x, rng in _instances(100, seed0=6000):
        delta = float(rng.choice([0.5, 0.75, 1.0]))
        S = delta_sufficient_reason(gam, x, delta, 'bruteforce')
        assert cc_bf(gam, x, S) >= delta - 1e-12
        assert all(cc_bf(gam, x, list(T)) < delta - 1e-12 for T in itertools.combinations(range(gam.n), len(S) - 1)) if S else True
        G = delta_sufficient_reason(gam, x, delta)
        assert cc_bf(gam, x, G) >= delta - 1e-12 and len(G) >= len(S)
        if delta == 1.0: assert len(G) == len(S)      # delta = 1 is the plain MSR: greedy is exact
    for seed in range(40):   # erratum C7: quantised CC error <= P(|score| <= n*Delta/2)
        gam = random_gam(4, 'spline', 'enumerable', seed=seed); x = random_instance(gam, seed)
        _, _, s = _table(gam); exact = cc_bf(gam, x, [])
        for sc in (1, 3, 10):
            assert abs(cc(gam, x, [], scale=sc) - exact) <= np.mean(np.abs(s) <= gam.n / (2 * sc)) + 1e-12


def test_linf_ball_local_reasons_shrink():
    from trustml_nb.gam_models import linf_ball
    for gam, x, rng in _instances(100, seed0=8000):
        r = float(rng.choice([0, 1, 2]))
        local = linf_ball(gam, x, r)
        assert local.predict(x) == gam.predict(x)
        S = msr(local, x); assert csr_bf(local, x, S) and len(S) == len(msr_bf(local, x))
        assert len(S) <= len(msr(gam, x))          # a smaller neighbourhood never needs more fixed features


# ---------------------------------------------------------------- issue 12: typed reports, one subset validator, extras
def test_explain_report_fields_match_the_queries():
    from contract import check_report
    for gam, x, rng in _instances(30, seed0=11_000):
        rep = explain(gam, x)
        check_report(rep)
        assert rep.prediction == gam.predict(x) and rep.score == gam.score(x) and rep.n_features == gam.n
        assert rep.sufficient_size == len(msr_bf(gam, x)) and csr_bf(gam, x, list(rep.sufficient_reason))
        Cb = mcr_bf(gam, x)
        assert (rep.contrastive_reason is None) == (Cb is None) and (Cb is None or rep.contrastive_size == len(Cb))
        t = rep.to_frame()
        assert np.allclose(t.shap_score, shap_bf(gam, x, 'score')) and np.allclose(t.shap_decision, shap_bf(gam, x, 'class'))
        assert abs(t.shap_score.sum() - (rep.score - rep.expected_score)) < 1e-9
        assert t.in_sufficient_reason.tolist() == [i in rep.sufficient_reason for i in range(gam.n)]
    reg = GAM(gam.components, gam.domains, beta0=gam.beta0, task='regression')
    plain = explain(reg, x)       # regression without threshold: no decision, no reasons
    assert plain.prediction is None and plain.sufficient_reason is None and 'in_sufficient_reason' not in plain.table
    spl = random_gam(3, 'spline', 'interval', seed=0)
    rs = explain(spl, random_instance(spl, 0))
    assert 'shap_decision' not in rs.table and any('SHAP of the decision skipped' in n for n in rs.notes)
    assert plot_explanation(rep).figure is not None


def test_reports_are_documented():
    from contract import check_report
    check_report(tolerance_greedy_study(3, seed=0))
    ex = gam_explorer()
    check_report(ex.report); check_report(ex.report.explanation)
    assert ex.report.to_frame().equals(ex.report.table) and ex.report.to_frame() is not ex.report.table


@pytest.mark.parametrize('query', [csr, cc])
def test_issue12_subset_S_findings(query):
    "csr/cc read S='01' as two features and S=[0.7] as feature 0, and failed on S=np.array([0, 1])."
    gam = random_gam(3, 'table', 'enumerable', seed=0); x = random_instance(gam, 1)
    with pytest.raises(TypeError, match="features must be a collection of feature indices.*string '01'"): query(gam, x, '01')
    with pytest.raises(TypeError, match="features must hold integer feature indices.*float 0.7"): query(gam, x, [0.7])
    assert query(gam, x, np.array([0, 1])) == query(gam, x, [0, 1]) == (csr_bf if query is csr else cc_bf)(gam, x, [0, 1])
    with pytest.raises(ValueError, match=r"features lists feature\(s\) \[1\] more than once"): query(gam, x, [1, 1])


def test_issue12_model_findings():
    "TableComponent({0: nan}), GAM(beta0=inf) and GridDomain(0, inf) were accepted."
    with pytest.raises(ValueError, match=r"table\[0\] must be a number, got NaN"): TableComponent({0: np.nan})
    with pytest.raises(ValueError, match="beta0 must be finite"): GAM([TableComponent({0: 1.0})], EnumerableDomain([0]), beta0=np.inf)
    with pytest.raises(ValueError, match="hi must be finite"): GridDomain(0, np.inf)
    with pytest.raises(ValueError, match="more than 2"): GridDomain(0, 1e300, 1e-300)


def test_optional_libraries_name_the_extra(monkeypatch):
    import builtins
    real = builtins.__import__
    def fake(name, *a, **k):
        if name.split('.')[0] in ('interpret', 'pygam', 'torch'): raise ImportError(f"No module named {name!r}")
        return real(name, *a, **k)
    monkeypatch.setattr(builtins, '__import__', fake)
    import importlib
    monkeypatch.setattr(importlib, 'import_module', lambda name, *a: fake(name))
    with pytest.raises(ImportError, match=r"from_interpret_ebm needs the optional package 'interpret'.*trustml_nb\[gam\]"): from_interpret_ebm(object())
    with pytest.raises(ImportError, match=r"from_pygam needs the optional package 'pygam'.*trustml_nb\[gam\]"): from_pygam(object(), IntervalDomain(0, 1))
    with pytest.raises(ImportError, match=r"TorchNAM needs the optional package 'torch'"): TorchNAM(2)


# ---------------------------------------------------------------- issue 33: labelled input, global generators
def test_labelled_instances_are_matched_by_name():
    "A Series (index) or DataFrame (columns) is read by feature name: reordered gives the same answer, renamed is an error."
    d = EnumerableDomain([0, 1])
    gam = GAM([TableComponent({0: 0, 1: 2}), TableComponent({0: 0, 1: -1}), TableComponent({0: 0, 1: -1})], d,
              task='classification', feature_names=['income', 'debt', 'late'])
    xs = pd.Series({'income': 1, 'debt': 0, 'late': 0})          # score 2.0; read by position reversed it would be 0 + 0 - 1
    a, b = explain(gam, xs), explain(gam, xs[::-1])
    assert a.score == 2.0 and b.score == 2.0
    pd.testing.assert_frame_equal(a.table, b.table)
    assert a.sufficient_reason == b.sufficient_reason and msr(gam, xs[::-1]) == msr(gam, [1, 0, 0])
    np.testing.assert_array_equal(shap_regression(gam, xs[['late', 'income', 'debt']]), shap_regression(gam, [1, 0, 0]))
    X = pd.DataFrame([[1, 0, 0], [0, 1, 1], [1, 1, 1]], columns=gam.feature_names)
    np.testing.assert_array_equal(gam.score(X[['late', 'debt', 'income']]), gam.score(X.to_numpy()))
    np.testing.assert_array_equal(gam.predict(X[['debt', 'income', 'late']]), [1, 0, 1])
    with pytest.raises(ValueError, match=r"x is missing column\(s\) \['income'\]"): explain(gam, xs.rename({'income': 'salary'}))
    with pytest.raises(ValueError, match=r"X is missing column\(s\) \['late'\]"): gam.score(X[['income', 'debt']])
    assert gam.score(pd.Series([1, 0, 0])) == 2.0                 # the default index 0..n-1 is read in order


def test_torch_nam_leaves_the_callers_generators_alone():
    torch = pytest.importorskip('torch')
    torch.manual_seed(123)
    saved = torch.random.get_rng_state()
    a = TorchNAM(2, hidden=(3,), seed=4)
    assert torch.equal(torch.random.get_rng_state(), saved)
    torch.manual_seed(999)
    b = TorchNAM(2, hidden=(3,), seed=4)                              # still seeded by its own seed
    for p, q in zip(a.parameters(), b.parameters()): assert torch.equal(p, q)


def test_reductions_return_named_results_that_unpack_as_before():
    "issue 34: knapsack_to_cc / partition_to_msr_tol return named results (fields by name), still unpacking as the old tuples."
    from trustml_nb.gam_explain import ReducedInstance, ToleranceInstance
    r = knapsack_to_cc([3, 5, 7], 8)
    assert isinstance(r, ReducedInstance) and r.gam is r[0] and np.array_equal(r.x, np.zeros(3))
    gam, x = r
    assert gam is r.gam
    t = partition_to_msr_tol([1, 2, 3, 4])
    assert isinstance(t, ToleranceInstance) and t._fields == ('gam', 'x', 'tolerance', 'max_size')
    gam, x, tolerance, k = t
    assert (tolerance, k) == (t.tolerance, t.max_size) and k == 2
    with pytest.warns(FutureWarning, match="renamed 'tolerance'"): assert t.delta == tolerance      # the old field name, for one release


@pytest.mark.parametrize('name, old, new, lead, value', [
    ('csr_tol', 'delta', 'tolerance', 'reg_features', 1.0), ('mcr_tol', 'delta', 'tolerance', 'reg', 1.0),
    ('msr_tol', 'delta', 'tolerance', 'reg', 1.0), ('delta_sufficient_reason', 'delta', 'min_share', 'clf', 0.75)])
def test_old_keyword_delta_still_works_with_a_future_warning(name, old, new, lead, value):
    "issue 34: the paper's delta is `tolerance` (two-sided *_tol) or `min_share` (delta-sufficient reasons); `delta` keeps working for one release."
    import inspect
    import warnings
    from trustml_nb import gam_explain
    f = getattr(gam_explain, name)
    assert new in inspect.signature(f).parameters and old not in inspect.signature(f).parameters
    gam = random_gam(4, 'table', 'enumerable', seed=3); x = random_instance(gam, 3)
    reg = GAM(gam.components, gam.domains, gam.betas, gam.beta0, task='regression')
    args = {'reg_features': (reg, x, [0, 2]), 'reg': (reg, x), 'clf': (gam, x)}[lead]
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        expected = f(*args, **{new: value})
    with pytest.warns(FutureWarning, match=f"'{old}' is renamed '{new}'"): assert f(*args, **{old: value}) == expected


def test_tolerance_greedy_study_old_keywords():
    from trustml_nb.gam_explain import tolerance_greedy_study
    new = tolerance_greedy_study(5, items_per_side=2, max_item=6, seed=1, show_progress=False)
    with pytest.warns(FutureWarning, match="'k' is renamed 'items_per_side'"):
        old = tolerance_greedy_study(5, k=2, max_b=6, seed=1, show_progress=False)
    assert old.table.equals(new.table)


@pytest.mark.parametrize('name', ['csr', 'cc', 'csr_tol', 'csr_bf', 'cc_bf', 'csr_paper_sign', 'run_query'])
def test_old_keyword_S_still_works_with_a_future_warning(name):
    "issue 34: the feature-set argument is `features`; the paper's `S` keeps working for one release with a FutureWarning naming it."
    import inspect
    import warnings
    from trustml_nb import gam_explain
    f = getattr(gam_explain, name)
    params = inspect.signature(f).parameters
    assert 'features' in params and 'S' not in params
    gam = random_gam(4, 'table', 'enumerable', seed=3); x = random_instance(gam, 3)
    reg = GAM(gam.components, gam.domains, gam.betas, gam.beta0, task='regression') if name == 'csr_tol' else gam
    lead = {'csr_tol': (reg, x), 'run_query': (gam, x, 'CSR')}.get(name, (gam, x))
    rest = {'csr_tol': {'tolerance': 1.0}, 'cc': {'scale': 1}}.get(name, {})
    with warnings.catch_warnings():
        warnings.simplefilter('error')                         # the new name warns about nothing
        new = f(*lead, features=[0, 2], **rest)
    with pytest.warns(FutureWarning, match=r"'S' is renamed 'features'"): old = f(*lead, S=[0, 2], **rest)
    assert old == new
    with pytest.raises(TypeError, match='features'): f(*lead, features=[0], S=[0], **rest)


@pytest.mark.parametrize('name', ['fr', 'fr_bf'])
def test_old_keyword_i_still_works_with_a_future_warning(name):
    "issue 34: feature redundancy's argument is `feature`; the paper's `i` keeps working for one release with a FutureWarning naming it."
    import inspect
    import warnings
    from trustml_nb import gam_explain
    f = getattr(gam_explain, name)
    assert 'feature' in inspect.signature(f).parameters and 'i' not in inspect.signature(f).parameters
    gam = random_gam(4, 'table', 'enumerable', seed=5)
    for j in range(gam.n):
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            new = f(gam, feature=j)
        with pytest.warns(FutureWarning, match=r"'i' is renamed 'feature'"): old = f(gam, i=j)
        assert old == new == f(gam, j)
    with pytest.raises(TypeError, match='feature'): f(gam, feature=0, i=0)
