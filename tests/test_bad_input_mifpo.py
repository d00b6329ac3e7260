"""Bad-input sweep of trustml_nb.mifpo (issue 17): every public entry point with NaN and inf, empty input, length
mismatch, wrong dtypes, a single class, a single group, three groups, unknown group labels, out-of-range probabilities
and settings, and unknown option strings. Each call ends in a clear trustml_nb error naming the argument, or in a result
checked against something exact."""
import numpy as np
import pandas as pd
import pytest

from badinput import expect_error, expect_ok, finite, with_inf, with_nan
from trustml_nb.mifpo import (FairRepresentation, GroupCalibratedScores, assign_bins, benchmark_results, best_fair_classifier, bin_scores, compare_peers,
                              conditional_h, mifpo_explorer, mifpo_program, pareto_front, plot_front, render_mifpo, score_bins,
                              synthetic_bins, synthetic_error_front, synthetic_mifpo)

M = 'mifpo'
SYN = synthetic_mifpo(400, seed=0)
P, Y, S = SYN['p_true'].to_numpy(), SYN['y'].to_numpy(), SYN['group'].to_numpy()
B = bin_scores(Y, P, S, n_bins=4)
SB = synthetic_bins()
REP = FairRepresentation(gamma=0.1, n_bins=4).fit(P, Y, sensitive=S)


def err(fn, *args, arg, **kw): return expect_error(fn, *args, arg=arg, module=M, **kw)
def ok(fn, *args, check, **kw): return expect_ok(fn, *args, check=check, module=M, **kw)
def fit(**kw): return lambda *a, **k: FairRepresentation(**{'n_bins': 4, **kw}).fit(*a, **k)


def test_score_bins_sweep():
    err(score_bins, [0.7, np.nan], [0.5, 0.5], [0.9], [1.0], 0.4, arg='rates_0', case='score_bins NaN rate')
    err(score_bins, [0.7, 1.2], [0.5, 0.5], [0.9], [1.0], 0.4, arg='rates_0', case='score_bins rate > 1')
    err(score_bins, [0.7, 0.2], [0.5, 0.6], [0.9], [1.0], 0.4, arg='masses_0', case='score_bins masses sum')
    err(score_bins, [0.7, 0.2], [1.5, -0.5], [0.9], [1.0], 0.4, arg='masses_0', case='score_bins negative mass')
    err(score_bins, [0.7, 0.2], [0.5, 0.5], [0.9, 0.1], [1.0], 0.4, arg='masses_1', case='score_bins length mismatch')
    err(score_bins, [0.7], [1.0], [0.9], [1.0], 1.0, arg='group_share', case='score_bins alpha = 1')
    err(score_bins, [0.7], [1.0], [0.9], [1.0], 0.4, groups=('a', 'a'), arg='groups', case='score_bins same names')
    err(score_bins, [], [], [0.9], [1.0], 0.4, arg='rates_0', case='score_bins empty')
    err(score_bins, ['a'], [1.0], [0.9], [1.0], 0.4, arg='rates_0', case='score_bins strings')
    ok(score_bins, [0.7], [1.0], [0.9], [1.0], 0.4, check=lambda b: b.n_rows == 0, case='score_bins one bin')


def test_bin_scores_sweep():
    err(bin_scores, Y, with_nan(P), S, arg='y_prob', case='bin_scores NaN score')
    err(bin_scores, Y, with_inf(P), S, arg='y_prob', case='bin_scores inf score')
    err(bin_scores, Y, P * 2, S, arg='y_prob', case='bin_scores score > 1')
    err(bin_scores, Y, P[:-1], S, arg='y_prob', case='bin_scores length mismatch')
    err(bin_scores, Y * 2, P, S, arg='y_true', case='bin_scores labels 0/2')
    err(bin_scores, np.zeros_like(Y), P, S, arg='y_true', case='bin_scores single class')
    err(bin_scores, Y, P, np.full(len(S), 'g0'), arg='sensitive', case='bin_scores single group')
    err(bin_scores, Y, P, np.where(np.arange(len(S)) % 3 == 0, 'c', S), arg='sensitive', case='bin_scores three groups')
    err(bin_scores, Y, P, S, n_bins=0, arg='n_bins', case='bin_scores n_bins 0')
    err(bin_scores, Y, P, S, n_bins=2.5, arg='n_bins', case='bin_scores n_bins float')
    err(bin_scores, [], [], [], arg='y_prob', case='bin_scores empty')
    err(bin_scores, Y, P.astype(bool), S, arg='y_prob', case='bin_scores booleans')
    S1 = S.copy(); S1[np.flatnonzero(S == 'g1')[1:]] = 'g0'
    err(bin_scores, Y, P, S1, arg='sensitive', case='bin_scores one-row group')
    ok(bin_scores, Y, P, pd.Categorical(S), check=lambda b: b.groups == ('g0', 'g1'), case='bin_scores categorical groups')
    err(bin_scores, Y, P, S, bins_like='B', arg='bins_like', case='bin_scores bins_like not bins')
    err(bin_scores, Y, P, S, bins_like=SB, arg='bins_like', case='bin_scores bins_like without edges')
    err(bin_scores, Y, P, np.where(S == 'g1', 'h1', S), bins_like=B, arg='bins_like', case='bin_scores bins_like other groups')
    ok(bin_scores, Y[:50], P[:50], S[:50], bins_like=B, check=lambda b: [len(r) for r in b.rates] == [len(r) for r in B.rates] and finite(b.table),
       case='bin_scores bins_like few rows (empty bins)')
    ok(bin_scores, Y.astype(bool), P, S, check=lambda b: abs(b.masses[0].sum() - 1) < 1e-12, case='bin_scores boolean labels')


def test_assign_bins_sweep():
    err(assign_bins, SB, P, S, arg='bins', case='assign_bins distribution bins')
    err(assign_bins, 'bins', P, S, arg='bins', case='assign_bins not bins')
    err(assign_bins, B, P, np.where(S == 'g1', 'G1', S), arg='sensitive', case='assign_bins unknown label')
    err(assign_bins, B, P, S[:-1], arg='sensitive', case='assign_bins length mismatch')
    err(assign_bins, B, with_nan(P), S, arg='y_prob', case='assign_bins NaN')
    ok(assign_bins, B, P, S, check=lambda r: r[1].max() < 4 and r[1].min() >= 0, case='assign_bins same rows')


def test_front_functions_sweep():
    err(best_fair_classifier, SB, -0.1, arg='gamma', case='best_fair_classifier gamma < 0')
    err(best_fair_classifier, SB, np.nan, arg='gamma', case='best_fair_classifier gamma NaN')
    err(best_fair_classifier, SB, '0.1', arg='gamma', case='best_fair_classifier gamma string')
    err(best_fair_classifier, {'rates': 1}, 0.1, arg='bins', case='best_fair_classifier dict bins')
    ok(best_fair_classifier, SB, 0.1, check=lambda r: abs(r.error - synthetic_error_front(0.1)[0]) < 1e-9, case='best_fair_classifier value')
    err(mifpo_program, SB, 1.5, arg='gamma', case='mifpo_program gamma > 1')
    err(mifpo_program, SB, 0.1, n_atoms=0, arg='n_atoms', case='mifpo_program k = 0')
    err(mifpo_program, SB, 0.1, objective='log', arg='objective', case='mifpo_program unknown objective')
    err(mifpo_program, SB, 0.1, restarts=0, arg='restarts', case='mifpo_program restarts 0')
    err(mifpo_program, SB, 0.1, seed=-1, arg='seed', case='mifpo_program negative seed')
    err(pareto_front, SB, gammas=[0.1, 2], arg='gammas', case='pareto_front gamma 2')
    err(pareto_front, SB, gammas=[], arg='gammas', case='pareto_front empty gammas')
    err(pareto_front, SB, gammas=[0.1, np.nan], arg='gammas', case='pareto_front NaN gamma')
    err(pareto_front, SB, routes=('lp', 'exact'), arg='routes', case='pareto_front unknown route')
    err(pareto_front, SB, routes=(), arg='routes', case='pareto_front no route')
    err(pareto_front, SB, routes=('lp', 'lp'), arg='routes', case='pareto_front route twice')
    err(pareto_front, SB, objective='entropy', arg='routes', case='pareto_front entropy with the LP')
    err(pareto_front, SB, routes=('lp',), show_progress='yes', arg='show_progress', case='pareto_front progress string')
    ok(pareto_front, SB, gammas=[0.0, 0.5], routes='lp', check=lambda f: finite(f.table['lp']), case='pareto_front one route as a string')
    err(conditional_h, SB, 'hinge', arg='objective', case='conditional_h unknown objective')
    err(synthetic_error_front, [0.1, 1.1], arg='gamma', case='synthetic_error_front gamma > 1')
    err(synthetic_mifpo, 5, arg='n', case='synthetic_mifpo tiny n')
    err(benchmark_results, 'other.json', arg='file', case='benchmark_results unknown file')
    ok(benchmark_results, check=lambda d: d['random']['n_instances'] >= 200, case='benchmark_results summary')


def test_fair_representation_sweep():
    err(fit(gamma=1.2), P, Y, sensitive=S, arg='gamma', case='fit gamma > 1')
    err(fit(route='exact'), P, Y, sensitive=S, arg='route', case='fit unknown route')
    err(fit(objective='entropy'), P, Y, sensitive=S, arg='route', case='fit entropy with the LP')
    err(fit(n_bins=-1), P, Y, sensitive=S, arg='n_bins', case='fit n_bins < 0')
    err(fit(), P, Y, arg='sensitive', case='fit without sensitive')
    # issue 33: the fit's errors name its own arguments X and y (they named bin_scores' y_prob and y_true)
    for e in (err(fit(), with_nan(P), Y, sensitive=S, arg='X', case='fit NaN score'),
              err(fit(), P, Y[:-1], sensitive=S, arg='y', case='fit length mismatch'),
              err(fit(), P, np.ones_like(Y), sensitive=S, arg='y', case='fit single class'),
              err(fit(), P[:-1], Y[:-1], sensitive=S, arg='X', case='fit sensitive length mismatch')):
        assert 'y_prob' not in str(e) and 'y_true' not in str(e), e
    err(REP.transform, P, sensitive=np.where(S == 'g0', 'x', S), arg='sensitive', case='transform unknown group')
    e = err(REP.transform, with_inf(P), sensitive=S, arg='X', case='transform inf'); assert 'y_prob' not in str(e)
    e = err(REP.predict_proba, P[:-1], sensitive=S, arg='X', case='predict_proba length mismatch'); assert 'y_prob' not in str(e)
    e = err(REP.evaluate, P * 2, Y, sensitive=S, arg='X', case='evaluate scores > 1'); assert 'y_prob' not in str(e)
    err(bin_scores, with_nan(P), Y, S, arg='y_true', case='bin_scores keeps its own names')
    err(REP.evaluate, P, Y, sensitive=np.full(len(S), 'g0'), arg='sensitive', case='evaluate one group')
    err(REP.evaluate, P, Y[:-1], sensitive=S, arg='y', case='evaluate length mismatch')
    ok(REP.evaluate, P, Y, sensitive=S, check=lambda e: abs(e.error - REP.report_.fit_error) < 1e-12, case='evaluate the fitting rows')
    ok(REP.predict_proba, P, sensitive=pd.Series(S), check=lambda q: np.allclose(q.sum(1), 1), case='predict_proba Series groups')


def test_group_calibrated_scores_sweep():
    X = pd.DataFrame({'x': P, 'z': np.arange(len(P)) % 7})
    g = lambda **kw: (lambda *a, **k: GroupCalibratedScores(**{'n_folds': 2, 'max_iter': 5, **kw}).fit(*a, **k))
    err(g(model='xgboost'), X, Y, sensitive=S, arg='model', case='scores unknown model')
    err(g(calibration='beta'), X, Y, sensitive=S, arg='calibration', case='scores unknown calibration')
    err(g(n_folds=1), X, Y, sensitive=S, arg='n_folds', case='scores one fold')
    err(g(), X.assign(x=with_nan(P)), Y, sensitive=S, arg='X', case='scores NaN feature')
    err(g(), pd.concat([X, X[['x']]], axis=1), Y, sensitive=S, arg='X', case='scores duplicate column')
    err(g(), X, Y, sensitive=S[:-1], arg='sensitive', case='scores length mismatch')
    err(g(), X, np.where(S == 'g1', 1, Y), sensitive=S, arg='y', case='scores one class in a group')
    err(g(), 'X', Y, sensitive=S, arg='X', case='scores X string')
    gs = GroupCalibratedScores(n_folds=2, max_iter=5).fit(X, Y, sensitive=S)
    err(gs.predict_proba, X[['z']], sensitive=S, arg='X', case='scores predict missing column')
    ok(gs.predict_proba, X[['z', 'x']], sensitive=S, check=lambda p: np.allclose(p, gs.predict_proba(X, sensitive=S)), case='scores predict reordered columns')
    # issue 33: a renamed or unknown column is an error, not silently dropped
    err(gs.predict_proba, X.assign(extra=1.0), sensitive=S, arg='X', case='scores predict unknown column')
    err(gs.predict_proba, X.rename(columns={'z': 'w'}), sensitive=S, arg='X', case='scores predict renamed column')


def test_peers_plot_explorer_sweep():
    err(compare_peers, Y, P, S, dp_levels=(0.1, -0.1), arg='dp_levels', case='compare_peers negative level')
    err(compare_peers, Y, P, S, Y, P, arg='y_true_test', case='compare_peers partial test rows')
    err(compare_peers, Y, P, S, Y[:-1], P, S, arg='y_true_test', case='compare_peers test length mismatch')
    err(plot_front, 'front', arg='front', case='plot_front not a front')
    err(plot_front, pareto_front(SB, gammas=[0.0, 0.2], routes=('lp',)), peers='peers', arg='peers', case='plot_front wrong peers')
    err(render_mifpo, Y, P, S, Y, P, S, gamma=0.1, objective='log', arg='objective', case='render unknown objective')
    err(mifpo_explorer, Y, P, S, Y, P, S, gamma=0.5, arg='gamma', case='explorer gamma above the slider')
    err(mifpo_explorer, Y, with_nan(P), S, Y, P, S, arg='y_prob', case='explorer NaN score')
