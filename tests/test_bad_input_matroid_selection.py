"""Bad-input sweep of trustml_nb.matroid_selection (issue 21): every public entry point with NaN and inf, empty input,
wrong types (strings, floats, booleans, None), out-of-range sizes and settings, repeated and missing elements, orders
that are not permutations, self-loops and zero columns (loops), crossing laminar sets, unknown option strings, and
selectors on families they do not apply to. Each call ends in a clear trustml_nb error naming the argument, or in a
result checked against something exact."""
import itertools
import math

import numpy as np

from badinput import expect_error, expect_ok
from trustml_nb.matroid_selection import (BinaryMatroid, ColouringSelector, DoublingColouringSelector, GraphicMatroid,
                                          GraphicRandomOrderSelector, GreedySelector, LaminarColouringSelector, LaminarMatroid,
                                          OfflineOptimum, PartitionMatroid, RandomAcceptanceSelector, UniformMatroid,
                                          acceptance_probabilities, adversarial_order_search, arboricity, arboricity_brute_force,
                                          degeneracy_ordering, doubling_colour_law, first_fit_colouring, matroid_partition,
                                          plot_acceptance, random_matroid, render_selection, simulate_acceptance, subset_ranks)

M = 'matroid_selection'
K4 = GraphicMatroid(list(itertools.combinations(range(4), 2)))
U = UniformMatroid(5, 2)


def err(fn, *args, arg, **kw): return expect_error(fn, *args, arg=arg, module=M, **kw)
def ok(fn, *args, check, **kw): return expect_ok(fn, *args, check=check, module=M, **kw)


def test_uniform_matroid():
    err(UniformMatroid, 0, 1, arg='n_elements', case='uniform n 0')
    err(UniformMatroid, 5.5, 2, arg='n_elements', case='uniform n float')
    err(UniformMatroid, True, 1, arg='n_elements', case='uniform n bool')
    err(UniformMatroid, float('nan'), 1, arg='n_elements', case='uniform n nan')
    err(UniformMatroid, 5, 0, arg='rank', case='uniform rank 0 (all loops)')
    err(UniformMatroid, 5, 6, arg='rank', case='uniform rank above n')
    err(UniformMatroid, 5, '2', arg='rank', case='uniform rank string')
    ok(UniformMatroid, np.int64(5), np.int64(2), check=lambda m: m.rank() == 2, case='uniform numpy ints')


def test_partition_matroid():
    err(PartitionMatroid, [], 1, arg='blocks', case='partition empty blocks')
    err(PartitionMatroid, None, 1, arg='blocks', case='partition blocks None')
    err(PartitionMatroid, ['a', None, 'b'], 1, arg='blocks', case='partition missing block label')
    err(PartitionMatroid, [['a', 'b']], 1, arg='blocks', case='partition blocks 2-D')
    err(PartitionMatroid, ['a', 'b'], {'a': 1}, arg='capacities', case='partition capacity missing')
    err(PartitionMatroid, ['a', 'b'], {'a': 1, 'b': 1, 'c': 1}, arg='capacities', case='partition capacity unused')
    err(PartitionMatroid, ['a', 'b'], {'a': 0, 'b': 1}, arg='capacities', case='partition capacity 0')
    err(PartitionMatroid, ['a', 'b'], {'a': 1.5, 'b': 1}, arg='capacities', case='partition capacity float')
    err(PartitionMatroid, ['a', 'b'], float('inf'), arg='capacities', case='partition capacity inf')
    err(PartitionMatroid, ['a', 'b'], 'two', arg='capacities', case='partition capacity string')
    ok(PartitionMatroid, [1, 1, 2], 1, check=lambda m: m.rank() == 2, case='partition integer labels')


def test_laminar_matroid():
    err(LaminarMatroid, 4, [[0, 1], [1, 2]], [1, 1], arg='sets', case='laminar crossing sets')
    err(LaminarMatroid, 4, [[0, 5]], [1], arg='sets[0]', case='laminar element out of range')
    err(LaminarMatroid, 4, [[]], [1], arg='sets[0]', case='laminar empty set')
    err(LaminarMatroid, 4, [[0, 0]], [1], arg='sets[0]', case='laminar repeated element')
    err(LaminarMatroid, 4, [[0, 1.5]], [1], arg='sets[0]', case='laminar float element')
    err(LaminarMatroid, 4, [[0, 1]], [1, 2], arg='capacities', case='laminar capacities length')
    err(LaminarMatroid, 4, [[0, 1]], [0], arg='capacities[0]', case='laminar capacity 0')
    err(LaminarMatroid, 4, [], [], arg='sets', case='laminar no sets')
    err(LaminarMatroid, 4, 'ab', [1], arg='sets', case='laminar sets string')
    ok(LaminarMatroid, 4, [[0, 1], [0, 1, 2, 3]], [1, 2], check=lambda m: m.rank() == 2, case='laminar nested')


def test_graphic_and_binary_matroids():
    err(GraphicMatroid, [(0, 1), (2, 2)], arg='edges[1]', case='graphic self-loop')
    err(GraphicMatroid, [], arg='edges', case='graphic no edges')
    err(GraphicMatroid, [(0, 1, 2)], arg='edges[0]', case='graphic triple')
    err(GraphicMatroid, ['ab'], arg='edges[0]', case='graphic string edge')
    err(GraphicMatroid, [(0, float('nan'))], arg='edges[0]', case='graphic nan vertex')
    err(GraphicMatroid, [([0], 1)], arg='edges[0]', case='graphic unhashable vertex')
    err(GraphicMatroid, 'edges', arg='edges', case='graphic string')
    ok(GraphicMatroid, [('a', 'b'), ('a', 'b')], check=lambda m: m.rank() == 1, case='graphic parallel edges')
    err(BinaryMatroid, [[1, 0], [0, 0]], arg='matrix', case='binary zero column (loop)')
    err(BinaryMatroid, [[1, 2]], arg='matrix', case='binary value 2')
    err(BinaryMatroid, [[1, np.nan]], arg='matrix', case='binary nan')
    err(BinaryMatroid, [[1, np.inf]], arg='matrix', case='binary inf')
    err(BinaryMatroid, [['1', '0']], arg='matrix', case='binary strings')
    err(BinaryMatroid, [1, 0, 1], arg='matrix', case='binary 1-D')
    ok(BinaryMatroid, np.array([[True, False], [False, True]]), check=lambda m: m.rank() == 2, case='binary booleans')


def test_oracle_and_rank_arguments():
    err(U.is_independent, [0, 0], arg='elements', case='oracle repeated element')
    err(U.is_independent, [0, 9], arg='elements', case='oracle out of range')
    err(U.is_independent, [-1], arg='elements', case='oracle negative')
    err(U.is_independent, [0.0], arg='elements', case='oracle float')
    err(U.is_independent, [True], arg='elements', case='oracle bool')
    err(U.is_independent, '01', arg='elements', case='oracle string')
    err(U.is_independent, None, arg='elements', case='oracle None')
    err(U.rank, [[0, 1]], arg='elements', case='rank nested')
    ok(U.is_independent, [], check=lambda v: v is True, case='oracle empty set')
    ok(U.rank, np.array([4, 1, 3]), check=lambda v: v == 2, case='rank numpy array')


def test_brute_force_and_partition():
    err(subset_ranks, UniformMatroid(20, 3), arg='max_elements', case='subset_ranks too large')
    err(subset_ranks, 'U', arg='matroid', case='subset_ranks not a matroid')
    err(arboricity_brute_force, U, max_elements=0, arg='max_elements', case='brute max_elements 0')
    err(arboricity, [[1, 0]], arg='matroid', case='arboricity list')
    err(matroid_partition, U, show_progress='yes', arg='show_progress', case='partition show_progress string')
    ok(arboricity, UniformMatroid(1, 1), check=lambda r: r.arboricity == 1, case='arboricity one element')


def test_orders():
    for bad, case in (([0, 1, 2], 'order too short'), ([0, 1, 2, 3, 4, 5, 5], 'order too long'), ([0, 0, 1, 2, 3, 4], 'order repeated'),
                      ([0, 1, 2, 3, 4, 6], 'order out of range'), ([0.5, 1, 2, 3, 4, 5], 'order fraction'),
                      ([0, 1, 2, 3, 4, np.nan], 'order nan'), (['a'] * 6, 'order strings'), ([True] * 6, 'order booleans'),
                      ([], 'order empty'), ([[0, 1, 2, 3, 4, 5]], 'order 2-D')):
        err(first_fit_colouring, K4, bad, arg='order', case=f'first_fit {case}')
        err(acceptance_probabilities, K4, ColouringSelector(), order=bad, arg='order', case=f'acceptance {case}')
    ok(first_fit_colouring, K4, np.array([5.0, 4, 3, 2, 1, 0]), check=lambda c: np.array_equal(c, first_fit_colouring(K4, [5, 4, 3, 2, 1, 0])), case='order whole floats')
    err(acceptance_probabilities, K4, GreedySelector(), order=list(range(6)), random_order=True, arg='order', case='order with random_order')


def test_selectors_and_their_settings():
    G = GraphicMatroid([(0, 1), (1, 2), (0, 2)])
    err(ColouringSelector(arboricity=0).outcomes, K4, arg='arboricity', case='colouring arboricity 0')
    err(ColouringSelector(arboricity=1.5).outcomes, K4, arg='arboricity', case='colouring arboricity float')
    err(ColouringSelector(rank=-1).outcomes, K4, arg='rank', case='colouring rank negative')
    err(LaminarColouringSelector().outcomes, K4, arg='matroid', case='laminar selector on a graphic matroid')
    err(GraphicRandomOrderSelector().outcomes, U, arg='matroid', case='graphic selector on a uniform matroid')
    err(GraphicRandomOrderSelector(sample_fraction=0).outcomes, G, arg='sample_fraction', case='sample_fraction 0')
    err(GraphicRandomOrderSelector(sample_fraction=1.0).outcomes, G, arg='sample_fraction', case='sample_fraction 1')
    err(GraphicRandomOrderSelector(sample_fraction=np.nan).outcomes, G, arg='sample_fraction', case='sample_fraction nan')
    err(RandomAcceptanceSelector(0).outcomes, U, arg='accept_probability', case='accept_probability 0')
    err(RandomAcceptanceSelector(1.5).outcomes, U, arg='accept_probability', case='accept_probability 1.5')
    err(RandomAcceptanceSelector('half').outcomes, U, arg='accept_probability', case='accept_probability string')
    err(RandomAcceptanceSelector().outcomes, UniformMatroid(30, 15), arg='matroid', case='random acceptance too many states')
    err(GreedySelector().select, U, seed=-1, arg='seed', case='select seed negative')
    err(GreedySelector().outcomes, 'U', arg='matroid', case='outcomes not a matroid')
    ok(RandomAcceptanceSelector(1.0).outcomes, U, check=lambda o: o == [(1.0, (0, 1))], case='accept_probability 1 is greedy')
    ok(OfflineOptimum().select, K4, seed=0, check=lambda S: K4.is_independent(S) and len(S) == 3, case='offline select')


def test_acceptance_simulation_and_search_settings():
    sel = ColouringSelector()
    err(acceptance_probabilities, K4, 'colouring', arg='selector', case='selector as a string')
    err(acceptance_probabilities, K4, sel, random_order='yes', arg='random_order', case='random_order string')
    err(acceptance_probabilities, K4, sel, random_order=True, max_orders=0, arg='max_orders', case='max_orders 0')
    err(acceptance_probabilities, K4, sel, random_order=True, n_orders=1, arg='n_orders', case='n_orders 1')
    err(acceptance_probabilities, K4, sel, seed=-3, arg='seed', case='acceptance seed negative')
    err(acceptance_probabilities, K4, sel, seed=1.5, arg='seed', case='acceptance seed float')
    err(simulate_acceptance, K4, sel, n_runs=1, arg='n_runs', case='n_runs 1')
    err(simulate_acceptance, K4, sel, n_runs=np.nan, arg='n_runs', case='n_runs nan')
    err(simulate_acceptance, K4, sel, order=[0, 1], arg='order', case='simulate short order')
    err(adversarial_order_search, K4, GraphicRandomOrderSelector(), arg='selector', case='search random-order selector')
    err(adversarial_order_search, K4, OfflineOptimum(), arg='selector', case='search offline selector')
    err(adversarial_order_search, K4, sel, n_restarts=0, arg='n_restarts', case='search n_restarts 0')
    err(adversarial_order_search, K4, sel, n_steps=-1, arg='n_steps', case='search n_steps negative')
    err(adversarial_order_search, K4, sel, exhaustive_up_to=2.5, arg='exhaustive_up_to', case='search exhaustive float')
    ok(acceptance_probabilities, K4, sel, random_order=True, max_orders=10, n_orders=20, seed=0,
       check=lambda r: not r.exact and r.orders_evaluated == 20 and np.all(r.table['ci_low'] <= r.table['probability']), case='acceptance Monte Carlo')


def test_helpers_and_widget():
    err(random_matroid, 'matching', 5, arg='family', case='random_matroid unknown family')
    err(random_matroid, 'graphic', 1, arg='n_elements', case='random_matroid one element')
    err(random_matroid, 'graphic', 5, seed=-1, arg='seed', case='random_matroid seed negative')
    err(degeneracy_ordering, [(0, 0)], arg='edges[0]', case='degeneracy self-loop')
    err(degeneracy_ordering, [(0, 1, 2)], arg='edges[0]', case='degeneracy triple')
    err(doubling_colour_law, 0, arg='colour', case='colour law 0')
    err(doubling_colour_law, 1.5, arg='colour', case='colour law float')
    err(plot_acceptance, {'probability': [0.5]}, arg='rep', case='plot not a report')
    err(render_selection, family='matching', arg='family', case='render unknown family')
    err(render_selection, algorithm='best', arg='algorithm', case='render unknown algorithm')
    err(render_selection, arrival='sorted', arg='arrival', case='render unknown arrival')
    err(render_selection, size=11, arg='size', case='render size 11')
    err(render_selection, size=1, arg='size', case='render size 1')
    ok(degeneracy_ordering, [(0, 1)], check=lambda r: r[1] == 1 and set(r[0]) == {0, 1}, case='degeneracy one edge')
