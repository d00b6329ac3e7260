"""Bad-input sweep of trustml_nb.monoculture (issue 22): every public entry point with NaN and inf, empty input, length
mismatch, wrong dtypes (text, object, bool, categorical), duplicate, missing and reordered column names, a single class,
a single group, one-row groups, out-of-range probabilities and settings, and unknown option strings. Each call ends in a
clear trustml_nb error naming the argument, or in a result checked against something exact."""
import numpy as np
import pandas as pd
import pytest

from badinput import expect_error, expect_ok, finite, with_inf, with_nan
from trustml_nb.monoculture import (ModelEcosystem, bootstrap_ecosystem, check_decisions, ecosystem_explorer, error_correlation,
                                    measure_ecosystem, null_strata, pairwise_agreement, pairwise_kappa, plot_position,
                                    plot_rejection_counts, poisson_binomial_enumerate, poisson_binomial_pmf, rashomon_measures,
                                    rashomon_set, render_ecosystem)
from trustml_nb.monoculture import (PROMPT_TEMPLATES, ask_templates, build_prompts, load_prompt_multiplicity, serialize_rows,
                                    threshold_decisions)

M_ = 'monoculture'
N = 60
rng = np.random.default_rng(0)
Y = rng.integers(0, 2, N)
H = pd.DataFrame({f"m{j}": np.where(rng.uniform(size=N) < 0.2 + 0.05 * j, 1 - Y, Y) for j in range(4)})
S = pd.DataFrame(np.clip(H.to_numpy() * 0.6 + rng.uniform(0, 0.4, H.shape), 0, 1), columns=H.columns)
G = pd.DataFrame({'a': np.arange(N) < 25, 'b': np.arange(N) >= 25})
X = pd.DataFrame({'age': rng.integers(18, 70, N), 'hours': rng.normal(40, 8, N), 'job': pd.Categorical(rng.choice(['a', 'b'], N))})
ECO = ModelEcosystem(n_models=3, seed=0, show_progress=False).fit(X, Y)


def err(fn, *args, arg, **kw): return expect_error(fn, *args, arg=arg, module=M_, **kw)
def ok(fn, *args, check, **kw): return expect_ok(fn, *args, check=check, module=M_, **kw)


# ---------------------------------------------------------------- the recursion
def test_probabilities():
    for fn in (poisson_binomial_pmf, poisson_binomial_enumerate):
        err(fn, [0.2, np.nan], arg='probabilities', case=f'{fn.__name__} NaN')
        err(fn, [0.2, np.inf], arg='probabilities', case=f'{fn.__name__} inf')
        err(fn, [], arg='probabilities', case=f'{fn.__name__} empty')
        err(fn, [0.2, 1.3], arg='probabilities', case=f'{fn.__name__} > 1')
        err(fn, [-0.2, 0.3], arg='probabilities', case=f'{fn.__name__} < 0')
        err(fn, ['0.2', '0.3'], arg='probabilities', case=f'{fn.__name__} text')
        err(fn, 0.3, arg='probabilities', case=f'{fn.__name__} scalar')
        err(fn, pd.Series([0.1, 0.2], dtype='category'), arg='probabilities', case=f'{fn.__name__} categorical')
        ok(fn, [True, False], check=lambda p: np.array_equal(p, [0, 1, 0]), case=f'{fn.__name__} booleans are certain trials')
        ok(fn, [0.0, 1.0, 1.0], check=lambda p: np.allclose(p, [0, 0, 1, 0]), case=f'{fn.__name__} certain trials')
    err(poisson_binomial_enumerate, np.full(21, 0.5), arg='probabilities', case='enumerate refuses 21 trials')
    err(poisson_binomial_enumerate, [0.1], max_trials=0, arg='max_trials', case='enumerate max_trials 0')
    err(poisson_binomial_enumerate, [0.1], max_trials=1.5, arg='max_trials', case='enumerate max_trials float')
    err(poisson_binomial_enumerate, [[0.1, 0.2]], arg='probabilities', case='enumerate matrix')
    err(poisson_binomial_pmf, np.zeros((2, 2, 2)), arg='probabilities', case='pmf 3-d')


# ---------------------------------------------------------------- decisions matrices
def _decision_fns():
    return [('check_decisions', lambda D: check_decisions(D)), ('pairwise_agreement', pairwise_agreement), ('pairwise_kappa', pairwise_kappa),
            ('error_correlation', lambda D: error_correlation(Y[:len(D)], D)), ('measure_ecosystem', lambda D: measure_ecosystem(Y[:len(D)], D)),
            ('rashomon_set', lambda D: rashomon_set(Y[:len(D)], D)), ('bootstrap_ecosystem', lambda D: bootstrap_ecosystem(Y[:len(D)], D, n_boot=20, show_progress=False))]


@pytest.mark.parametrize('name, fn', _decision_fns())
def test_decisions(name, fn):
    err(fn, with_nan(H.to_numpy()), arg='y_pred', case=f'{name} NaN')
    err(fn, with_inf(H.to_numpy()), arg='y_pred', case=f'{name} inf')
    err(fn, H.iloc[:0], arg='y_pred', case=f'{name} empty')
    err(fn, H[['m0']], arg='y_pred', case=f'{name} one column')
    err(fn, H.to_numpy()[:, 0], arg='y_pred', case=f'{name} vector')
    err(fn, S, arg='y_pred', case=f'{name} scores instead of decisions')
    err(fn, H.astype(str), arg='y_pred', case=f'{name} text')
    err(fn, H.astype('category'), arg='y_pred', case=f'{name} categorical')
    err(fn, H * 2, arg='y_pred', case=f'{name} values 0/2')
    err(fn, pd.concat([H, H[['m0']]], axis=1), arg='y_pred', case=f'{name} duplicate names')
    err(fn, H.set_axis([0, '0', 'x', 'z'], axis=1), arg='y_pred', case=f'{name} names equal as text')
    err(fn, 'H', arg='y_pred', case=f'{name} a string')
    ok(fn, H.astype(bool), check=lambda r: r is not None, case=f'{name} booleans')


def test_labels_and_lengths():
    for name, fn in (('error_correlation', error_correlation), ('measure_ecosystem', measure_ecosystem), ('rashomon_set', rashomon_set),
                     ('rashomon_measures', rashomon_measures), ('bootstrap_ecosystem', lambda y, D: bootstrap_ecosystem(y, D, n_boot=20, show_progress=False))):
        err(fn, Y[:-1], H, arg='y_true', case=f'{name} length mismatch')
        err(fn, with_nan(Y), H, arg='y_true', case=f'{name} NaN labels')
        err(fn, Y * 2, H, arg='y_true', case=f'{name} labels 0/2')
        err(fn, Y.astype(str), H, arg='y_true', case=f'{name} text labels')
    err(error_correlation, None, H, arg='y_true', case='error_correlation without labels')
    err(rashomon_set, None, H, arg='y_true', case='rashomon_set without labels')
    ok(measure_ecosystem, np.ones(N, int), H, check=lambda r: np.isfinite(r.systemic_exclusion_qualified), case='measure single class (all qualified)')
    ok(measure_ecosystem, np.zeros(N, int), H, check=lambda r: np.isnan(r.systemic_exclusion_qualified) and r.table['qualified'].eq(0).all(),
       case='measure nobody qualified: NaN says undefined')


def test_measure_settings_and_groups():
    err(measure_ecosystem, Y, H, null='random', arg='null', case='unknown null')
    err(measure_ecosystem, Y, H, null='difficulty', arg='difficulty', case='difficulty null without a score')
    err(measure_ecosystem, Y, H, null='difficulty', difficulty=np.arange(N - 1.0), arg='difficulty', case='difficulty wrong length')
    err(measure_ecosystem, Y, H, null='difficulty', difficulty=with_nan(np.arange(N)), arg='difficulty', case='difficulty NaN')
    err(measure_ecosystem, Y, H, null='difficulty', difficulty=np.arange(N), n_bins=0, arg='n_bins', case='n_bins 0')
    err(measure_ecosystem, Y, H, null='difficulty', difficulty=np.arange(N), n_bins=2.5, arg='n_bins', case='n_bins float')
    err(measure_ecosystem, None, H, null='label', arg='y_true', case='label null without labels')
    err(measure_ecosystem, Y, H, epsilon=-0.1, arg='epsilon', case='epsilon negative')
    err(measure_ecosystem, Y, H, epsilon=np.nan, arg='epsilon', case='epsilon NaN')
    err(measure_ecosystem, Y, H, epsilon='0.1', arg='epsilon', case='epsilon text')
    err(measure_ecosystem, Y, H, G.iloc[:-1], arg='groups', case='groups length mismatch')
    err(measure_ecosystem, Y, H, pd.concat([G, G[['a']]], axis=1), arg='groups', case='groups duplicate names')
    err(measure_ecosystem, Y, H, G.assign(c=False), arg='groups', case='empty group')
    base = measure_ecosystem(Y, H, G).table
    ok(measure_ecosystem, Y, H, G[['b', 'a']], check=lambda r: r.table.set_index('group').loc[['a', 'b']].equals(base.set_index('group')),
       case='groups reordered: the same rows by name')
    ok(measure_ecosystem, Y, H, G[['a']], check=lambda r: len(r.table) == 1, case='a single group')
    one = pd.DataFrame({'one': np.arange(N) == 0, 'rest': np.arange(N) > 0})
    ok(measure_ecosystem, Y, H, one, check=lambda r: r.table.set_index('group').loc['one', 'n'] == 1 and finite(r.table[['systemic_exclusion', 'unanimity']]),
       case='a one-row group')
    ok(measure_ecosystem, Y, H, pd.Series(np.where(np.arange(N) < 25, 'x', 'y'), name='s'), check=lambda r: len(r.table) == 2,
       case='one label per row as groups')


def test_null_strata():
    err(null_strata, 'iid', n_rows=3, arg='null', case='null_strata unknown null')
    err(null_strata, 'label', arg='y_true', case='null_strata label without labels')
    err(null_strata, 'difficulty', arg='difficulty', case='null_strata difficulty without a score')
    err(null_strata, 'independent', arg='n_rows', case='null_strata independent without a size')
    err(null_strata, 'independent', n_rows=0, arg='n_rows', case='null_strata zero rows')
    err(null_strata, 'difficulty', difficulty=['a', 'b'], arg='difficulty', case='null_strata text difficulty')
    ok(null_strata, 'difficulty', difficulty=np.ones(10), n_bins=5, check=lambda s: (s == 0).all(), case='null_strata constant difficulty: one bin')


def test_rashomon_and_bootstrap_settings():
    for eps in (-0.01, 1.5, np.inf, None, '0.1'):
        err(rashomon_set, Y, H, eps, arg='epsilon', case=f'rashomon epsilon {eps!r}')
    ok(rashomon_set, Y, H, 1.0, check=lambda s: s.all(), case='rashomon epsilon 1: everyone')
    err(bootstrap_ecosystem, Y, H, n_boot=5, arg='n_boot', case='n_boot too small')
    err(bootstrap_ecosystem, Y, H, n_boot=20.0, arg='n_boot', case='n_boot float')
    err(bootstrap_ecosystem, Y, H, level=1.0, arg='level', case='level 1')
    err(bootstrap_ecosystem, Y, H, level=0.2, arg='level', case='level 0.2')
    err(bootstrap_ecosystem, Y, H, seed=-1, n_boot=20, arg='seed', case='negative seed')
    err(bootstrap_ecosystem, Y, H, null='other', arg='null', case='bootstrap unknown null')
    err(bootstrap_ecosystem, Y, H, show_progress='yes', arg='show_progress', case='show_progress text')
    err(bootstrap_ecosystem, None, H, null='label', arg='y_true', case='bootstrap label null without labels')


# ---------------------------------------------------------------- the estimator
def test_ecosystem_settings():
    bad = [(dict(n_models=1), 'n_models'), (dict(n_models=2.5), 'n_models'), (dict(families='logistic'), 'families'),
           (dict(families=('logistic', 'svm')), 'families'), (dict(families=()), 'families'), (dict(feature_share=0), 'feature_share'),
           (dict(feature_share=1.5), 'feature_share'), (dict(row_share=np.nan), 'row_share'), (dict(thresholds=(0.5, 1.0)), 'thresholds'),
           (dict(thresholds=()), 'thresholds'), (dict(thresholds=0.5), 'thresholds'), (dict(seed=-1), 'seed'), (dict(seed=1.5), 'seed'),
           (dict(show_progress=1), 'show_progress')]
    for kw, arg in bad:
        err(lambda **k: ModelEcosystem(**{**dict(n_models=3, show_progress=False), **kw}).fit(X, Y), arg=arg, case=f'ModelEcosystem {kw}')


def test_ecosystem_data():
    fit = lambda X_, y_: ModelEcosystem(n_models=3, show_progress=False).fit(X_, y_)
    err(fit, X, Y[:-1], arg='y', case='fit length mismatch')
    err(fit, X, np.zeros(N, int), arg='y', case='fit single class')
    err(fit, X, with_nan(Y), arg='y', case='fit NaN labels')
    err(fit, X.assign(hours=with_nan(X['hours'])), Y, arg='X', case='fit NaN feature')
    err(fit, X.assign(hours=with_inf(X['hours'])), Y, arg='X', case='fit inf feature')
    err(fit, X.assign(job=X['job'].astype(str)), Y, arg='X', case='fit text column (not categorical)')
    err(fit, pd.concat([X, X[['age']]], axis=1), Y, arg='X', case='fit duplicate feature names')
    err(fit, X.iloc[:0], Y[:0], arg='y', case='fit empty')
    err(fit, X.iloc[:10], Y[:10], arg='y', case='fit too few rows')
    err(fit, 'X', Y, arg='X', case='fit X a string')
    ok(fit, X[['age', 'hours']].to_numpy(), Y, check=lambda e: e.features_ == ['x0', 'x1'], case='fit numeric array: columns x0, x1')
    P = ECO.predict_proba(X)
    ok(ECO.predict_proba, X[['job', 'hours', 'age']], check=lambda p: p.equals(P), case='predict reordered columns')
    err(ECO.predict_proba, X.drop(columns='age'), arg='X', case='predict missing column')
    err(ECO.predict_proba, X.rename(columns={'age': 'Age'}), arg='X', case='predict renamed column')
    err(ECO.predict_proba, X.assign(income=1.0), arg='X', case='predict unknown column')   # issue 33: was silently ignored
    err(ECO.predict, X.assign(age=with_nan(X['age'])), arg='X', case='predict NaN')
    err(ECO.predict, X.iloc[:0], arg='X', case='predict empty')


# ---------------------------------------------------------------- pictures and the widget
def test_render_and_plots():
    err(render_ecosystem, Y, S + 1, arg='scores', case='render scores > 1')
    err(render_ecosystem, Y, with_nan(S.to_numpy()), arg='scores', case='render NaN scores')
    err(render_ecosystem, Y, S.to_numpy()[:, 0], arg='scores', case='render vector scores')
    err(render_ecosystem, Y, S, threshold=1.0, arg='threshold', case='render threshold 1')
    err(render_ecosystem, Y, S, threshold=0, arg='threshold', case='render threshold 0')
    err(render_ecosystem, Y, S, null='x', arg='null', case='render unknown null')
    err(render_ecosystem, Y, S, epsilon=2, arg='epsilon', case='render epsilon 2')
    err(render_ecosystem, Y[:-1], S, arg='y_true', case='render label length')
    ok(render_ecosystem, Y, S.to_numpy(), check=lambda out: out[2].n_models >= 2, case='render unnamed scores array')
    err(plot_rejection_counts, {'a': 1}, arg='result', case='plot_rejection_counts wrong type')
    err(plot_position, None, arg='result', case='plot_position wrong type')
    ex = ecosystem_explorer(Y, S, G)
    ex.controls['threshold'].value = 0.8
    assert ex.error is None and ex.report is not None


# ---------------------------------------------------------------- prompt multiplicity
W = {'job': 'occupation', 'age': 'age'}


def test_serialize_and_prompts():
    err(serialize_rows, X.to_numpy(), W, arg='X')
    err(serialize_rows, X, {}, arg='features')
    err(serialize_rows, X, ['job'], arg='features')
    err(serialize_rows, X, {'salary': 'salary'}, arg='X')
    err(serialize_rows, X.iloc[:0], W, arg='X')
    err(serialize_rows, X.assign(age=X['age'].astype(float).where(X.index > 0)), W, arg='X', case='serialize_rows NaN')
    err(serialize_rows, X, W, style='json', arg='style')
    err(serialize_rows, X.set_axis(['age', 'age', 'job'], axis=1), W, arg='X', case='serialize_rows duplicate columns')
    ok(serialize_rows, X[['job', 'age']].iloc[[2, 0]], W, check=lambda out: out == [f"occupation: {X['job'][2]}\nage: {X['age'][2]}",
                                                                                   f"occupation: {X['job'][0]}\nage: {X['age'][0]}"])
    err(build_prompts, X, W, '', PROMPT_TEMPLATES['question first'], arg='question')
    err(build_prompts, X, W, 3, PROMPT_TEMPLATES['question first'], arg='question')
    err(build_prompts, X, W, 'Q?', '{record} only', arg='template')
    err(build_prompts, X, W, 'Q?', None, arg='template')
    ok(build_prompts, X.iloc[:2], W, 'Q?', '{question} {sentence}', check=lambda out: len(out) == 2 and out[0].startswith('Q? occupation is'))
    # issue 33: an unknown field was a KeyError from str.format; now a clear error naming the field and the allowed ones
    e = err(build_prompts, X, W, 'Q?', '{question} {record} Age: {age}', arg='template', case='build_prompts unknown field')
    assert "'{age}'" in str(e) and '{question}, {record}, {sentence}' in str(e)
    err(build_prompts, X, W, 'Q?', '{question} {record} {}', arg='template', case='build_prompts positional field')
    err(build_prompts, X, W, 'Q?', '{question} {record} {', arg='template', case='build_prompts lone brace')
    ok(build_prompts, X.iloc[:1], W, 'Q?', '{question} {record} / {sentence}', case='build_prompts record and sentence',
       check=lambda out: out[0].endswith(f"/ occupation is {X['job'][0]}, age is {X['age'][0]}"))


def test_ask_templates():
    class Fixed:
        def yes_probability(self, prompts): return np.full(len(prompts), 0.4)
    err(ask_templates, object(), X, W, 'Q?', arg='lm')
    err(ask_templates, Fixed(), X, W, 'Q?', templates={'one': '{question} {record}'}, arg='templates')
    err(ask_templates, Fixed(), X, W, 'Q?', templates=['{question} {record}'] * 2, arg='templates')
    err(ask_templates, Fixed(), X, W, '', arg='question')
    ok(ask_templates, Fixed(), X.iloc[:5], W, 'Q?', check=lambda S: S.shape == (5, 4) and np.allclose(S, 0.4))


def test_threshold_decisions():
    err(threshold_decisions, with_nan(S.to_numpy()), arg='scores')
    err(threshold_decisions, with_inf(S.to_numpy()), arg='scores')
    err(threshold_decisions, S.to_numpy()[:, 0], arg='scores', case='threshold_decisions 1-D')
    err(threshold_decisions, S * 2, arg='scores', case='threshold_decisions > 1')
    err(threshold_decisions, S.astype(str), arg='scores', case='threshold_decisions text')
    err(threshold_decisions, S.iloc[:0], arg='scores', case='threshold_decisions empty')
    err(threshold_decisions, S.set_axis(['a', 'a', 'b', 'c'], axis=1), arg='scores', case='threshold_decisions duplicate names')
    err(threshold_decisions, S, rule='median', arg='rule')
    err(threshold_decisions, S, seed=-1, arg='seed', case='threshold_decisions negative seed')
    for share in (0, 1, -0.2, np.nan, '0.5'):
        err(threshold_decisions, S, accept_share=share, arg='accept_share', case=f'threshold_decisions accept_share={share!r}')
    err(threshold_decisions, S, rule='fixed', threshold=1.5, arg='threshold')
    ok(threshold_decisions, S.iloc[:1], accept_share=0.5, check=lambda D: D.to_numpy().tolist() == [[1, 1, 1, 1]])
    ok(threshold_decisions, S, rule='fixed', threshold=0.5, check=lambda D: D.equals((S >= 0.5).astype(np.int8)))


def test_load_prompt_multiplicity():
    err(load_prompt_multiplicity, 'compas', arg='task')
    err(load_prompt_multiplicity, 'adult', path='/nonexistent/file.npz', arg='path', exc=(FileNotFoundError,))   # as for the other data files
    ok(load_prompt_multiplicity, 'german', check=lambda d: d['p_yes'].shape[1] == 4 and finite(d['p_yes']))
