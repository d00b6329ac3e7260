"""Bad-input sweep of trustml_nb.gam_models and trustml_nb.gam_explain (issue 12): every public entry point with NaN and
inf, empty input, wrong lengths and dtypes, out-of-range indices and hyper-parameters, and unknown option strings.
Each call ends in a clear trustml_nb error naming the argument, or in a result checked against brute force."""
import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from badinput import expect_error, expect_ok, with_inf, with_nan
from trustml_nb.gam_models import (GAM, EnumerableDomain, GridDomain, IntervalDomain, ReLUNetComponent, SplineComponent,
                                   StepComponent, TableComponent, TorchNAM, check_features, from_interpret_ebm, from_pygam,
                                   from_torch_nam, linf_ball, random_gam, random_instance, sawtooth_net)
from trustml_nb.gam_explain import (balanced_partition_bf, bit_extraction_net, cc, cc_bf, csr, csr_bf, csr_paper_sign, csr_tol,
                                    delta_sufficient_reason, dnf_is_tautology, domain_decides, explain, fr, fr_bf, gam_explorer,
                                    knapsack_to_cc, mcr, mcr_bf, mcr_tol, msr, msr_bf, msr_tol, partition_to_msr_tol,
                                    plot_explanation, plot_landscape, plot_runtime, render_gam_explorer, run_query, runtime_table,
                                    shap_bf, shap_classification, shap_regression, subset_sum_count, subsetsum_to_fr,
                                    subsetsum_to_nam, taut_to_ebm, tolerance_greedy_study)

M = 'gam'
GAM3 = random_gam(3, 'table', 'enumerable', seed=0)          # classification, domains {0, 1, 2}
X3 = random_instance(GAM3, 1)
REG3 = GAM(GAM3.components, GAM3.domains, beta0=GAM3.beta0, task='regression')
SPL = random_gam(2, 'spline', 'interval', seed=0)            # real contributions, continuous domains


def err(fn, *args, arg, **kw): return expect_error(fn, *args, arg=arg, module=M, **kw)
def ok(fn, *args, check, **kw): return expect_ok(fn, *args, check=check, module=M, **kw)


# ---------------------------------------------------------------- issue 12 findings: the feature subset S
@pytest.mark.parametrize('query', [csr, cc, csr_bf, cc_bf, csr_paper_sign])
def test_subset_findings(query):
    err(query, GAM3, X3, '01', arg='features', case=f'{query.__name__} S=str')            # was read as features 0 and 1
    err(query, GAM3, X3, [0.7], arg='features', case=f'{query.__name__} S=[0.7]')         # was truncated to feature 0
    ok(query, GAM3, X3, np.array([0, 1]), check=lambda r: r == query(GAM3, X3, [0, 1]), case=f'{query.__name__} S=array')  # was a numpy error


@pytest.mark.parametrize('S, exc_arg', [([5], 'features'), ([-1], 'features'), ([0, 0], 'features'), ([True], 'features'), (np.array([True, False, True]), 'features'),
                                        (3, 'features'), (None, 'features'), (np.array([[0, 1]]), 'features'), (['age'], 'features'), ({0: 1}, 'features'),
                                        ([np.float64(1.0)], 'features'), (np.array([0.0, 1.0]), 'features')])
def test_subset_rejected_everywhere(S, exc_arg):
    err(csr, GAM3, X3, S, arg=exc_arg, case=f'csr S={S!r:.30}')
    err(csr_tol, REG3, X3, S, 1.0, arg=exc_arg, case=f'csr_tol S={S!r:.30}')


def test_subset_accepted_forms():
    ref = csr_bf(GAM3, X3, [0, 2])
    for S in ([2, 0], (0, 2), {0, 2}, np.array([2, 0], dtype=np.int32), ['x0', 'x2'], [np.int64(0), 'x2'], pd.Index([0, 2])):
        ok(csr, GAM3, X3, S, check=lambda r: r == ref, case=f'csr S={S!r:.30}')
    ok(cc, GAM3, X3, range(3), check=lambda r: r == 1.0, case='cc S=range(all)')        # every feature fixed: always kept
    ok(run_query, GAM3, X3, 'CSR', features=np.array([0, 2]), check=lambda r: r == ref, case='run_query S=array')


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(-2, 5), max_size=5))
def test_subset_hypothesis(S):
    "Random index lists: a clear error naming S (out of range, duplicates), or exactly the brute-force answer."
    if any(not 0 <= v < 3 for v in S) or len(set(S)) < len(S):
        err(csr, GAM3, X3, S, arg='features', case='csr S hypothesis'); err(cc, GAM3, X3, S, arg='features', case='cc S hypothesis')
    else:
        ok(csr, GAM3, X3, S, check=lambda r: r == csr_bf(GAM3, X3, sorted(S)), case='csr S hypothesis')
        ok(cc, GAM3, X3, S, check=lambda r: abs(r - cc_bf(GAM3, X3, sorted(S))) < 1e-12, case='cc S hypothesis')


# ---------------------------------------------------------------- issue 12 findings: components, GAM, domains
def test_model_findings():
    err(TableComponent, {0: np.nan}, arg='table', case='TableComponent NaN score')
    err(GAM, GAM3.components, GAM3.domains, beta0=np.inf, arg='beta0', case='GAM beta0=inf')
    err(GridDomain, 0, np.inf, arg='hi', case='GridDomain hi=inf')


def test_domains():
    err(EnumerableDomain, [], arg='values', case='EnumerableDomain empty')
    err(EnumerableDomain, [0, np.nan], arg='values', case='EnumerableDomain NaN')
    err(EnumerableDomain, [0, np.inf], arg='values', case='EnumerableDomain inf')
    err(EnumerableDomain, ['a', 'b'], arg='values', case='EnumerableDomain strings')
    err(EnumerableDomain, [[0, 1]], arg='values', case='EnumerableDomain 2-D')
    ok(EnumerableDomain, [2, 0, 2], check=lambda d: d.values.tolist() == [0, 2], case='EnumerableDomain duplicates merged')
    err(GridDomain, np.nan, 1, arg='lo', case='GridDomain lo=NaN')
    err(GridDomain, 0, 1, 0, arg='step', case='GridDomain step=0')
    err(GridDomain, 0, 1, -1, arg='step', case='GridDomain step<0')
    err(GridDomain, 3, 1, arg='lo <= hi', case='GridDomain hi<lo')
    err(GridDomain, '0', 1, arg='lo', case='GridDomain lo=str')
    err(GridDomain, -1e308, 1e308, 1e-300, arg='GridDomain', case='GridDomain overflowing size')
    err(IntervalDomain, 0, np.inf, arg='hi', case='IntervalDomain hi=inf')
    err(IntervalDomain, 1, 0, arg='lo <= hi', case='IntervalDomain hi<lo')
    err(IntervalDomain, True, 2, arg='lo', case='IntervalDomain bool')


def test_components():
    err(TableComponent, [1, 2], arg='table', case='TableComponent list')
    err(TableComponent, {}, arg='table', case='TableComponent empty')
    err(TableComponent, {'a': 1}, arg='table', case='TableComponent str key')
    err(TableComponent, {0: 'x'}, arg='table', case='TableComponent str score')
    err(TableComponent, {np.nan: 1}, arg='table', case='TableComponent NaN key')
    err(TableComponent, {0: np.inf}, arg='table', case='TableComponent inf score')
    err(StepComponent, [2, 1], [0, 1, 2], arg='thresholds', case='StepComponent unsorted')
    err(StepComponent, [1], [0, 1, 2], arg='scores', case='StepComponent scores length')
    err(StepComponent, [1], [0, np.nan], arg='scores', case='StepComponent NaN')
    err(StepComponent, [1], [0, 1], weights=[-1, 2], arg='weights', case='StepComponent negative weights')
    err(SplineComponent, [1, 0], [[0, 1]], arg='knots', case='SplineComponent decreasing knots')
    err(SplineComponent, [0, 1], [[0, 1, 2, 3, 4]], arg='coeffs', case='SplineComponent 5 coefficients')
    err(SplineComponent, [0, 1], [[np.nan]], arg='coeffs', case='SplineComponent NaN')
    err(ReLUNetComponent, [(np.ones((1, 2)), [0.0])], arg='b', case='ReLUNetComponent shape mismatch')
    err(ReLUNetComponent, [(with_nan(np.ones((1, 1))), [0.0])], arg='layers[0] W', case='ReLUNetComponent NaN weight')
    err(ReLUNetComponent, [(np.ones((1, 1)), [0.0])], method='lp', arg='method', case='ReLUNetComponent method')
    err(ReLUNetComponent, 'net', arg='layers', case='ReLUNetComponent str')
    err(sawtooth_net, 0, arg='depth', case='sawtooth_net depth=0')
    err(sawtooth_net, 1.5, arg='depth', case='sawtooth_net depth=1.5')
    err(sawtooth_net(3).breakpoints, 1, 0, arg='lo <= hi', case='breakpoints hi<lo')
    err(GAM3.components[0].mean, GAM3.domains[0], [0.5, 0.6, 0.1], arg='dist', case='mean dist sum 1.2')
    err(GAM3.components[0].mean, GAM3.domains[0], [0.5, 0.5], arg='dist', case='mean dist length')


def test_gam_container():
    c, d = GAM3.components, GAM3.domains
    err(GAM, c[0], d, arg='components', case='GAM one component')
    err(GAM, [], d, arg='component', case='GAM no components')
    err(GAM, [lambda v: v], d[0], arg='components[0]', case='GAM callable')
    err(GAM, c, d[:2], arg='domains', case='GAM domains length')
    err(GAM, c, d, betas=with_nan(np.ones(3)), arg='betas', case='GAM betas NaN')
    err(GAM, c, d, betas=np.ones(2), arg='betas', case='GAM betas length')
    err(GAM, c, d, beta0=np.nan, arg='beta0', case='GAM beta0 NaN')
    err(GAM, c, d, task='ranking', arg='task', case='GAM task')
    err(GAM, c, d, feature_names=['a', 'b'], arg='feature_names', case='GAM names length')
    err(GAM, c, d, feature_names=['a', 'a', 'b'], arg='feature_names', case='GAM duplicate names')
    err(GAM, c, d, feature_names='abc', arg='feature_names', case='GAM names str')
    err(GAM, [TableComponent({0: 1})], EnumerableDomain([0, 1]), arg='not in this table', case='GAM table misses a domain value')
    err(GAM3.check_x, [0, 1], arg='x', case='check_x short')
    err(GAM3.check_x, with_nan(X3), arg='x', case='check_x NaN')
    err(GAM3.check_x, with_inf(X3), arg='x', case='check_x inf')
    err(GAM3.check_x, ['a', 'b', 'c'], arg='x', case='check_x strings')
    err(GAM3.check_x, [0, 7, 1], arg='x[1]', case='check_x outside domain')
    err(GAM3.check_x, np.zeros((1, 3)), arg='x', case='check_x 2-D')
    ok(GAM3.check_x, pd.Series(X3), check=lambda r: np.array_equal(r, X3), case='check_x Series')
    err(GAM3.score, np.array([[0, 1, 7.0]]), arg='X[0, 2]', case='score matrix outside domain')
    err(GAM3.score, np.zeros((2, 2)), arg='X', case='score matrix columns')
    err(GAM3.means, 'uniform', arg='dist', case='means unknown dist string')
    err(GAM3.means, [None, None], arg='dist', case='means dist length')
    err(GAM3.means, np.ones(3) / 3, arg='dist', case='means dist array')
    err(GAM3.feature_index, 1.0, arg='feature', case='feature_index float')
    err(check_features, [0], 0, arg='features', case='check_features n_features=0')


def test_helpers():
    err(linf_ball, GAM3, X3, -1, arg='radius', case='linf_ball negative')
    err(linf_ball, GAM3, X3, np.nan, arg='radius', case='linf_ball NaN')
    err(linf_ball, GAM3, X3, [1, 1], arg='radius', case='linf_ball length')
    err(linf_ball, GAM3, X3, 'wide', arg='radius', case='linf_ball str')
    err(linf_ball, 'gam', X3, 1, arg='gam', case='linf_ball not a GAM')
    ok(linf_ball, GAM3, X3, 0, check=lambda g: all(dd.values.tolist() == [v] for dd, v in zip(g.domains, X3)), case='linf_ball r=0')
    err(random_gam, 0, arg='n', case='random_gam n=0')
    err(random_gam, 3, 'tree', arg='component', case='random_gam component')
    err(random_gam, 3, 'step', 'ball', arg='domain', case='random_gam domain')
    err(random_gam, 3, task='ranking', arg='task', case='random_gam task')
    err(random_gam, 3, n_values=0, arg='n_values', case='random_gam n_values=0')
    err(random_gam, 3, max_abs=-1, arg='max_abs', case='random_gam max_abs<0')
    err(random_gam, 3, 'step', 'grid', grid_bits=0, arg='grid_bits', case='random_gam grid_bits=0')
    err(random_gam, 3, seed=-1, arg='seed', case='random_gam seed<0')
    err(random_gam, 3, 'table', 'grid', arg='domain', case='random_gam table on grid')
    err(random_instance, GAM3, seed=-1, arg='seed', case='random_instance seed<0')
    err(random_instance, None, arg='gam', case='random_instance None')


# ---------------------------------------------------------------- queries
@pytest.mark.parametrize('fn', [msr, mcr, msr_bf, mcr_bf, explain])
def test_instance_queries(fn):
    name = fn.__name__
    err(fn, object(), X3, arg='gam', case=f'{name} not a GAM')
    err(fn, GAM3, X3[:2], arg='x', case=f'{name} short x')
    err(fn, GAM3, with_nan(X3), arg='x', case=f'{name} NaN x')
    err(fn, GAM3, X3, threshold=0.5, arg='threshold', case=f'{name} threshold on a classifier')
    err(fn, REG3, X3, threshold=np.nan, arg='threshold', case=f'{name} threshold NaN')
    if fn is not explain: err(fn, REG3, X3, arg='threshold', case=f'{name} regression without threshold')
    else:
        err(fn, REG3, X3, scale=1.0, arg='scale', case='explain scale without a decision')     # it would be ignored
        ok(fn, REG3, X3, threshold=0.0, scale=1.0, check=lambda r: r.prediction == int(REG3.score(X3) >= 0), case='explain scale with threshold')


def test_counting_and_shap():
    err(cc, GAM3, X3, [], scale=0, arg='scale', case='cc scale=0')
    err(cc, GAM3, X3, [0, 1, 2], scale=-1, arg='scale', case='cc scale<0 with every feature fixed')
    err(cc, GAM3, X3, [], scale=np.nan, arg='scale', case='cc scale NaN')
    err(cc, GAM3, X3, [], scale=1e15, arg='scale', case='cc scale too fine for the DP')
    err(cc, random_gam(3, 'spline', 'enumerable', seed=1), X3, [], arg='scale', case='cc real contributions without scale')
    err(shap_classification, GAM3, X3, scale='1', arg='scale', case='shap_classification scale str')
    err(shap_classification, GAM3, X3, dist='empirical', arg='dist', case='shap_classification dist')
    ok(shap_classification, GAM3, X3, dist=[None, None, [0.2, 0.3, 0.5]],
       check=lambda r: np.allclose(r, shap_bf(GAM3, X3, 'class', dist=[None, None, [0.2, 0.3, 0.5]]), atol=1e-12), case='shap_classification mixed dist')
    err(shap_regression, GAM3, X3, dist=[None, None, [0.5, 0.5]], arg='dist', case='shap_regression dist length')
    err(shap_regression, GAM3, X3, dist=[None, None, [0.5, 0.6, -0.1]], arg='dist', case='shap_regression negative prob')
    err(shap_regression, GAM3, X3, background=np.zeros((4, 2)), arg='background', case='shap_regression background columns')
    err(shap_regression, GAM3, X3, background=with_nan(np.zeros((4, 3))), arg='background', case='shap_regression background NaN')
    err(shap_regression, GAM3, X3, background=np.full((4, 3), 7.0), arg='background', case='shap_regression background outside domain')
    err(shap_regression, GAM3, X3, dist=[None] * 3, background=np.zeros((4, 3)), arg='background', case='shap_regression dist and background')
    bg = np.array([random_instance(GAM3, s) for s in range(4)])
    ok(shap_regression, GAM3, X3, background=bg, check=lambda r: np.allclose(r, GAM3.contributions(X3) - np.mean([GAM3.contributions(b) for b in bg], 0)),
       case='shap_regression background')
    err(shap_bf, GAM3, X3, 'probability', arg='output', case='shap_bf output')
    err(shap_bf, GAM3, X3, dist='data', arg='dist', case='shap_bf dist=data')
    err(shap_bf, GAM3, X3, max_points=0, arg='max_points', case='shap_bf max_points=0')
    err(msr_bf, SPL, [0.5, 0.5], arg='discrete domains', case='msr_bf interval domains')


def test_redundancy():
    for i, case in ((-1, 'i=-1'), (3, 'i=n'), (1.0, 'i=1.0'), (True, 'i=True'), ('age', 'unknown name'), ([0], 'list')):
        err(fr, GAM3, i, arg='feature', case=f'fr {case}')
    err(fr_bf, GAM3, 3, arg='feature', case='fr_bf i=n')
    err(fr, GAM3, 0, max_sums=0, arg='max_sums', case='fr max_sums=0')
    err(fr, GAM3, 0, threshold=1.0, arg='threshold', case='fr threshold on a classifier')
    ok(fr, GAM3, 'x1', check=lambda r: r == fr_bf(GAM3, 1), case='fr by name')


def test_tolerance():
    for fn, args in ((csr_tol, (REG3, X3, [0])), (mcr_tol, (REG3, X3)), (msr_tol, (REG3, X3))):
        err(fn, *args, -1.0, arg='tolerance', case=f'{fn.__name__} tolerance<0')
        err(fn, *args, np.nan, arg='tolerance', case=f'{fn.__name__} tolerance NaN')
        err(fn, *args, np.inf, arg='tolerance', case=f'{fn.__name__} tolerance inf')
    err(msr_tol, REG3, X3, 1.0, 'exact', arg='method', case='msr_tol method')
    err(msr_tol, REG3, X3, 1.0, 'greedy', scale=10, arg='scale', case='msr_tol scale without dp')
    ok(msr_tol, REG3, X3, 1e12, check=lambda r: r == [], case='msr_tol huge tolerance: nothing to fix')
    err(delta_sufficient_reason, GAM3, X3, 0.0, arg='min_share', case='delta_sufficient_reason min_share=0')
    err(delta_sufficient_reason, GAM3, X3, 1.5, arg='min_share', case='delta_sufficient_reason min_share>1')
    err(delta_sufficient_reason, GAM3, X3, 0.5, 'optimal', arg='method', case='delta_sufficient_reason method')
    err(delta_sufficient_reason, GAM3, X3[:2], 0.5, arg='x', case='delta_sufficient_reason short x')


def test_reductions():
    err(subset_sum_count, [0.7, 2], 2, arg='items', case='subset_sum_count float items')
    err(subset_sum_count, [-1, 2], 2, arg='items', case='subset_sum_count negative item')
    err(subset_sum_count, [1, 2], 2.5, arg='target', case='subset_sum_count float target')
    ok(subset_sum_count, [1, 2, 3], -1, check=lambda r: r == 0, case='subset_sum_count T<0')
    err(knapsack_to_cc, [1, 'a'], 3, arg='items', case='knapsack_to_cc str item')
    err(knapsack_to_cc, [1, 2], -1, arg='capacity', case='knapsack_to_cc capacity<0')
    err(subsetsum_to_fr, [1, 2], 0, arg='target', case='subsetsum_to_fr target=0')
    err(subsetsum_to_fr, [1, 2], 2, 'grid', arg='domain', case='subsetsum_to_fr domain')
    err(bit_extraction_net, [1] * 60, 3, arg='items', case='bit_extraction_net 60 items')
    err(bit_extraction_net, [1, 2], 3, indicator='yes', arg='indicator', case='bit_extraction_net indicator str')
    err(subsetsum_to_nam, [1, 2], 3, 'interval', arg='domain', case='subsetsum_to_nam domain')
    err(partition_to_msr_tol, [1, 2, 3], arg='items', case='partition_to_msr_tol odd')
    err(balanced_partition_bf, [1.5, 1.5], arg='items', case='balanced_partition_bf floats')
    err(taut_to_ebm, [[(0, True)]], 0, arg='n_vars', case='taut_to_ebm n_vars=0')
    err(taut_to_ebm, [[(2, True)]], 2, arg='terms', case='taut_to_ebm variable out of range')
    err(taut_to_ebm, [[(0, 1)]], 2, arg='polarity', case='taut_to_ebm polarity int')
    err(dnf_is_tautology, [], 2, arg='terms', case='dnf_is_tautology no terms')
    err(dnf_is_tautology, [[(0, True)]], 40, arg='n_vars', case='dnf_is_tautology 40 variables')


def test_studies_and_plots():
    err(run_query, GAM3, X3, 'SHAP', arg='query', case='run_query unknown')
    err(run_query, GAM3, X3, 'MSR', features=[0], arg='features', case='run_query features for MSR')
    err(run_query, GAM3, X3, 'MSR', fast='yes', arg='fast', case='run_query fast str')
    err(runtime_table, 'MSR', sizes=(), arg='sizes', case='runtime_table no sizes')
    err(runtime_table, 'MSR', sizes=(0,), arg='sizes', case='runtime_table size 0')
    err(runtime_table, 'MSR', sizes=(2.5,), arg='sizes', case='runtime_table float size')
    err(runtime_table, 'MSR', sizes=(2,), repeat=0, arg='repeat', case='runtime_table repeat=0')
    err(runtime_table, 'MSR', sizes=(2,), bf_limit=-1, arg='bf_limit', case='runtime_table bf_limit<0')
    err(runtime_table, 'MSR', sizes=(2,), component='table', domain='grid', arg='domain', case='runtime_table table on grid')
    err(runtime_table, 'XYZ', arg='query', case='runtime_table query')
    err(plot_runtime, pd.DataFrame({'n': [2]}), arg='df', case='plot_runtime missing columns')
    err(plot_landscape, which='both sides', arg='which', case='plot_landscape which')
    err(domain_decides, (1,), arg='bit_lengths', case='domain_decides q=1')
    err(domain_decides, (30,), arg='bit_lengths', case='domain_decides q=30')
    err(tolerance_greedy_study, 0, arg='n_instances', case='tolerance_greedy_study 0 instances')
    err(tolerance_greedy_study, 2, items_per_side=0, arg='items_per_side', case='tolerance_greedy_study items_per_side=0')
    err(tolerance_greedy_study, 2, seed=-1, arg='seed', case='tolerance_greedy_study seed<0')
    ok(tolerance_greedy_study, 3, items_per_side=1, seed=0, check=lambda r: r.n_instances == 3 and r.dp_equals_bruteforce == 3, case='tolerance_greedy_study items_per_side=1')
    err(plot_explanation, explain(GAM3, X3).to_frame(), arg='explanation', case='plot_explanation DataFrame')
    err(render_gam_explorer, 0, arg='n_features', case='render n_features=0')
    err(render_gam_explorer, 4, 'ball', arg='domain', case='render domain')
    err(render_gam_explorer, 4, 'grid', 'tree', arg='component', case='render component')
    err(render_gam_explorer, 4, query='SHAP', arg='query', case='render query')
    err(gam_explorer, -1, arg='seed', case='gam_explorer seed<0')


def test_edge_models_give_correct_results():
    "A single feature, a one-value domain, a constant component: answers checked against brute force."
    one = GAM([TableComponent({0: -1, 1: 2})], EnumerableDomain([0, 1]), task='classification')
    ok(msr, one, [1], check=lambda r: len(r) == len(msr_bf(one, [1])), case='msr one feature')
    ok(mcr, one, [1], check=lambda r: r == mcr_bf(one, [1]) == [0], case='mcr one feature')
    const = GAM([TableComponent({0: 1}), TableComponent({0: -1, 1: 2})], [EnumerableDomain([0]), EnumerableDomain([0, 1])], task='classification')
    ok(fr, const, 0, check=lambda r: r is True and fr_bf(const, 0), case='fr one-value domain')
    ok(explain, const, [0, 1], check=lambda r: r.prediction == 1 and r.sufficient_size == len(msr_bf(const, [0, 1])), case='explain one-value domain')
    ok(shap_regression, const, [0, 1], check=lambda r: np.allclose(r, shap_bf(const, [0, 1], 'score')), case='shap one-value domain')
    ok(cc, const, [0, 1], np.array([True, False]).nonzero()[0], check=lambda r: r == cc_bf(const, [0, 1], [0]), case='cc S from nonzero')
    ok(msr, GAM3, X3.astype(int).tolist(), check=lambda r: r == msr(GAM3, X3), case='msr int list x')
    ok(shap_regression, SPL, [0.5, 0.5], dist=None, check=lambda r: np.all(np.isfinite(r)), case='shap spline interval')


# ---------------------------------------------------------------- adapters and the torch NAM
def test_adapters():
    err(from_interpret_ebm, object(), arg='ebm', case='from_interpret_ebm object')
    from interpret.glassbox import ExplainableBoostingRegressor
    err(from_interpret_ebm, ExplainableBoostingRegressor(), arg='ebm', case='from_interpret_ebm unfitted')
    err(from_pygam, object(), IntervalDomain(0, 1), arg='gam', case='from_pygam object')
    err(TorchNAM, 0, arg='n_features', case='TorchNAM n_features=0')
    err(TorchNAM, 2, hidden=(0,), arg='hidden', case='TorchNAM width 0')
    err(TorchNAM, 2, hidden='8', arg='hidden', case='TorchNAM hidden str')
    err(TorchNAM, 2, seed=-1, arg='seed', case='TorchNAM seed<0')
    nam = TorchNAM(2, hidden=(3,), seed=0)
    err(from_torch_nam, torch.nn.Linear(2, 1), IntervalDomain(0, 1), arg='model', case='from_torch_nam Linear')
    err(from_torch_nam, nam, IntervalDomain(0, 1), task='ranking', arg='task', case='from_torch_nam task')
    err(from_torch_nam, nam, IntervalDomain(0, 1), method='lp', arg='method', case='from_torch_nam method')
    err(from_torch_nam, nam, [IntervalDomain(0, 1)], arg='domains', case='from_torch_nam domains length')
    with torch.no_grad(): nam.feature_nets[0][0].weight[0, 0] = float('nan')
    err(from_torch_nam, nam, IntervalDomain(0, 1), arg='model', case='from_torch_nam NaN weight')
