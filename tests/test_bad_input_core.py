"""Bad-input sweep of the shared modules (core, groups, data, viz): every call ends in a clear trustml_nb error that
names the argument, or in a correct result. See tests/badinput.py."""
import ipywidgets as widgets
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from badinput import expect_error, expect_ok, finite, with_inf, with_nan
from trustml_nb import core, data, groups, viz
from trustml_nb.core import DroppedRowsWarning, SmallGroupWarning, quiet

M = 'core/groups/data/viz'
Y = np.array([0, 1, 1, 0, 1, 0])
P = np.array([0.1, 0.8, 0.6, 0.3, 0.9, 0.2])
G = pd.DataFrame({'a': [1, 1, 0, 0, 1, 0], 'b': [0, 1, 1, 1, 0, 1]})


def err(fn, *a, arg, **k): return expect_error(fn, *a, arg=arg, module=M, **k)
def ok(fn, *a, check, **k): return expect_ok(fn, *a, check=check, module=M, **k)


# ---- core validators ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize('x', [with_nan(P), with_inf(P), [], None, 'abc', {'a': 1}, ['a', 'b'], np.array(['1', '2']),
                               np.array([1 + 2j]), [1.0, 1e200], pd.DataFrame([[1, 2]], columns=['v', 'v']),
                               pd.Series(pd.Categorical(['x', 'y'])), 3.0])
def test_check_array(x):
    err(core.check_array, x, 'scores', arg='scores')


@pytest.mark.parametrize('p', [[-0.1, 0.5], [0.5, 1.2], with_nan(P), ['0.5'], [[0.3, 0.3]]])
def test_check_probabilities(p):
    err(core.check_probabilities, p, 'y_prob', rows_sum_to_one=np.ndim(p) == 2, arg='y_prob')


@pytest.mark.parametrize('y', [[0, 2], [-1, 1], [0.5, 1.0], ['yes', 'no'], with_nan(Y)])
def test_check_binary(y):
    err(core.check_binary, y, 'y_true', arg='y_true')


def test_check_binary_single_class():
    err(core.check_binary, [1, 1, 1], 'y_true', both_classes=True, arg='y_true')
    ok(core.check_binary, [True, False], 'y_true', check=lambda a: a.tolist() == [1, 0])


@pytest.mark.parametrize('x,kw', [(np.nan, {}), (np.inf, {}), ('1', {}), (True, {}), (None, {}), (2.5, dict(kind=int)),
                                  (-1, dict(low=0)), (0, dict(low=0, closed='neither')), (np.array([1, 2]), {})])
def test_check_scalar(x, kw):
    err(core.check_scalar, x, 'learning_rate', arg='learning_rate', **kw)


@pytest.mark.parametrize('v', ['DR ', np.array([1, 2]), None, ['dual'], 3])
def test_check_option(v):
    err(core.check_option, v, 'solver', ('dual', 'primal'), arg='solver')


@pytest.mark.parametrize('seed', [-1, 1.5, '3', True, [1]])
def test_make_rng(seed):
    err(core.make_rng, seed, arg='seed')


def test_seed_everything_and_same_length():
    err(core.seed_everything, -3, arg='seed')
    err(core.check_same_length, y_true=[0, 1], y_prob=[0.2], arg='y_prob')


def test_markdown_table_and_prefit():
    err(core.markdown_table, [1, 2], arg='df')
    err(core.markdown_table, pd.DataFrame({'a': [1.0]}), digits=0, arg='digits')
    clf = core.PrefitClassifier().fit()
    err(clf.predict_proba, [1.5, 0.2], arg='X')
    err(clf.predict_proba, with_nan(P), arg='X')
    err(core.PrefitClassifier(proba_fn='f').fit, arg='proba_fn')
    err(core.PrefitClassifier(classes=('a',)).fit, arg='classes')
    ok(clf.predict, P, check=lambda y: y.tolist() == [0, 1, 1, 0, 1, 0])


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30), st.integers(0, 29), st.sampled_from([np.nan, np.inf, -np.inf]))
def test_check_array_finds_any_bad_value(n, i, bad):
    "Property: a single NaN or infinity anywhere is reported, with its count, never passed on."
    a = np.linspace(0, 1, n); a[i % n] = bad
    e = err(core.check_array, a, 'X', arg='X')
    assert ('1 NaN' in str(e)) if np.isnan(bad) else ('1 infinite' in str(e))


# ---- groups --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('g', [
    pd.DataFrame({'a': [0.2, 0.8, 0, 0, 1, 1]}), pd.DataFrame({'a': [2, 0, 1, 1, 0, 1]}),
    pd.DataFrame([[1, 0]] * 6, columns=['a', 'a']), pd.DataFrame({'a': ['x', None, 'x', 'y', 'y', 'x']}),
    pd.DataFrame({'a': [0] * 6, 'b': [1] * 6}), pd.DataFrame(index=range(6)), {}, {'a': [1, 0]}, 'sex', None, 5,
    pd.DataFrame({'a': [1, 0, 1, 0, 1]}), np.array([[0.5, 1.0]] * 6), pd.DataFrame({'a': pd.to_datetime(['2020-01-01'] * 6)}),
])
def test_check_groups_bad(g):
    err(groups.check_groups, g, n=6, arg='groups')


def test_check_groups_reordered_renamed_and_tiny():
    fitted = ['b', 'a']
    ok(groups.check_groups, G, n=6, columns=fitted, check=lambda out: list(out.columns) == fitted and out['a'].tolist() == [True, True, False, False, True, False])
    err(groups.check_groups, G.rename(columns={'a': 'A'}), n=6, columns=fitted, arg='groups')
    err(groups.check_groups, G.to_numpy(), n=6, columns=fitted, arg='groups')
    err(groups.check_groups, G.assign(c=[1, 0, 0, 0, 0, 0]), n=6, min_size=2, arg='groups')
    ok(groups.check_groups, G.assign(c=[1, 0, 0, 0, 0, 0]), n=6, check=lambda out: out['c'].sum() == 1)   # a one-row group is allowed by default
    ok(groups.check_groups, pd.DataFrame({'all': [True] * 6}), n=6, check=lambda out: out.shape == (6, 1))  # a single group
    err(groups.check_groups, G, n=6, min_size=-1, arg='min_size')


@pytest.mark.parametrize('a,kw', [(['F', 'F', 'F'], {}), (['F', None, 'M'], {}), ([0.1, 0.5, 0.9], {}), ([1, 'x', 2], {}),
                                  (['F', 'M', 'X'], dict(kind='binary')), (['F', 'M'], dict(kind='multi')),
                                  (['F', 'M', 'M'], dict(min_group_size=2)), ([[0, 1]], {})])
def test_check_sensitive_bad(a, kw):
    arg = 'kind' if kw.get('kind') == 'multi' else 'sex'
    err(groups.check_sensitive, a, 'sex', arg=arg, **kw)


def test_intersect_bad():
    A = pd.DataFrame({'sex': ['F', 'M', 'F'], 'race': ['B', 'W', 'W']})
    err(groups.intersect, A.to_numpy(), arg='attributes')
    err(groups.intersect, A.iloc[:, :0], arg='attributes')
    err(groups.intersect, A.iloc[:0], arg='attributes')
    err(groups.intersect, A.set_axis(['x', 'x'], axis=1), arg='attributes')
    err(groups.intersect, A.assign(sex=['F', None, 'M']), arg='attributes')
    err(groups.intersect, A, max_order=0, arg='max_order')
    err(groups.intersect, A, min_size=0, arg='min_size')
    err(groups.intersect, A, keep=['sex=X'], arg='keep')
    with quiet(SmallGroupWarning):
        ok(groups.intersect, A, min_size=2, check=lambda out: list(out.columns) == ['sex=F', 'race=W'])
    err(groups.group_sizes, 'abc', arg='groups')


# ---- data ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('kw,arg', [
    (dict(splits={'a': 0.8, 'b': 0.8}), 'splits'), (dict(splits={'a': -0.5}), "splits['a']"), (dict(splits={'a': np.nan}), "splits['a']"),
    (dict(splits={'a': 0}), "splits['a']"), (dict(splits={'a': None, 'b': 10}), "splits['a']"), (dict(splits={1: 0.5}), 'split names'),
    (dict(splits=[0.5]), 'splits'), (dict(splits={'a': '0.5'}), "splits['a']"), (dict(label='Income'), 'label'),
    (dict(sensitive='gender'), 'sensitive'), (dict(sensitive=[]), 'sensitive'), (dict(exclude=['nope']), 'exclude'),
    (dict(max_rows=0), 'max_rows'), (dict(max_rows=1e9), 'max_rows'), (dict(base_model='knn'), 'base_model'),
    (dict(base_model=object()), 'base_model'), (dict(seed=-1), 'seed'), (dict(seed='0'), 'seed'),
    (dict(min_group_size=0), "min_group_size"), (dict(max_order=0), "max_order"), (dict(official_test='yes'), 'official_test'),
    (dict(splits={'test': 0.5}, official_test=True), "split 'test'"),
])
def test_adult_task_bad(kw, arg):
    kw.setdefault('max_rows', 300)
    with quiet(DroppedRowsWarning, SmallGroupWarning):
        err(data.adult_task, arg=arg, **kw)


def test_adult_task_edges_are_correct():
    with quiet(DroppedRowsWarning, SmallGroupWarning):
        t = ok(data.adult_task, {'a': 150, 'b': None}, max_rows=300, sensitive='sex', check=lambda t: (len(t.a), len(t.b)) == (150, 150))
        assert set(np.concatenate([t.a.rows, t.b.rows])) == set(range(300))
        ok(data.adult_task, {'only': 1.0}, max_rows=50, sensitive=('sex', 'race'), min_group_size=5,
           check=lambda t: t.only.groups.sum(axis=0).min() >= 5)


@pytest.mark.parametrize('kw,arg', [
    (dict(splits={'a': 0.8, 'b': 0.8}), 'splits'), (dict(splits={'a': -0.5}), "splits['a']"), (dict(splits={'a': np.nan}), "splits['a']"),
    (dict(splits={'a': 0}), "splits['a']"), (dict(splits={'a': None, 'b': 10}), "splits['a']"), (dict(splits={1: 0.5}), 'split names'),
    (dict(splits=[0.5]), 'splits'), (dict(splits={'a': '0.5'}), "splits['a']"), (dict(splits={'a': 2000}), 'splits'),
    (dict(sensitive='race'), 'sensitive'), (dict(sensitive=[]), 'sensitive'), (dict(sensitive=('sex', 'sex')), 'sensitive'),
    (dict(exclude=['age']), 'exclude'), (dict(base_model='knn'), 'base_model'), (dict(base_model=object()), 'base_model'),
    (dict(seed=-1), 'seed'), (dict(seed='0'), 'seed'), (dict(seed=1.5), 'seed'), (dict(min_group_size=0), 'min_group_size'),
    (dict(min_group_size=2.5), 'min_group_size'), (dict(max_order=3), 'max_order'), (dict(keep_groups=['sex=X']), 'keep'),
    (dict(splits={'a': 0.5, 'b': None}, base_model='hgb', base_split='c'), 'base_split'), (dict(base_split='all'), 'base_split'),
])
def test_german_task_bad(kw, arg):
    with quiet(SmallGroupWarning):
        err(data.german_task, arg=arg, **kw)


def test_german_task_edges_are_correct():
    with pytest.warns(SmallGroupWarning, match="left out 1 group"):   # one applicant cannot be in both age groups
        ok(data.german_task, {'a': 1, 'b': None}, sensitive='age_group', check=lambda t: (len(t.a), len(t.b), t.a.groups.shape[1]) == (1, 999, 1))
    ok(data.german_task, {'only': 1.0}, max_order=1, check=lambda t: t.only.groups.shape == (1000, 4))
    ok(data.german_task, {'x': 0.1, 'y': 0.1}, seed=np.random.default_rng(0), check=lambda t: len(t.x) + len(t.y) == 200)


def test_loaders_and_helpers_bad():
    err(data.load_adult, 'validation', arg='split')
    err(data.load_adult, dropna='yes', arg='dropna')
    err(data.load_german, decode=1.5, arg='decode')
    err(data.split_features, pd.DataFrame({'a': [1]}), arg='df.attrs')
    err(data.split_features, [1, 2], arg='df')
    err(data.dataset_summary, pd.DataFrame({'a': [1]}), arg='df.attrs')
    err(data.adult_attributes, pd.DataFrame({'sex': ['F']}), arg='df')
    X = pd.DataFrame({'h': [1.0, 2.0, 3.0], 'w': pd.Categorical(['a', 'b', 'a'])})
    err(data.encode_features, X.to_numpy(), arg='X')
    err(data.encode_features, X, fit=np.ones(2, bool), arg='fit')
    err(data.encode_features, X, fit=[0], arg='fit')
    err(data.encode_features, X.set_axis(['h', 'h'], axis=1), arg='X')
    ok(data.encode_features, X, check=lambda out: out[0].shape == (3, 3) and finite(out[0]))
    err(data.verify_checksum, data.dataset_path('ATTRIBUTION.txt'), arg='file name')


# ---- viz ---------------------------------------------------------------------------------------------------------

def test_plots_bad():
    df = pd.DataFrame({'label': ['a', 'b'], 'estimate': [0.1, 0.2], 'ci_low': [0.0, 0.1], 'ci_high': [0.2, 0.3]})
    err(viz.plot_estimates, df.drop(columns=['estimate']), arg='df')
    err(viz.plot_estimates, df.set_axis(['label', 'estimate', 'estimate', 'ci_high'], axis=1), arg='df')
    err(viz.plot_estimates, df.to_numpy(), arg='df')
    err(viz.plot_group_metric, df, 'group', 'estimate', arg='df')
    err(viz.plot_tradeoff, df, 'x', 'estimate', arg='df')
    ok(viz.plot_tradeoff, df, 'ci_low', 'estimate', annotate='label', check=lambda ax: [t.get_text() for t in ax.texts] == ['a', 'b'])
    err(viz.set_theme, 'lecture', arg='context')
    err(viz.Explorer, 3, {'n': None}, arg='render')
    err(viz.Explorer, lambda n: n, {}, arg='controls')
    err(viz.explorer, lambda n: n, n=3, arg="control 'n'")
    err(viz.explorer, lambda n: n, columns=0, n=widgets.IntText(), arg='columns')
    err(viz.explorer, lambda n: n, slow=('m',), n=widgets.IntText(), arg='slow')
    fig, ax = viz.new_figure()
    err(viz.readability, ax, arg='fig')
    err(viz.readability, fig, display_width=0, arg='display_width')
    err(viz.readability, fig, min_px=-1, arg='min_px')
    ok(viz.readability, fig, check=lambda r: r.ok and r.scale == 1)
    err(viz.legend_outside, fig, arg='ax')
    ok(viz.legend_outside, ax, check=lambda leg: leg is None)   # nothing labelled: no legend


def test_course_help_and_results_bad(tmp_path):
    "Issue 16's entry points: the benchmark-result finder, the lesson copier and the help() documenter."
    from trustml_nb.core import document_parameters, param_docs
    from trustml_nb.course import copy_lessons
    from trustml_nb.data import benchmark_result
    err(benchmark_result, 3, arg='filename')
    err(benchmark_result, '', arg='filename')
    err(benchmark_result, '../README.md', arg='filename')
    err(benchmark_result, 'no_such_result.csv', arg='no_such_result.csv', exc=FileNotFoundError)
    ok(benchmark_result, 'oath_detection.csv', check=lambda p: p.is_file())
    err(copy_lessons, None, arg='dest')
    err(copy_lessons, 3.5, arg='dest')
    err(copy_lessons, '', arg='dest')
    err(copy_lessons, str(tmp_path), overwrite='yes', arg='overwrite')
    (tmp_path / 'afile').write_text('x')
    err(copy_lessons, tmp_path / 'afile', arg='dest')
    ok(copy_lessons, tmp_path / 'course', check=lambda paths: len(paths) >= 10 and all(p.exists() for p in paths))
    err(copy_lessons, tmp_path / 'course', arg='overwrite', exc=FileExistsError)
    err(param_docs, 3, arg='obj')
    err(param_docs, 'check_scalar', arg='obj')
    ok(param_docs, benchmark_result, check=lambda d: d == {'filename': "a summary shipped in the package's `results` folder, e.g. 'oath_detection.csv'", 'return': 'the path of the file'})
    err(document_parameters, 3, arg='module_name')
    err(document_parameters, 'trustml_nb.no_such_module', arg='module_name')
    err(document_parameters, 'trustml_nb.data', extra=['x'], arg='extra')
    err(document_parameters, 'trustml_nb.data', extra={'f': 'not a dict'}, arg='extra')
    ok(document_parameters, 'trustml_nb.data', check=lambda done: done == [])   # already documented at import: nothing to add


# ---- issue 33 item 8: the residue in the shared modules -----------------------------------------------------------

def test_encode_features_positions_and_missing_values():
    "Row positions past the end, NaN, infinity and a value outside a column's categories: clear errors, never NaN or all-zero rows out."
    X = pd.DataFrame({'h': [1.0, 2.0, 3.0], 'w': pd.Categorical(['a', 'b', 'a'])})
    err(data.encode_features, X, fit=[0, 5000], arg='fit')
    err(data.encode_features, X, fit=[-1, 1], arg='fit')
    err(data.encode_features, X, fit=[0.5, 1.0], arg='fit')
    err(data.encode_features, X.assign(h=[1.0, np.nan, 3.0]), arg="'h'")
    err(data.encode_features, X.assign(h=[1.0, np.inf, 3.0]), arg="'h'")
    err(data.encode_features, X.assign(w=X.w.cat.set_categories(['a'])), arg="'w'")   # 'b' is no longer a category: read as missing
    err(data.encode_features, X.assign(w=['a', None, 'b']), arg="'w'")
    ok(data.encode_features, X, fit=[0, 2], check=lambda out: finite(out[0]) and (np.abs(out[0]).sum(axis=1) > 0).all())


def test_viz_refuses_bad_values_and_settings():
    "Intervals that do not contain their estimate, NaN/inf/text values, an empty grid and a negative font scale: trustml_nb errors."
    df = pd.DataFrame({'label': ['a', 'b'], 'estimate': [0.1, 0.2], 'ci_low': [0.0, 0.1], 'ci_high': [0.2, 0.3]})
    err(viz.plot_estimates, df.assign(ci_low=[0.15, 0.1]), arg='ci_low')
    err(viz.plot_estimates, df.assign(ci_high=[0.05, 0.3]), arg='ci_high')
    err(viz.plot_estimates, df, upper=None, arg='upper')
    for col in ('estimate', 'ci_low', 'ci_high'):
        for bad in (np.nan, np.inf):
            err(viz.plot_estimates, df.assign(**{col: [bad, 0.2]}), arg=col)
        err(viz.plot_estimates, df.assign(**{col: ['0.1', 'x']}), arg=col)
    err(viz.plot_estimates, df.assign(truth=[np.inf, 0.2]), truth='truth', arg='truth')
    ok(viz.plot_estimates, df.assign(truth=[np.nan, 0.2]), truth='truth', check=lambda ax: len(ax.collections) >= 1)   # an unknown truth is not drawn
    rates = pd.DataFrame({'g': ['F', 'M'], 'rate': [0.1, 0.3]})
    for bad in ([np.nan, 0.3], [np.inf, 0.3], ['0.1', 'x'], [True, False]):
        err(viz.plot_group_metric, rates.assign(rate=bad), 'g', 'rate', arg='rate')
        err(viz.plot_tradeoff, rates.assign(x=bad), 'x', 'rate', arg="'x'")
    err(viz.plot_group_metric, rates, 'g', 'rate', reference=np.nan, arg='reference')
    err(viz.new_figure, 0, arg='nrows')
    err(viz.new_figure, 1, 0, arg='ncols')
    err(viz.new_figure, 1.5, arg='nrows')
    err(viz.new_figure, figsize=(0, 3), arg='figsize')
    err(viz.new_figure, figsize=(6,), arg='figsize')
    err(viz.new_figure, figsize='big', arg='figsize')
    err(viz.set_theme, font_scale=-1, arg='font_scale')
    err(viz.set_theme, font_scale=0, arg='font_scale')
    err(viz.set_theme, font_scale=np.nan, arg='font_scale')
    err(viz.set_theme, font_scale='big', arg='font_scale')
    viz.set_theme()
