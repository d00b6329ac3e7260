"""Monoculture or multiplicity (issue 22): every measure against something it did not compute itself.

The Poisson-binomial recursion against enumeration of all 2^M patterns (M <= 10), scipy's binomial pmf and the
discrete Fourier inversion of the probability generating function (M = 50); the exclusion, recourse and unanimity
numbers and the three nulls against plain per-person loops and enumerated mixtures; kappa against scikit-learn and error
correlation against numpy; the Rashomon set against brute force; bootstrap weights against explicitly repeated rows;
independent simulated models against the independent null; the estimator contract of ModelEcosystem; the widget headless.
Prompt multiplicity: the shipped language-model answers against their checksum and against the tasks' people serialised
anew; their decisions and measures against a recomputation by ranks, loops and products; a slow test asks the model live.
"""
import functools
import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom
from sklearn.metrics import cohen_kappa_score

from contract import check_estimator_contract
from trustml_nb.monoculture import (NULLS, EcosystemReport, ModelEcosystem, _ecosystem_numbers, bootstrap_ecosystem, check_decisions,
                                    ecosystem_explorer, error_correlation, measure_ecosystem, null_strata, pairwise_agreement, pairwise_kappa,
                                    plot_position, plot_rejection_counts, poisson_binomial_enumerate, poisson_binomial_pmf, rashomon_measures,
                                    rashomon_set, render_ecosystem)
from trustml_nb.monoculture import (LLM_FEATURES, LLM_QUESTIONS, LLM_SCORES_FILE, LLM_SCORES_SHA256, PROMPT_TEMPLATES, ask_templates,
                                    build_prompts, load_prompt_multiplicity, serialize_rows, threshold_decisions)


def _world(n=400, M=6, seed=0):
    "A small labelled ecosystem with correlated models, two groups and a difficulty score."
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    latent = rng.normal(size=n) + 1.2 * y
    H = pd.DataFrame({f"m{j}": (latent + rng.normal(scale=0.8, size=n) > 0.3 + 0.1 * j).astype(int) for j in range(M)})
    G = pd.DataFrame({'a': rng.uniform(size=n) < 0.4}); G['b'] = ~G['a']
    return y, H, G, latent


# ---------------------------------------------------------------- the Poisson-binomial recursion
@pytest.mark.parametrize('M', range(1, 11))
def test_recursion_equals_enumeration(M):
    rng = np.random.default_rng(M)
    for _ in range(30):
        p = rng.uniform(size=M)
        p[rng.uniform(size=M) < 0.15] = rng.integers(0, 2)
        assert np.abs(poisson_binomial_pmf(p) - poisson_binomial_enumerate(p)).max() <= 1e-12


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=10))
def test_recursion_equals_enumeration_property(p):
    assert np.abs(poisson_binomial_pmf(p) - poisson_binomial_enumerate(p)).max() <= 1e-12


def _pmf_fourier(p):
    "P(K = k) by inverting the probability generating function at the M + 1 roots of unity (shares no code with the recursion)."
    p = np.asarray(p, float); M = len(p)
    w = np.exp(2j * np.pi * np.arange(M + 1) / (M + 1))
    pgf = np.prod(1 - p[None, :] + p[None, :] * w[:, None], axis=1)
    return np.real(np.fft.fft(pgf)) / (M + 1)


def test_recursion_against_binomial_and_fourier():
    assert np.abs(poisson_binomial_pmf(np.full(50, 0.3)) - binom.pmf(np.arange(51), 50, 0.3)).max() < 1e-13
    p = np.random.default_rng(1).uniform(size=50)
    assert np.abs(poisson_binomial_pmf(p) - _pmf_fourier(p)).max() < 1e-13
    P = np.random.default_rng(2).uniform(size=(4, 12))
    rows = poisson_binomial_pmf(P)
    assert rows.shape == (4, 13) and all(np.abs(rows[i] - poisson_binomial_enumerate(P[i])).max() <= 1e-12 for i in range(4))
    big = poisson_binomial_pmf(np.random.default_rng(3).uniform(size=500))
    assert abs(big.sum() - 1) < 1e-12 and (big >= 0).all()


def test_a_wrong_recursion_would_be_caught():
    "The enumeration is a genuine reference: a recursion that drops the (1 - p) factor differs from it."
    p = np.array([0.3, 0.6, 0.2])
    wrong = np.zeros(4); wrong[0] = 1
    for j, pj in enumerate(p): wrong[1:j + 2] = wrong[1:j + 2] + wrong[0:j + 1] * pj
    assert np.abs(wrong - poisson_binomial_enumerate(p)).max() > 0.1


# ---------------------------------------------------------------- pairwise measures
def test_pairwise_measures_against_peers():
    y, H, _, _ = _world()
    A, K, E = pairwise_agreement(H), pairwise_kappa(H), error_correlation(y, H)
    for a, b in itertools.combinations(H.columns, 2):
        assert abs(A.loc[a, b] - np.mean(H[a] == H[b])) < 1e-12
        assert abs(K.loc[a, b] - cohen_kappa_score(H[a], H[b])) < 1e-12
    assert np.abs(E.to_numpy() - np.corrcoef((H.to_numpy() != y[:, None]).T)).max() < 1e-12
    # two identical constant columns: agreement 1, kappa 1 (scikit-learn returns NaN there)
    const = pd.DataFrame({'x': np.ones(10, int), 'z': np.ones(10, int)})
    assert pairwise_kappa(const).loc['x', 'z'] == 1.0


def test_error_correlation_of_a_perfect_model_is_reported():
    from trustml_nb.core import NumericalWarning
    y = np.array([0, 1, 0, 1, 1, 0])
    H = pd.DataFrame({'perfect': y, 'noisy': [1, 1, 0, 0, 1, 0]})
    with pytest.warns(NumericalWarning, match='perfect'):
        E = error_correlation(y, H)
    assert E.loc['perfect', 'noisy'] == 0 and np.isfinite(E.to_numpy()).all()


# ---------------------------------------------------------------- exclusion, recourse, nulls
def _loops(y, H):
    "Systemic exclusion, recourse and unanimity by plain loops over people and models."
    D = H.to_numpy(); n, M = D.shape
    rejected_by = [sum(1 for m in range(M) if D[i, m] == 0) for i in range(n)]
    se = sum(1 for k in rejected_by if k == M) / n
    q = [i for i in range(n) if y[i] == 1]
    se_q = sum(1 for i in q if rejected_by[i] == M) / len(q)
    with_other = sum(1 for i in range(n) for m in range(M) if D[i, m] == 0 and any(D[i, o] == 1 for o in range(M) if o != m))
    recourse = with_other / sum(rejected_by)
    unan = sum(1 for k in rejected_by if k in (0, M)) / n
    return se, se_q, recourse, unan


def _null_by_enumeration(H, strata):
    "The null's distribution of the number of rejections: enumerate each stratum's Poisson-binomial and mix."
    R = 1 - H.to_numpy(); out = np.zeros(H.shape[1] + 1)
    for b in np.unique(strata):
        rows = strata == b
        out += rows.mean() * poisson_binomial_enumerate(R[rows].mean(0))
    return out


@pytest.mark.parametrize('null', NULLS)
def test_measures_against_loops_and_enumerated_nulls(null):
    y, H, G, latent = _world()
    rep = measure_ecosystem(y, H, G, null=null, difficulty=latent, n_bins=4)
    se, se_q, recourse, unan = _loops(y, H)
    assert abs(rep.systemic_exclusion - se) < 1e-12 and abs(rep.systemic_exclusion_qualified - se_q) < 1e-12
    assert abs(rep.recourse - recourse) < 1e-12 and abs(rep.unanimity - unan) < 1e-12
    strata = {'independent': np.zeros(len(y), int), 'label': y,
              'difficulty': pd.qcut(latent, 4, labels=False)}[null]
    pmf = _null_by_enumeration(H, strata)
    M = H.shape[1]
    assert np.abs(rep.rejection_counts['null'].to_numpy() - pmf).max() < 1e-12
    assert abs(rep.systemic_exclusion_null - pmf[M]) < 1e-12 and abs(rep.unanimity_null - pmf[0] - pmf[M]) < 1e-12
    k = np.arange(M + 1)
    assert abs(rep.recourse_null - (k[:M] * pmf[:M]).sum() / (k * pmf).sum()) < 1e-12
    qual = _null_by_enumeration(H[y == 1], strata[y == 1])
    assert abs(rep.systemic_exclusion_qualified_null - qual[M]) < 1e-12
    # observed counts
    assert np.allclose(rep.rejection_counts['observed'], np.bincount((1 - H.to_numpy()).sum(1), minlength=M + 1) / len(y))
    # per-group rows equal the measure on that group's rows alone
    for g in G.columns:
        m = G[g].to_numpy()
        sub = measure_ecosystem(y[m], H[m], null=null, difficulty=latent[m] if null == 'difficulty' else None, n_bins=4)
        row = rep.table.set_index('group').loc[g]
        assert abs(row.systemic_exclusion - sub.systemic_exclusion) < 1e-12 and abs(row.recourse - sub.recourse) < 1e-12
        if null != 'difficulty':   # the difficulty bins are cut on all rows, not on the group's
            assert abs(row.systemic_exclusion_null - sub.systemic_exclusion_null) < 1e-12


def test_agreement_null_is_the_independent_formula():
    "Independent agreement of two models = a1 a2 + (1 - a1)(1 - a2) (the authors' code, per the addendum)."
    y, H, _, _ = _world()
    rep = measure_ecosystem(y, H, null='independent')
    a = H.mean(axis=0)
    for r in rep.pairs.itertuples():
        assert abs(r.agreement_null - (a[r.model_a] * a[r.model_b] + (1 - a[r.model_a]) * (1 - a[r.model_b]))) < 1e-12
    assert abs(rep.mean_agreement - rep.pairs['agreement'].mean()) < 1e-12
    assert abs(rep.mean_agreement_null - rep.pairs['agreement_null'].mean()) < 1e-12


def test_one_difficulty_bin_is_the_independent_null():
    y, H, G, latent = _world()
    a = measure_ecosystem(y, H, G, null='independent'); b = measure_ecosystem(y, H, G, null='difficulty', difficulty=latent, n_bins=1)
    assert a.systemic_exclusion_null == b.systemic_exclusion_null and a.homogenization == b.homogenization


def test_simulated_independent_models_match_the_null():
    rng = np.random.default_rng(5); n = 50000
    rates = np.linspace(0.2, 0.7, 8)
    H = pd.DataFrame({f"m{j}": (rng.uniform(size=n) < r).astype(int) for j, r in enumerate(rates)})
    rep = measure_ecosystem(None, H)
    truth = poisson_binomial_enumerate(1 - rates)
    sd = np.sqrt(truth * (1 - truth) / n)
    assert (np.abs(rep.rejection_counts['observed'] - truth) < 5 * sd + 1e-12).all()
    assert abs(rep.homogenization) < 0.01 and rep.verdict == 'closer to multiplicity'


def test_clones_are_a_monoculture():
    one = (np.random.default_rng(6).uniform(size=500) < 0.3).astype(int)
    rep = measure_ecosystem(None, pd.DataFrame({f"c{j}": one for j in range(5)}))
    assert rep.homogenization == 1 and rep.recourse == 0 and rep.verdict == 'closer to monoculture'
    assert abs(rep.systemic_exclusion - (1 - one.mean())) < 1e-12 and abs(rep.systemic_exclusion_null - (1 - one.mean()) ** 5) < 1e-12
    assert rep.rashomon_size == 0 and np.isnan(rep.ambiguity) and any('no labels' in n for n in rep.notes)


def test_null_strata():
    assert (null_strata('independent', n_rows=5) == 0).all()
    assert list(null_strata('label', y_true=[0, 1, 1])) == [0, 1, 1]
    d = np.arange(100.0)
    assert np.array_equal(null_strata('difficulty', difficulty=d, n_bins=4), np.repeat(np.arange(4), 25))


# ---------------------------------------------------------------- Rashomon set
def test_rashomon_against_brute_force():
    y, H, _, _ = _world(n=200, M=7, seed=3)
    D = H.to_numpy()
    for eps in (0.0, 0.01, 0.03, 0.1, 1.0):
        acc = [np.mean(D[:, m] == y) for m in range(D.shape[1])]
        members = [m for m in range(D.shape[1]) if acc[m] >= max(acc) - eps - 1e-12]
        best = int(np.argmax(acc))
        amb = np.mean([len({D[i, m] for m in members}) > 1 for i in range(len(y))])
        disc = max(np.mean([D[i, m] != D[i, best] for i in range(len(y))]) for m in members)
        got = rashomon_measures(y, H, eps)
        assert list(np.flatnonzero(rashomon_set(y, H, eps))) == members
        assert got['rashomon_size'] == len(members) and abs(got['ambiguity'] - amb) < 1e-12 and abs(got['discrepancy'] - disc) < 1e-12


# ---------------------------------------------------------------- bootstrap
def test_bootstrap_weights_equal_repeated_rows():
    "A resample as weights gives exactly the numbers of the resample as repeated rows."
    y, H, _, latent = _world()
    R = 1.0 - H.to_numpy(float); rng = np.random.default_rng(0)
    idx = rng.integers(0, len(y), len(y)); w = np.bincount(idx, minlength=len(y)).astype(float)
    for null in NULLS:
        strata = null_strata(null, y, latent, 4, n_rows=len(y))
        a = _ecosystem_numbers(R, y, strata, w); b = _ecosystem_numbers(R[idx], y[idx], strata[idx])
        assert all(abs(a[k] - b[k]) < 1e-12 for k in a), null


def test_bootstrap_intervals():
    y, H, _, latent = _world()
    a = bootstrap_ecosystem(y, H, null='label', n_boot=60, seed=1, show_progress=False)
    b = bootstrap_ecosystem(y, H, null='label', n_boot=60, seed=1, show_progress=False)
    assert a.table.equals(b.table)
    t = a.table.set_index('measure')
    assert ((t.ci_low <= t.estimate + 1e-12) & (t.estimate <= t.ci_high + 1e-12)).all()
    assert ((t.null_low <= t.null_high)).all() and np.isfinite(t.to_numpy(float)).all()
    rep = measure_ecosystem(y, H, null='label')
    assert abs(t.loc['systemic_exclusion', 'estimate'] - rep.systemic_exclusion) < 1e-12
    assert abs(t.loc['systemic_exclusion', 'null'] - rep.systemic_exclusion_null) < 1e-12


# ---------------------------------------------------------------- the estimator
def _typed(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({'age': rng.integers(18, 70, n), 'hours': rng.normal(40, 8, n),
                      'job': pd.Categorical(rng.choice(['a', 'b', 'c'], n)), 'owner': rng.uniform(size=n) < 0.4})
    logit = 0.05 * (X['age'] - 40) + 0.08 * (X['hours'] - 40) + (X['job'] == 'a') * 0.8
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(int).to_numpy()
    return X, y


def test_model_ecosystem_contract():
    X, y = _typed()
    check_estimator_contract(ModelEcosystem(n_models=5, seed=2, show_progress=False), fit=lambda est: est.fit(X, y),
                             output=lambda est: est.predict_proba(X))


def test_model_ecosystem_decisions():
    X, y = _typed()
    eco = ModelEcosystem(n_models=7, thresholds=(0.3, 0.7), seed=0, show_progress=False).fit(X, y)
    P, D = eco.predict_proba(X), eco.predict(X)
    thr = eco.report_.table['threshold'].to_numpy()
    assert list(thr) == [0.3] * 5 + [0.7] * 2 and list(eco.report_.table['family']) == list(ModelEcosystem().families) + ['logistic', 'boosting']
    assert D.equals((P >= thr).astype(np.int8)) and list(D.columns) == list(eco.report_.table['model'])
    assert eco.predict(X[['owner', 'job', 'hours', 'age']]).equals(D)      # columns matched by name
    # each model really uses only its own features: permuting a feature it does not see changes nothing
    t = eco.report_.table.iloc[0]; unseen = [c for c in X.columns if c not in t.features.split(', ')]
    if unseen:
        X2 = X.copy(); X2[unseen[0]] = X2[unseen[0]].sample(frac=1, random_state=0).to_numpy()
        assert np.array_equal(eco.predict_proba(X2)[t.model], P[t.model])


# ---------------------------------------------------------------- pictures and the widget
def test_plots_and_widget():
    y, H, G, latent = _world()
    rep = measure_ecosystem(y, H, G)
    assert isinstance(rep, EcosystemReport)
    ax = plot_rejection_counts(rep); assert len(ax.patches) == H.shape[1] + 1
    plot_position(rep)
    S = pd.DataFrame(1 / (1 + np.exp(-(latent[:, None] + np.random.default_rng(0).normal(scale=0.8, size=H.shape)))), columns=H.columns)
    head, fig, r = render_ecosystem(y, S, G, epsilon=1.0, threshold=0.5)
    ref = measure_ecosystem(y, (S >= 0.5).astype(int), G, epsilon=1.0)
    assert r.n_models == H.shape[1] and abs(r.systemic_exclusion - ref.systemic_exclusion) < 1e-12 and 'epsilon 1.000' in head
    ex = ecosystem_explorer(y, S, G)
    assert ex.report.epsilon == 0.02 and ex.report.null == 'independent'
    ex.controls['epsilon'].value = 0.1; wide = ex.report.n_models
    ex.controls['epsilon'].value = 0.0; narrow = ex.report.n_models
    assert narrow <= wide and narrow >= 2
    ex.controls['null'].value = 'label'
    assert ex.report.null == 'label' and ex.error is None
    ex.controls['threshold'].value = 0.7
    direct = render_ecosystem(y, S, G, epsilon=0.0, threshold=0.7, null='label')[2]
    assert ex.report.systemic_exclusion == direct.systemic_exclusion and ex.report.n_models == direct.n_models


def test_check_decisions_names_and_values():
    D = check_decisions(np.array([[True, False], [False, False]]))
    assert list(D.columns) == ['model 0', 'model 1'] and D.to_numpy().tolist() == [[1, 0], [0, 0]]
    assert list(check_decisions(pd.DataFrame({'x': [0, 1], 'z': [1, 1]})).columns) == ['x', 'z']


# ---------------------------------------------------------------- prompt multiplicity (the shipped language-model answers)
@functools.lru_cache(maxsize=None)
def _lm_tasks():
    "The monoculture notebook's two tasks: (fitting split, evaluated split) per task."
    from trustml_nb.core import DroppedRowsWarning, quiet
    from trustml_nb.data import adult_task, german_task
    with quiet(DroppedRowsWarning):
        adult = adult_task({'train': 3000, 'eval': None}, max_rows=5000, sensitive=('sex', 'race_binary'), seed=0)
    german = german_task({'fit': 600, 'eval': None}, seed=0)
    return {'adult': (adult.train, adult.eval), 'german': (german.fit, german.eval)}


def test_llm_cache_checksum_is_verified(tmp_path, monkeypatch):
    import hashlib
    import trustml_nb.data as data
    path = data.dataset_path(LLM_SCORES_FILE)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == LLM_SCORES_SHA256
    damaged = bytearray(path.read_bytes()); damaged[len(damaged) // 2] ^= 0x01
    (tmp_path / LLM_SCORES_FILE).write_bytes(bytes(damaged))
    monkeypatch.setattr(data, 'package_data_dir', lambda: tmp_path)   # the loader now finds the damaged copy
    with pytest.raises(data.ChecksumError, match=LLM_SCORES_FILE):
        load_prompt_multiplicity('adult')


@pytest.mark.parametrize('task', ['adult', 'german'])
def test_llm_cache_rows_are_the_tasks_people_serialised(task):
    fit, ev = _lm_tasks()[task]
    d = load_prompt_multiplicity(task)
    rows = d['eval_index']
    np.testing.assert_array_equal(rows, np.arange(len(rows)))   # the first evaluated people, in order
    np.testing.assert_array_equal(d['task_rows'], ev.rows[rows])
    assert d['records'] == serialize_rows(ev.X.iloc[rows], LLM_FEATURES[task])
    for i in (0, len(rows) - 1):   # and by hand, from the raw values
        assert d['records'][i] == '\n'.join(f"{w}: {ev.X.iloc[i][c]}" for c, w in LLM_FEATURES[task].items())
    assert d['templates'] == PROMPT_TEMPLATES and d['question'] == LLM_QUESTIONS[task] and d['features'] == LLM_FEATURES[task]
    assert len(rows) >= 100 and list(d['p_yes'].columns) == list(PROMPT_TEMPLATES)
    assert ((d['p_yes'] > 0) & (d['p_yes'] < 1)).all().all()


@pytest.mark.parametrize('task', ['adult', 'german'])
def test_llm_measures_against_an_independent_recomputation(task):
    fit, ev = _lm_tasks()[task]
    d = load_prompt_multiplicity(task)
    P = d['p_yes'].to_numpy(); n, M = P.shape; share = float(fit.y.mean())
    D = threshold_decisions(d['p_yes'], accept_share=share)
    k = n - int(np.ceil((1 - share) * (n - 1)))   # each template accepts its k highest P(yes)
    top = np.zeros((n, M), int)
    for j in range(M): top[np.argsort(-P[:, j], kind='stable')[:k], j] = 1
    np.testing.assert_array_equal(D.to_numpy(), top)
    assert list(D.columns) == list(PROMPT_TEMPLATES)
    y = ev.y[d['eval_index']]
    ind, lab = measure_ecosystem(y, D, null='independent'), measure_ecosystem(y, D, null='label')
    R = 1 - top; K = R.sum(1); r = R.mean(0)
    assert ind.systemic_exclusion == pytest.approx(np.mean(K == M), abs=1e-12)
    assert ind.systemic_exclusion_qualified == pytest.approx(np.mean(K[y == 1] == M), abs=1e-12)
    assert ind.systemic_exclusion_null == pytest.approx(np.prod(r), abs=1e-15)            # rejection at random, 4 models
    assert ind.unanimity == pytest.approx(np.mean((K == 0) | (K == M)), abs=1e-12)
    assert ind.unanimity_null == pytest.approx(np.prod(r) + np.prod(1 - r), abs=1e-12)
    assert lab.systemic_exclusion_null == pytest.approx(sum(np.mean(y == c) * np.prod(R[y == c].mean(0)) for c in (0, 1)), abs=1e-12)
    assert ind.recourse == pytest.approx(sum(K[i] for i in range(n) if K[i] < M) / K.sum(), abs=1e-12)
    pairs = list(itertools.combinations(range(M), 2))
    assert ind.mean_agreement == pytest.approx(np.mean([np.mean(top[:, a] == top[:, b]) for a, b in pairs]), abs=1e-12)
    assert ind.mean_kappa == pytest.approx(np.mean([cohen_kappa_score(top[:, a], top[:, b]) for a, b in pairs]), abs=1e-12)
    np.testing.assert_allclose(ind.models['accuracy'].to_numpy(), (top == y[:, None]).mean(0), atol=1e-12)


def test_threshold_decisions_against_ranks():
    rng = np.random.default_rng(4)
    S = pd.DataFrame(rng.uniform(0.2, 0.5, size=(57, 3)), columns=['a', 'b', 'c'])
    for share in (0.1, 0.25, 0.5, 0.7033, 0.9):
        D = threshold_decisions(S, accept_share=share)
        k = 57 - int(np.ceil((1 - share) * 56))
        ranks = S.rank(ascending=False).to_numpy()
        np.testing.assert_array_equal(D.to_numpy(), (ranks <= k).astype(int))
        assert (D.sum(axis=0) == k).all() and abs(k - share * 57) <= 1
    np.testing.assert_array_equal(threshold_decisions(S, rule='fixed', threshold=0.35).to_numpy(), (S.to_numpy() >= 0.35).astype(int))
    assert list(threshold_decisions(S.to_numpy()).columns) == ['model 0', 'model 1', 'model 2']


def test_threshold_decisions_honour_the_share_when_scores_tie():
    "Issue 33: rows tied at the cut were all accepted (30% asked, 100% accepted); a seeded lottery among them now fills the share."
    rng = np.random.default_rng(2)
    S = pd.DataFrame({'flat': np.full(20, 0.4), 'steps': np.repeat([0.2, 0.5, 0.8, 0.9], 5), 'mixed': rng.choice([0.3, 0.6], 20)})
    for share in (0.1, 0.3, 0.5, 0.71):
        k = 20 - int(np.ceil((1 - share) * 19))
        D = threshold_decisions(S, accept_share=share, seed=3)
        assert (D.sum(axis=0) == k).all(), (share, D.sum(axis=0).tolist(), k)
        for c in S:                                    # accepted = the k best, up to ties: nobody below an accepted-tied score
            s, d = S[c].to_numpy(), D[c].to_numpy()
            assert s[d == 1].min() >= s[d == 0].max() if (d == 0).any() else True
        assert D.equals(threshold_decisions(S, accept_share=share, seed=3))
    draws = {tuple(threshold_decisions(S, accept_share=0.3, seed=s)['flat']) for s in range(20)}
    assert len(draws) > 10                              # a lottery, not "the first rows"
    counts = sum(threshold_decisions(S, accept_share=0.3, seed=s)['flat'].to_numpy(int) for s in range(400))
    assert counts.min() > 0.3 * 400 * 0.6 and counts.max() < 0.3 * 400 * 1.4   # every tied row has about the same chance (0.3)


def test_bootstrap_interval_is_the_central_percentile_interval():
    "Issue 33 item 9: the interval is at the (1 - level)/2 and (1 + level)/2 quantiles of the resampled statistic, recomputed here."
    y, H, _, _ = _world(n=150, M=5, seed=3)
    level, n_boot = 0.8, 200
    out = bootstrap_ecosystem(y, H, null='independent', n_boot=n_boot, level=level, seed=11, show_progress=False).table.set_index('measure')
    R = 1 - H.to_numpy(); n, M = R.shape; K = R.sum(1)
    rng = np.random.default_rng(11); unan, se, agree = [], [], []
    for _ in range(n_boot):                       # the same resamples of people, each statistic by a plain loop over them
        w = rng.multinomial(n, np.full(n, 1 / n))
        people = np.repeat(np.arange(n), w)
        unan.append(np.mean([(K[i] == 0) or (K[i] == M) for i in people]))
        se.append(np.mean([K[i] == M for i in people]))
        agree.append(np.mean([np.mean([R[i, a] == R[i, b] for a, b in itertools.combinations(range(M), 2)]) for i in people]))
    for name, draws in (('unanimity', unan), ('systemic_exclusion', se), ('mean_agreement', agree)):
        lo, hi = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
        assert out.loc[name, 'ci_low'] == pytest.approx(lo, abs=1e-12), name
        assert out.loc[name, 'ci_high'] == pytest.approx(hi, abs=1e-12), name
    assert np.mean((np.array(unan) >= out.loc['unanimity', 'ci_low']) & (np.array(unan) <= out.loc['unanimity', 'ci_high'])) >= level


def test_prompts_reach_the_model_unchanged():
    X = pd.DataFrame({'age': [39, 50, 23], 'job': pd.Categorical(['clerk', 'farmer', 'clerk'])})
    words = {'job': 'occupation', 'age': 'age'}
    seen = []
    class Echo:
        def yes_probability(self, prompts): seen.append(list(prompts)); return np.linspace(0.1, 0.9, len(prompts))
    S = ask_templates(Echo(), X, words, 'Rich?')
    assert seen == [[t.format(question='Rich?', record=f"occupation: {j}\nage: {a}", sentence=f"occupation is {j}, age is {a}")
                     for j, a in zip(X['job'], X['age'])] for t in PROMPT_TEMPLATES.values()]
    assert S.shape == (3, 4) and list(S.columns) == list(PROMPT_TEMPLATES) and np.allclose(S.iloc[:, 2], [0.1, 0.5, 0.9])
    assert build_prompts(X.iloc[:1], words, 'Q?', '{question} {record}') == ['Q? occupation: clerk\nage: 39']


@pytest.mark.skipif(not __import__('trustml_nb.llm', fromlist=['llm_available']).llm_available(), reason="the llm extra is not installed")
@pytest.mark.slow
def test_llm_cache_equals_the_live_model_on_the_first_chunk():
    import torch
    from trustml_nb.llm import BlackBoxLM
    torch.set_num_threads(1)   # as benchmarks/make_monoculture_llm.py ran: float32 sums depend on threads and batch shapes
    fit, ev = _lm_tasks()['german']
    live = ask_templates(BlackBoxLM(cache=False, show_progress=False), ev.X.iloc[:16], LLM_FEATURES['german'], LLM_QUESTIONS['german'])
    np.testing.assert_allclose(live.to_numpy(), load_prompt_multiplicity('german')['p_yes'].to_numpy()[:16], atol=1e-5, rtol=0)
