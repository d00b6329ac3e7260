"""Fair online matroid selection (issue 21): every result checked against something the code did not produce:
brute-force ranks and Nash-Williams, vertex-subset arboricity of graphs, networkx forests and k-cores, GF(2) spans,
binomial closed forms, symmetry, an independent first-fit, and Monte Carlo runs of the online selectors."""
import itertools
import math

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contract import check_report
from trustml_nb.matroid_selection import (FAMILIES, SELECTORS, AcceptanceReport, ArboricityReport, BinaryMatroid, ColouringSelector,
                                          DoublingColouringSelector, GraphicMatroid, GraphicRandomOrderSelector, GreedySelector,
                                          LaminarColouringSelector, LaminarMatroid, OfflineOptimum, OrderSearchReport,
                                          PartitionMatroid, RandomAcceptanceSelector, UniformMatroid, acceptance_probabilities,
                                          adversarial_order_search, arboricity, arboricity_brute_force, degeneracy_ordering,
                                          doubling_colour_law, first_fit_colouring, funding_example, matroid_partition,
                                          random_matroid, render_selection, selection_explorer, simulate_acceptance, subset_ranks)

K4 = GraphicMatroid(list(itertools.combinations(range(4), 2)))


def members(S, n): return [e for e in range(n) if S >> e & 1]


# ---------------------------------------------------------------- rank and arboricity
def test_arboricity_partition_agrees_with_brute_force_on_500_random_matroids():
    seen = set()
    for i in range(500):
        M = random_matroid(FAMILIES[i % 5], 4 + i % 7, seed=10_000 + i)
        rep = arboricity(M, show_progress=False)
        brute, dense = arboricity_brute_force(M)
        assert rep.arboricity == brute, (M.family, M.n_elements, i)
        assert math.ceil(len(dense) / M.rank(dense)) == brute
        assert all(M.is_independent(p) for p in rep.partition) and sorted(sum(rep.partition, ())) == list(range(M.n_elements))
        assert math.ceil(len(rep.densest_set) / rep.densest_rank) == rep.arboricity
        seen.add((M.family, brute))
    assert {f for f, _ in seen} == set(FAMILIES) and max(a for _, a in seen) >= 4


def test_graphic_arboricity_matches_vertex_subset_nash_williams():
    "Nash-Williams for graphs: max over vertex sets of ceil(edges inside / (vertices - 1)), computed on the graph, not the matroid."
    for seed in range(60):
        M = random_matroid('graphic', 5 + seed % 6, seed=seed)
        V = list(M.vertices)
        best = 1
        for size in range(2, len(V) + 1):
            for W in itertools.combinations(V, size):
                inside = sum(u in W and v in W for u, v in M.edges)
                best = max(best, -(-inside // (size - 1)))
        assert arboricity(M, show_progress=False).arboricity == best


def test_closed_forms_of_arboricity():
    for n, k in [(7, 3), (10, 1), (5, 5), (9, 4)]: assert arboricity(UniformMatroid(n, k)).arboricity == math.ceil(n / k)
    P = PartitionMatroid(list('aaaaabbbc'), {'a': 2, 'b': 1, 'c': 1})
    assert arboricity(P).arboricity == 3                          # max(ceil(5/2), ceil(3/1), 1)
    Kn = {n: GraphicMatroid(list(itertools.combinations(range(n), 2))) for n in (3, 4, 5, 6, 7)}
    for n, M in Kn.items(): assert arboricity(M).arboricity == math.ceil(n / 2)   # K_n: ceil(n(n-1)/2 / (n-1))


def test_greedy_rank_equals_brute_force_and_graph_and_gf2_ranks():
    for i in range(40):
        M = random_matroid(FAMILIES[i % 5], 5 + i % 4, seed=i)
        R = subset_ranks(M)
        for S in range(1 << M.n_elements): assert M.rank(members(S, M.n_elements)) == R[S]
    for seed in range(20):                                                  # graphic: |V| - components, by networkx
        M = random_matroid('graphic', 8, seed=seed); g = nx.MultiGraph(M.edges)
        assert M.rank() == g.number_of_nodes() - nx.number_connected_components(g)
    for seed in range(20):                                                  # binary: the span has 2**rank vectors
        M = random_matroid('binary', 7, seed=seed)
        span = {0}
        for c in M.columns: span |= {x ^ c for x in span}
        assert 2 ** M.rank() == len(span)


def test_arboricity_report_is_a_documented_frozen_report():
    rep = arboricity(K4)
    assert isinstance(rep, ArboricityReport); check_report(rep)
    assert rep.table['part'].nunique() == 2


# ---------------------------------------------------------------- first-fit, degeneracy, the colour law
def naive_first_fit(M, order):
    classes, colour = [], {}
    for e in order:
        for j, C in enumerate(classes):
            if M.is_independent(C + [e]): C.append(e); colour[e] = j + 1; break
        else: classes.append([e]); colour[e] = len(classes)
    return np.array([colour[e] for e in range(M.n_elements)])


def test_first_fit_matches_an_independent_implementation_and_classes_are_forests():
    rng = np.random.default_rng(0)
    for i in range(60):
        M = random_matroid(FAMILIES[i % 5], 8, seed=i); order = rng.permutation(8)
        col = first_fit_colouring(M, order)
        assert np.array_equal(col, naive_first_fit(M, order))
        if M.family == 'graphic':
            for c in range(1, col.max() + 1):
                assert nx.is_forest(nx.MultiGraph([M.edges[e] for e in np.flatnonzero(col == c)]))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=2, max_size=12), st.integers(1, 3), st.randoms(use_true_random=False))
def test_first_fit_uses_exactly_alpha_colours_on_partition_matroids(blocks, cap, rnd):
    M = PartitionMatroid(blocks, cap)
    order = list(range(len(blocks))); rnd.shuffle(order)
    alpha = max(math.ceil(blocks.count(b) / cap) for b in set(blocks))
    assert first_fit_colouring(M, order).max() == alpha == arboricity(M).arboricity


def test_degeneracy_matches_networkx_core_number():
    for seed in range(30):
        g = nx.gnm_random_graph(12 + seed, 3 * (12 + seed), seed=seed)
        if g.number_of_edges() == 0: continue
        ordering, D = degeneracy_ordering(list(g.edges()))
        assert D == max(nx.core_number(g).values())
        pos = {v: i for i, v in enumerate(ordering)}
        assert max(sum(pos[w] < pos[v] for w in g[v]) for v in ordering) <= D


def test_doubling_colour_law_matches_its_sampler():
    "U(n, 1): first-fit gives the j-th arrival colour j, so its acceptance probability is q(j); the sampler is run, not enumerated."
    M = UniformMatroid(6, 1)
    mc = simulate_acceptance(M, DoublingColouringSelector(), n_runs=20000, seed=3)
    q = np.array([doubling_colour_law(j) for j in range(1, 7)])
    assert ((q >= mc.table['ci_low'] - 1e-9) & (q <= mc.table['ci_high'] + 1e-9)).sum() >= 5
    assert abs(q[0] - (0.5 + sum(2.0 ** -l / ((l + 1) * (l + 2)) for l in range(1, 80)))) < 1e-12


# ---------------------------------------------------------------- exact acceptance probabilities
def test_exact_probabilities_against_closed_forms():
    n, k, q = 7, 3, 0.4
    U = UniformMatroid(n, k)
    rep = acceptance_probabilities(U, RandomAcceptanceSelector(q))
    from scipy.stats import binom
    expected = [q * binom.cdf(k - 1, t, q) for t in range(n)]                  # accepted iff the coin says yes and < k accepted before
    assert np.allclose(rep.table['probability'], expected, atol=1e-12)
    greedy = acceptance_probabilities(UniformMatroid(5, 2), GreedySelector(), random_order=True)
    assert greedy.exact and np.allclose(greedy.table['probability'], 2 / 5)    # random order: every element equally likely, k of n
    for sel in (ColouringSelector(), LaminarColouringSelector()):
        r = acceptance_probabilities(U, sel, order=[3, 1, 6, 0, 2, 5, 4])
        assert np.allclose(r.table['probability'], 1 / sel.colours_allowed(U)) and r.colours_used == 3
    off = acceptance_probabilities(K4, OfflineOptimum())
    assert np.allclose(off.table['probability'], 1 / 2)


@pytest.mark.parametrize('name', ['colouring', 'no-knowledge colouring', 'random acceptance', 'greedy', 'offline optimum'])
def test_exact_agrees_with_monte_carlo_runs(name):
    sel = SELECTORS[name]()
    for M, order in ((K4, [2, 5, 0, 3, 1, 4]), (random_matroid('binary', 7, seed=2), None), (random_matroid('laminar', 7, seed=5), [6, 5, 4, 3, 2, 1, 0])):
        exact = acceptance_probabilities(M, sel, order=order)
        mc = simulate_acceptance(M, sel, order=order, n_runs=4000, seed=7)
        inside = ((exact.table['probability'] >= mc.table['ci_low'] - 1e-9) & (exact.table['probability'] <= mc.table['ci_high'] + 1e-9))
        assert inside.sum() >= M.n_elements - 1, (name, M.family)
        assert mc.accepted_sets_checked == 4000 and exact.accepted_sets_checked >= 1


def test_random_order_enumeration_agrees_with_monte_carlo_for_the_graphic_selector():
    M = GraphicMatroid([(0, 1), (1, 2), (0, 2), (2, 3), (1, 3)])
    sel = GraphicRandomOrderSelector()
    exact = acceptance_probabilities(M, sel, random_order=True)
    assert exact.exact and exact.orders_evaluated == 120
    mc = simulate_acceptance(M, sel, random_order=True, n_runs=6000, seed=1)
    inside = (exact.table['probability'] >= mc.table['ci_low'] - 1e-9) & (exact.table['probability'] <= mc.table['ci_high'] + 1e-9)
    assert inside.sum() >= 4
    for o in itertools.permutations(range(5)):                       # every colour class is a forest (networkx), on every order
        col = sel.colouring(M, o)
        for c in range(1, col.max() + 1):
            assert nx.is_forest(nx.MultiGraph([M.edges[e] for e in np.flatnonzero(col == c)]))
        assert (col[list(o[:2])] == 0).all() and (col[list(o[2:])] >= 1).all()   # the first 2 of 5 edges are the observed sample


def test_bounds_hold_on_every_order_of_small_random_matroids():
    "Exhaustive search (every order) on small matroids: each adversarial-order selector keeps its claimed factor."
    for i in range(15):
        M = random_matroid(FAMILIES[i % 5], 5 + i % 2, seed=500 + i)
        for sel in (ColouringSelector(), DoublingColouringSelector()) + ((LaminarColouringSelector(),) if M.family in LaminarColouringSelector.families else ()):
            rep = adversarial_order_search(M, sel, exhaustive_up_to=6, show_progress=False)
            assert rep.exhaustive and rep.orders_evaluated == math.factorial(M.n_elements)
            if math.isfinite(rep.bound): assert rep.bound_met, (M.family, sel.name, rep.colours_used, rep.colours_allowed)
            else: assert sel.name == 'laminar colouring' and M.family == 'laminar' and rep.bound_met is None   # no claim there (issue 33)
            brute = max(naive_first_fit(M, o).max() for o in itertools.permutations(range(M.n_elements)))
            assert rep.colours_used == brute


def test_a_wrongly_told_arboricity_is_caught():
    "Telling the colouring selector alpha = 1 on K4: first-fit needs more colours than it draws from; the report says so."
    rep = acceptance_probabilities(K4, ColouringSelector(arboricity=1, rank=1), order=list(range(6)))
    assert rep.colours_allowed == 1 and rep.colours_used == 3 and rep.worst_probability == 0
    assert any('never accepted' in n for n in rep.notes)


def test_search_refuses_random_order_selectors_and_reports_are_documented():
    with pytest.raises(ValueError, match='selector'): adversarial_order_search(K4, GraphicRandomOrderSelector())
    rep = adversarial_order_search(K4, ColouringSelector(), show_progress=False)
    assert isinstance(rep, OrderSearchReport); check_report(rep)
    assert rep.colours_used == 3 and rep.colours_used_listed == 3
    acc = acceptance_probabilities(K4, ColouringSelector())
    assert isinstance(acc, AcceptanceReport); check_report(acc)


def test_local_search_finds_the_exhaustive_worst_case():
    M = random_matroid('graphic', 7, seed=3)
    full = adversarial_order_search(M, ColouringSelector(), exhaustive_up_to=7, show_progress=False)
    local = adversarial_order_search(M, ColouringSelector(), exhaustive_up_to=0, n_restarts=3, n_steps=200, seed=1, show_progress=False,
                                     exact_first_fit=False)
    assert not local.exhaustive and local.colours_used == full.colours_used
    assert local.colours_used == first_fit_colouring(M, local.worst_order).max()


def test_same_seed_same_result():
    M = random_matroid('graphic', 9, seed=4)
    a = acceptance_probabilities(M, GraphicRandomOrderSelector(), random_order=True, n_orders=50, seed=3)
    b = acceptance_probabilities(M, GraphicRandomOrderSelector(), random_order=True, n_orders=50, seed=3)
    assert not a.exact and a.table.equals(b.table)
    assert simulate_acceptance(M, ColouringSelector(), n_runs=100, seed=2).table.equals(simulate_acceptance(M, ColouringSelector(), n_runs=100, seed=2).table)


def test_funding_example():
    F = funding_example()
    assert arboricity(F).arboricity == 3 and F.rank() == 5 and F.labels[0] == 'health 1'


# ---------------------------------------------------------------- widget
def test_explorer_headless():
    ex = selection_explorer()
    assert ex.report.n_elements == 6 and ex.report.selector == 'colouring' and ex.report.bound_met
    ex.controls['size'].value = 9
    assert ex.report.n_elements == 9
    ex.controls['arrival'].value = 'random'
    assert ex.report.arrival == 'random' and not ex.report.exact
    ex.controls['algorithm'].value = 'offline optimum'
    assert np.allclose(ex.report.table['probability'], 1 / ex.report.arboricity, atol=0.05)
    ex.controls['algorithm'].value = 'laminar colouring'
    assert isinstance(ex.error, ValueError)
    head, fig, rep = render_selection('partition', 7, 'adversarial (searched)', 'greedy')
    assert 'n = 7 elements' in head and rep.worst_probability == 0


def test_shipped_stress_results_match_the_benchmark_and_the_code():
    "The lessons read the package's copy of the stress study: it equals the benchmark's file, and its rows recompute."
    import re
    from pathlib import Path
    from trustml_nb.matroid_selection import stress_results
    shipped = stress_results()
    bench = pd.read_csv(Path(__file__).resolve().parents[1] / 'benchmarks' / 'results' / 'matroid_selection_stress.csv')
    pd.testing.assert_frame_equal(shipped, bench)
    rows = shipped[(shipped['selector'] == 'colouring') & shipped['exhaustive'] & (shipped['n'] == 5)].iloc[::4]
    assert len(rows) >= 3
    for _, r in rows.iterrows():
        family, n, seed = re.fullmatch(r"(\w+) n=(\d+) seed=(\d+)", r['instance']).groups()
        M = random_matroid(family, int(n), seed=int(seed))
        rep = adversarial_order_search(M, ColouringSelector(), exhaustive_up_to=7, show_progress=False)
        assert (rep.colours_used, rep.arboricity, rep.colours_allowed) == (r['colours_used'], r['alpha'], r['colours_allowed'])


def test_graphic_matroid_as_a_networkx_graph():
    M = GraphicMatroid([('a', 'b'), ('a', 'b'), ('b', 'c')])
    g = M.graph()
    assert g.number_of_edges() == 3 and sorted(d['element'] for _, _, d in g.edges(data=True)) == [0, 1, 2]
    assert M.rank() == g.number_of_nodes() - nx.number_connected_components(g)
