"""UNREAL (issue 36): the GCN, the geometric-imbalance measure, RBO, the pseudo-label choice, the data, the contract.

Every check compares with something computed independently: a dense normalised adjacency, a brute-force margin and RBO,
exact class counts, hand-made selection cases, the published Planetoid statistics."""
import pickle

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import torch

from contract import check_estimator_contract
from trustml_nb.unreal import (PLANETOID_SHA256, UNREAL, GCNClassifier, Graph, ReNodeGCN, renode_weights, geometric_imbalance_score, class_scores, cluster_pseudo_labels,
                               compare_node_classifiers, edge_homophily, geometric_imbalance, geometric_margin,
                               imbalanced_split, load_planetoid, make_csbm, normalized_adjacency, rank_biased_overlap,
                               render_unreal, select_pseudo_labels, unreal_explorer)


@pytest.fixture(scope='module')
def small():
    g = make_csbm(300, 4, homophily=0.85, separation=1.5, seed=5)
    return g, imbalanced_split(g.y, 10, n_per_class=20, n_minority=2, seed=1)


FAST = dict(epochs=20, show_progress=False)
FAST_UNREAL = dict(FAST, rounds=2, budget=5, n_clusters=10)


# ---- the graph ------------------------------------------------------------------------------------------------------

def test_normalized_adjacency_matches_a_dense_computation():
    rng = np.random.default_rng(0)
    n = 30
    E = rng.integers(0, n, size=(80, 2))
    A = np.zeros((n, n))
    for i, j in E:
        if i != j: A[i, j] = A[j, i] = 1
    At = A + np.eye(n)
    d = At.sum(1)
    want = At / np.sqrt(np.outer(d, d))
    np.testing.assert_allclose(normalized_adjacency(E, n).toarray(), want, atol=1e-12)
    # no self loops: isolated nodes keep a zero row instead of dividing by zero
    d0 = A.sum(1); inv = np.where(d0 > 0, d0, 1) ** -0.5 * (d0 > 0)
    np.testing.assert_allclose(normalized_adjacency(E, n, self_loops=False).toarray(), A * np.outer(inv, inv), atol=1e-12)


@pytest.mark.parametrize('edges, arg, err', [([[0, 5]], 'edges', ValueError), ([[0.5, 1]], 'edges', TypeError),
                                             ([[0, 1, 2]], 'edges', ValueError), (None, 'edges', TypeError)])
def test_bad_edges_name_the_argument(edges, arg, err):
    with pytest.raises(err, match=arg): normalized_adjacency(edges, 5)


def test_edge_homophily_by_hand():
    assert edge_homophily([[0, 1], [1, 2], [2, 3], [3, 4]], [0, 0, 1, 1, -1]) == pytest.approx(2 / 3)


# ---- data -----------------------------------------------------------------------------------------------------------

def test_csbm_has_exact_class_sizes_known_geometry_and_its_homophily():
    g = make_csbm(2000, 5, n_features=8, proportions=[0.35, 0.25, 0.2, 0.15, 0.05], homophily=0.6, mean_degree=10, seed=3)
    assert np.bincount(g.y).tolist() == [700, 500, 400, 300, 100]
    np.testing.assert_allclose(g.class_means @ g.class_means.T, np.eye(5))     # orthogonal, unit length
    assert abs(edge_homophily(g.edges, g.y) - 0.6) < 0.02
    assert abs(2 * len(g.edges) / 2000 - 10) < 0.5
    assert (g.edges[:, 0] < g.edges[:, 1]).all() and len(np.unique(g.edges, axis=0)) == len(g.edges)
    # the features' class means are the declared ones
    for c in range(5): np.testing.assert_allclose(g.X[g.y == c].mean(0), g.class_means[c], atol=0.35)
    assert np.array_equal(make_csbm(300, seed=7).X, make_csbm(300, seed=7).X)


@pytest.mark.parametrize('kw, arg', [(dict(proportions=[0.5, 0.6, 0, 0]), 'proportions'), (dict(homophily=1.5), 'homophily'),
                                     (dict(n_features=2), 'n_features'), (dict(seed=-1), 'seed')])
def test_csbm_bad_input_names_the_argument(kw, arg):
    with pytest.raises(ValueError, match=arg): make_csbm(**kw)


def test_planetoid_files_are_the_published_graphs():
    cora, cite = load_planetoid('cora'), load_planetoid('citeseer')
    # Kipf & Welling / PyG statistics: nodes, features, undirected edges, classes
    assert (cora.n_nodes, cora.X.shape[1], len(cora.edges), cora.n_classes) == (2708, 1433, 5278, 7)
    assert (cite.n_nodes, cite.X.shape[1], len(cite.edges), cite.n_classes) == (3327, 3703, 4552, 6)
    assert (cite.y == -1).sum() == 15
    assert np.bincount(cora.y).tolist() == [351, 217, 418, 818, 426, 298, 180]
    assert len(cora.val_index) == 500 and len(cora.test_index) == 1000 and cora.test_index.min() == 1708
    np.testing.assert_allclose(np.asarray(cora.X.sum(1)).ravel(), 1.0, rtol=1e-6)     # row-normalised
    assert set(PLANETOID_SHA256) == {'planetoid_cora.npz', 'planetoid_citeseer.npz', 'planetoid_pubmed.npz'}
    with pytest.raises(ValueError, match='name'): load_planetoid('pubmed_diabetes')


def test_pubmed_is_the_published_graph_with_aligned_features():
    "Sen et al. / Kipf & Welling counts; the TF-IDF rows (partly from a text dump) must still belong to their nodes."
    from sklearn.linear_model import LogisticRegression
    g = load_planetoid('pubmed', normalize=False)
    assert (g.n_nodes, g.X.shape[1], len(g.edges), g.n_classes, g.X.nnz) == (19717, 500, 44324, 3, 988031)
    assert np.bincount(g.y).tolist() == [4103, 7739, 7875]
    assert np.bincount(g.y[g.train_index]).tolist() == [20, 20, 20] and len(g.val_index) == 500 and len(g.test_index) == 1000
    assert g.test_index.min() == 18717 and (g.X.data > 0).all() and g.X.data.max() < 1.3
    # features predict the label of rows the Planetoid files lack (allx[60:]) far above chance: misaligned rows would not
    rng = np.random.default_rng(0)
    rows = rng.permutation(np.arange(60, 18717)); fit, held = rows[:3000], rows[3000:4000]
    acc = LogisticRegression(C=10, max_iter=300).fit(g.X[fit], g.y[fit]).score(g.X[held], g.y[held])
    assert acc > 0.8, acc


def test_imbalanced_split_follows_the_official_counts():
    cora = load_planetoid('cora')
    for ratio, minority in [(1, 20), (10, 2), (20, 1), (50, 1), (100, 1)]:
        y = imbalanced_split(cora.y, ratio, candidates=cora.train_index, seed=ratio)
        assert np.bincount(y[y >= 0]).tolist() == [20] * 4 + [minority] * 3
        assert set(np.flatnonzero(y >= 0)) <= set(cora.train_index.tolist())
        assert (y[y >= 0] == cora.y[y >= 0]).all()
    with pytest.raises(ValueError, match='ratio'): imbalanced_split(cora.y, 0.5)


# ---- geometric imbalance and RBO ---------------------------------------------------------------------------------------

def test_geometric_margin_matches_brute_force():
    rng = np.random.default_rng(1)
    Z, C = rng.normal(size=(50, 3)), rng.normal(size=(4, 3))
    for z, m in zip(Z, geometric_margin(Z, C)):
        d = sorted(float(np.dot(z - c, z - c)) for c in C)
        assert m == pytest.approx((d[1] - d[0]) / d[0])
    with pytest.raises(ValueError, match='centres'): geometric_margin(Z, C[:, :2])


def test_geometric_imbalance_shares_by_hand():
    Z = np.array([[1, 0], [0.9, 0.1], [0.6, 0.5], [0, 1], [0.1, 0.9]])
    y = np.array([0, 0, 0, 1, 1])
    C = np.array([[1.0, 0], [0, 1.0]])
    gi = geometric_imbalance(Z, y, centres=C, normalize=False, minority=[1])
    m = geometric_margin(Z, C)
    assert gi.table.ambiguous_share.tolist() == [np.mean(m[:3] <= 0.25), np.mean(m[3:] <= 0.25)]
    assert gi.ambiguous_share == pytest.approx(np.mean(m <= 0.25)) and gi.minority_ambiguous_share == 0.0


def _rbo_brute(a, b, p):
    return (1 - p) * sum(p ** d * len(set(a[:d + 1]) & set(b[:d + 1])) / (d + 1) for d in range(len(a)))


def test_rank_biased_overlap_matches_the_definition():
    rng = np.random.default_rng(2)
    for n in (1, 2, 5, 40):
        for _ in range(5):
            a, b = rng.permutation(n).tolist(), rng.permutation(n).tolist()
            for p in (0.2, 0.5, 0.9):
                assert rank_biased_overlap(a, b, p) == pytest.approx(_rbo_brute(a, b, p))
    assert rank_biased_overlap(list('abc'), list('xyz')) == 0
    with pytest.raises(ValueError, match='p'): rank_biased_overlap([0], [0], p=1.0)


# ---- one round's choice -------------------------------------------------------------------------------------------------

def test_select_respects_budget_alignment_and_the_filter():
    rng = np.random.default_rng(3)
    n = 60
    C = np.array([[1.0, 0.0], [0.0, 1.0]])
    ang = rng.uniform(0, np.pi / 2, n); Z = np.c_[np.cos(ang), np.sin(ang)]
    P = np.c_[np.cos(ang) ** 2, np.sin(ang) ** 2]
    L = np.zeros(n, bool); L[:4] = True
    clu = np.where(rng.uniform(size=n) < 0.7, P.argmax(1), 1 - P.argmax(1))
    nodes, labs, tab = select_pseudo_labels(P, Z, C, L, budget=5, cluster_labels=clu, threshold=0.25)
    assert not L[nodes].any() and len(set(nodes.tolist())) == len(nodes)
    assert (clu[nodes] == labs).all() and (P.argmax(1)[nodes] == labs).all()
    assert (tab.added <= 5).all() and (geometric_margin(Z[nodes], C) > 0.25).all()
    assert tab.candidates.tolist() == [int(((clu == P.argmax(1)) & (P.argmax(1) == c) & ~L).sum()) for c in (0, 1)]
    # plain self-training: the most confident nodes of each class
    nodes2, labs2, _ = select_pseudo_labels(P, Z, C, L, budget=3, threshold=None, rbo_p=None)
    for c in (0, 1):
        pool = np.flatnonzero((P.argmax(1) == c) & ~L)
        assert set(nodes2[labs2 == c]) == set(pool[np.argsort(-P[pool].max(1))[:3]])
    assert cluster_pseudo_labels(Z, clu, C, L)[:4].tolist() == [-1] * 4


# ---- the estimators --------------------------------------------------------------------------------------------------------

def test_vmf_geometric_imbalance_score_matches_loops():
    "The paper's G(u): squared distance to the own class direction over the summed squared distances between directions (ordered pairs)."
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(40, 5)); y = rng.integers(0, 4, size=40); y[:4] = [0, 1, 2, 3]; y[10] = -1
    Zn = Z / np.linalg.norm(Z, axis=1, keepdims=True)
    mu = []
    for c in range(4):
        m = np.mean([Zn[i] for i in range(40) if y[i] == c], axis=0); mu.append(m / np.linalg.norm(m))
    inter = sum(np.sum((mu[a] - mu[b]) ** 2) for a in range(4) for b in range(4) if a != b)
    want = [np.sum((Zn[i] - mu[y[i]]) ** 2) / inter if y[i] >= 0 else np.nan for i in range(40)]
    np.testing.assert_allclose(geometric_imbalance_score(Z, y), want, rtol=1e-12)
    # on the CSBM's raw features with the true directions, minority and majority nodes score alike (the ground truth ignores labels)
    g = make_csbm(800, 4, separation=2.0, seed=3)
    G = geometric_imbalance_score(g.X, g.y, centres=g.class_means / 2.0)
    assert abs(G[g.y >= 2].mean() - G[g.y < 2].mean()) < 0.05 * G.mean()
    with pytest.raises(ValueError, match='centres'): geometric_imbalance_score(Z, y, centres=np.eye(3))


# ---- ReNode (Chen et al. 2021), the published imbalance baseline ------------------------------------------------------

def _brute_force_renode(E, y, alpha=0.15, base=0.5, scale=1.0):
    "Personalised PageRank as a power series, conflict and cosine weights by explicit loops (ReNode's load_data.py)."
    n = len(y)
    A = np.eye(n)
    for i, j in E:
        if i != j: A[i, j] = A[j, i] = 1
    d = A.sum(1)
    Ah = A / np.sqrt(np.outer(d, d))
    Pi, term = np.zeros((n, n)), alpha * np.eye(n)
    for _ in range(600): Pi += term; term = (1 - alpha) * term @ Ah      # alpha sum_k ((1 - alpha) Ah)^k
    L = [v for v in range(n) if y[v] >= 0]
    K = max(y) + 1
    g = [[np.mean([Pi[i, j] for i in L if y[i] == c]) for c in range(K)] for j in range(n)]
    T = {v: sum(Pi[v, j] * sum(g[j][c] for c in range(K) if c != y[v]) for j in range(n)) for v in L}
    order = sorted(L, key=lambda v: T[v])
    w = {v: base + 0.5 * scale * (1 + np.cos(order.index(v) * np.pi / (len(L) - 1))) for v in L}
    return T, w


@pytest.mark.parametrize('seed', [0, 1, 2])
def test_renode_weights_match_a_brute_force_pagerank(seed):
    rng = np.random.default_rng(seed)
    n = 14
    E = rng.integers(0, n, size=(30, 2))
    y = rng.integers(0, 3, size=n); y[rng.choice(n, 6, replace=False)] = -1
    y[:3] = [0, 1, 2]                                                    # every class labelled
    T, w = _brute_force_renode(E, y.tolist(), alpha=0.2, base=0.3, scale=2.0)
    rn = renode_weights(E, y, restart=0.2, base_weight=0.3, scale_weight=2.0)
    L = sorted(T)
    np.testing.assert_allclose(rn.totoro[L], [T[v] for v in L], rtol=1e-9)
    np.testing.assert_allclose(rn.weight[L], [w[v] for v in L], rtol=1e-9)
    assert np.isnan(rn.totoro[y < 0]).all() and (rn.weight[y < 0] == 0).all()


def test_renode_gcn_weights_the_loss_and_unit_weights_give_the_gcn(small):
    g, y = small
    plain = GCNClassifier(**FAST).fit(g.X, y, edges=g.edges)
    flat = ReNodeGCN(**FAST, base_weight=1.0, scale_weight=0.0).fit(g.X, y, edges=g.edges)
    np.testing.assert_array_equal(flat.predict_proba(g.X, edges=g.edges), plain.predict_proba(g.X, edges=g.edges))
    rn = ReNodeGCN(**FAST).fit(g.X, y, edges=g.edges)
    np.testing.assert_allclose(rn.renode_.weight, renode_weights(g.edges, y).weight)
    assert not np.allclose(rn.predict_proba(g.X, edges=g.edges), plain.predict_proba(g.X, edges=g.edges))


@pytest.mark.parametrize('kw, arg', [(dict(restart=0.0), 'restart'), (dict(restart=1.5), 'restart'), (dict(base_weight=-1), 'base_weight')])
def test_renode_bad_settings_name_the_argument(small, kw, arg):
    g, y = small
    with pytest.raises(ValueError, match=arg): ReNodeGCN(**FAST, **kw).fit(g.X, y, edges=g.edges)


def test_renode_contract(small):
    g, y = small
    check_estimator_contract(ReNodeGCN(**FAST), fit=lambda e: e.fit(g.X, y, edges=g.edges),
                             output=lambda e: (e.predict_proba(g.X, edges=g.edges), e.renode_.weight))


def test_gcn_contract(small):
    g, y = small
    check_estimator_contract(GCNClassifier(**FAST), fit=lambda e: e.fit(g.X, y, edges=g.edges),
                             output=lambda e: e.predict_proba(g.X, edges=g.edges))


def test_unreal_contract(small):
    g, y = small
    check_estimator_contract(UNREAL(**FAST_UNREAL), fit=lambda e: e.fit(g.X, y, edges=g.edges),
                             output=lambda e: (e.predict_proba(g.X, edges=g.edges), e.labels_))


def test_fits_are_deterministic_and_leave_global_generators_alone(small):
    g, y = small
    before = (torch.random.get_rng_state(), np.random.get_state()[1].copy(), torch.get_num_threads())
    a = UNREAL(**FAST_UNREAL, seed=3).fit(g.X, y, edges=g.edges)
    b = UNREAL(**FAST_UNREAL, seed=3).fit(g.X, y, edges=g.edges)
    assert torch.equal(before[0], torch.random.get_rng_state()) and np.array_equal(before[1], np.random.get_state()[1])
    assert torch.get_num_threads() == before[2]
    np.testing.assert_array_equal(a.predict_proba(g.X, edges=g.edges), b.predict_proba(g.X, edges=g.edges))
    assert np.array_equal(a.labels_, b.labels_)
    c = UNREAL(**FAST_UNREAL, seed=4).fit(g.X, y, edges=g.edges)
    assert not np.array_equal(a.predict_proba(g.X, edges=g.edges), c.predict_proba(g.X, edges=g.edges))


def test_unreal_adds_budgeted_pseudo_labels_and_zero_rounds_is_the_gcn(small):
    g, y = small
    u = UNREAL(**FAST_UNREAL).fit(g.X, y, edges=g.edges)
    t = u.report_.table
    assert (t.added <= 5).all() and u.report_.n_labelled_end == (y >= 0).sum() + t.added.sum()
    assert ((u.labels_ >= 0) == ((y >= 0) | np.isin(np.arange(len(y)), np.flatnonzero((u.labels_ >= 0) & (y < 0))))).all()
    assert (u.labels_[y >= 0] == y[y >= 0]).all()          # given labels are never changed
    # with no rounds UNREAL is a GCN trained with the seed of "round 0" stream: same architecture, same labels
    u0 = UNREAL(**dict(FAST_UNREAL, rounds=0)).fit(g.X, y, edges=g.edges)
    assert u0.report_.n_labelled_end == (y >= 0).sum() and u0.report_.rounds_run == 0


def test_class_weight_is_the_inverse_frequency(small):
    g, y = small
    w = GCNClassifier(**FAST, class_weight='balanced').fit(g.X, y, edges=g.edges).report_.table
    counts = np.bincount(y[y >= 0])
    np.testing.assert_allclose(w.loss_weight, counts.sum() / (4 * counts))


def test_dataframe_features_are_matched_by_name(small):
    g, y = small
    F = pd.DataFrame(g.X, columns=[f'f{i}' for i in range(g.X.shape[1])])
    e = GCNClassifier(**FAST).fit(F, y, edges=g.edges)
    np.testing.assert_array_equal(e.predict_proba(F[F.columns[::-1]], edges=g.edges), e.predict_proba(F, edges=g.edges))
    with pytest.raises(ValueError, match='f0'): e.predict(F.rename(columns={'f0': 'zz'}), edges=g.edges)


def test_sparse_features_give_the_dense_result(small):
    g, y = small
    d = GCNClassifier(**FAST).fit(g.X, y, edges=g.edges).predict_proba(g.X, edges=g.edges)
    s = GCNClassifier(**FAST).fit(sp.csr_matrix(g.X), y, edges=g.edges).predict_proba(sp.csr_matrix(g.X), edges=g.edges)
    np.testing.assert_allclose(s, d, atol=1e-4)


@pytest.mark.parametrize('make, arg', [(lambda g, y: GCNClassifier(epochs=0).fit(g.X, y, edges=g.edges), 'epochs'),
                                       (lambda g, y: UNREAL(rbo_p=1.5).fit(g.X, y, edges=g.edges), 'rbo_p'),
                                       (lambda g, y: UNREAL(class_weight='inverse').fit(g.X, y, edges=g.edges), 'class_weight'),
                                       (lambda g, y: GCNClassifier().fit(g.X, y[:-1], edges=g.edges), 'y'),
                                       (lambda g, y: GCNClassifier().fit(g.X, np.where(y >= 0, 0, -1), edges=g.edges), 'y'),
                                       (lambda g, y: GCNClassifier().fit(np.where(np.eye(len(y), g.X.shape[1]) > 0, np.nan, g.X), y, edges=g.edges), 'X'),
                                       (lambda g, y: GCNClassifier().fit(g.X, y.astype(float) + 0.5, edges=g.edges), 'y'),
                                       (lambda g, y: GCNClassifier().fit(g.X, y), 'edges')])
def test_bad_input_names_the_argument(small, make, arg):
    g, y = small
    with pytest.raises((TypeError, ValueError), match=arg): make(g, y)


def test_pickle_keeps_predictions(small):
    g, y = small
    e = GCNClassifier(**FAST).fit(g.X, y, edges=g.edges)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(e)).predict(g.X, edges=g.edges), e.predict(g.X, edges=g.edges))


# ---- scores, comparison, explorer ---------------------------------------------------------------------------------------------

def test_class_scores_match_sklearn():
    from sklearn.metrics import balanced_accuracy_score, f1_score
    rng = np.random.default_rng(4)
    t, p = rng.integers(0, 5, 200), rng.integers(0, 5, 200)
    s = class_scores(t, p, minority=[3, 4])
    assert s.balanced_accuracy == pytest.approx(balanced_accuracy_score(t, p))
    assert s.macro_f1 == pytest.approx(f1_score(t, p, average='macro'))
    assert s.minority_accuracy == pytest.approx(np.mean([np.mean(p[t == c] == c) for c in (3, 4)]))


def test_compare_and_explorer_headless(small):
    g, y = small
    r = compare_node_classifiers(g, y, {'GCN': GCNClassifier(**FAST), 'UNREAL': UNREAL(**FAST_UNREAL)}, minority=[2, 3])
    assert r.table.method.tolist() == ['GCN', 'UNREAL'] and r.n_evaluated == int((y < 0).sum())
    assert set(r.per_class['class']) == {0, 1, 2, 3}
    with pytest.raises(TypeError, match='graph'): compare_node_classifiers(g.X, y, {'GCN': GCNClassifier()})
    rep, fig = render_unreal(ratio=5, homophily=0.7, n_nodes=200, epochs=10, rounds=1)
    assert rep.n_labelled == 2 * 20 + 2 * 4
    ex = unreal_explorer(n_nodes=200, epochs=10, rounds=1)
    first = ex.n_renders
    ex.controls['threshold'].value = 0.5          # a slow control: waits for Run
    assert ex.n_renders == first
    ex.on_run()
    assert ex.n_renders == first + 1 and ex.report.table.method.tolist() == ['GCN', 'UNREAL']
