"""Bad-input sweep of trustml_nb.quere and trustml_nb.llm (issue 19): NaN and inf, empty input, length mismatch, wrong
dtypes, a single class, out-of-range settings and unknown options end in a clear trustml_nb error naming the argument;
none of these calls needs the model."""
import numpy as np
import pytest

from badinput import expect_error, expect_ok
from trustml_nb.llm import BlackBoxLM, _check_conversations, _check_turns
from trustml_nb.quere import (QueReProbe, bootstrap_auroc, compare_probes, feature_sets, load_quere_features, make_tasks,
                              model_identification, monte_carlo_option_probabilities, option_probabilities_at,
                              yes_probability_at)

M = 'quere'
F = load_quere_features()
rng = np.random.default_rng(0)
X = rng.normal(size=(50, 3)); Y = (X[:, 0] > 0).astype(int)
LP4 = np.log(rng.dirichlet(np.ones(5), 6)[:, :4])
LP2 = np.log(rng.dirichlet(np.ones(3), 6)[:, :2])


@pytest.mark.parametrize('kw, arg', [(dict(n_per_family=0), 'n_per_family'), (dict(n_per_family=2.5), 'n_per_family'),
                                     (dict(n_per_family='3'), 'n_per_family'), (dict(families=['poetry']), 'families'),
                                     (dict(families='arithmetic'), 'families'), (dict(families=[]), 'families'),
                                     (dict(seed=-1), 'seed')])
def test_make_tasks(kw, arg):
    expect_error(make_tasks, module=M, arg=arg, **kw)


def test_make_tasks_ok():
    expect_ok(make_tasks, 1, families=['choice'], module=M, check=lambda t: len(t) == 1 and t.gold[0] in ('A', 'B'))


@pytest.mark.parametrize('Xb, yb, arg', [
    (np.where(np.arange(150).reshape(50, 3) == 4, np.nan, X), Y, 'X'), (np.where(np.arange(150).reshape(50, 3) == 4, np.inf, X), Y, 'X'),
    (X[:0], Y[:0], 'X'), (X, Y[:-1], 'y'), (X.astype(str), Y, 'X'), (X, np.zeros(50, int), 'y'), (X, Y + 1, 'y'),
    (X[:, 0], Y, 'X'), (X, Y.astype(float) / 2, 'y')])
def test_probe_fit(Xb, yb, arg):
    expect_error(QueReProbe().fit, Xb, yb, module=M, arg=arg)


@pytest.mark.parametrize('kw, arg', [(dict(C=0.0), 'C'), (dict(C=-1.0), 'C'), (dict(C='big'), 'C'), (dict(max_iter=0), 'max_iter')])
def test_probe_settings(kw, arg):
    expect_error(QueReProbe(**kw).fit, X, Y, module=M, arg=arg)


def test_probe_predict_wrong_width():
    expect_error(QueReProbe().fit(X, Y).predict_proba, X[:, :2], module=M, arg='X')


@pytest.mark.parametrize('args, kw, arg', [((Y, np.r_[np.nan, X[1:, 0]]), {}, 'y_prob'), ((np.zeros(50, int), X[:, 0]), {}, 'y_true'),
                                           ((Y, X[:-1, 0]), {}, 'y_prob'), ((Y, X[:, 0]), dict(n_bootstrap=1), 'n_bootstrap'),
                                           ((Y, X[:, 0]), dict(level=1.5), 'level')])
def test_bootstrap_auroc(args, kw, arg):
    expect_error(bootstrap_auroc, *args, module=M, arg=arg, **kw)


@pytest.mark.parametrize('fn, args, arg', [(yes_probability_at, (LP4[:, :3],), 'logprobs'), (yes_probability_at, (np.r_[[[np.nan] * 4], LP4],), 'logprobs'),
                                           (yes_probability_at, (LP4, 0.0), 'temperature'), (option_probabilities_at, (LP2[:, 0],), 'option_logprobs'),
                                           (monte_carlo_option_probabilities, (LP2, 0), 'n_samples'),
                                           (monte_carlo_option_probabilities, (np.abs(LP2), 10), 'option_logprobs')])
def test_probability_helpers(fn, args, arg):
    expect_error(fn, *args, module=M, arg=arg)


@pytest.mark.parametrize('kw, arg', [(dict(model='dirty'), 'model'), (dict(follow_ups=[99]), 'follow_ups'),
                                     (dict(follow_ups=[True]), 'follow_ups'), (dict(temperature=-1.0), 'temperature')])
def test_feature_sets(kw, arg):
    expect_error(feature_sets, F, module=M, arg=arg, **kw)


@pytest.mark.parametrize('args, kw, arg', [(({}, Y), {}, 'sets'), (({'a': X[:-1]}, Y), {}, 'sets'), (({'a': X}, Y), dict(test_fraction=1.0), 'test_fraction'),
                                           (({'a': X}, Y), dict(groups_of_rows=np.arange(3)), 'groups_of_rows'),
                                           (({'a': X}, np.ones(50, int)), {}, 'y')])
def test_compare_probes(args, kw, arg):
    expect_error(compare_probes, *args, module=M, arg=arg, **kw)


def test_model_identification_temperature():
    expect_error(model_identification, F, temperature=0.0, module=M, arg='temperature')


@pytest.mark.parametrize('kw, arg', [(dict(temperature=0.0), 'temperature'), (dict(temperature='hot'), 'temperature'),
                                     (dict(batch_size=0), 'batch_size'), (dict(system_prompt=' '), 'system_prompt'),
                                     (dict(system_prompt=3), 'system_prompt'), (dict(cache='yes'), 'cache')])
def test_black_box_settings(kw, arg):
    expect_error(BlackBoxLM, module=M, arg=arg, **kw)


@pytest.mark.parametrize('conv, arg', [(['Is 7 prime?', 'Yes'], 'conversation'), ('', 'conversation'), ([], 'conversation'),
                                       ([3], 'conversation'), (None, 'conversation')])
def test_conversations(conv, arg):
    expect_error(_check_turns, conv, module=M, arg=arg)
    expect_error(_check_conversations, [conv] if conv not in ([], None) else conv, module=M, arg='conversations')
