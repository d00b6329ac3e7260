"""Study (no peer library): Fair online matroid selection (issue #21): how close do arrival orders and small instances push the online selectors to
their claimed fairness factors? There is no peer library (the paper has no code); the reference points are exact:
the offline optimum 1/alpha (Edmonds' partition, checked against brute-force Nash-Williams) and the claimed bounds.

Part 1 (adversarial order): random small matroids of every family (`matroid_selection.random_matroid`, n = 5..10,
3 seeds each). `adversarial_order_search` with `ColouringSelector` maximises the colours first-fit opens (every order
when n <= 7, otherwise 4 restarts x 250 local moves). The colouring, no-knowledge colouring and laminar stand-in
selectors all accept one first-fit colour class, and each one's worst-element probability is monotone in the colours
first-fit opens, so the worst order for one is the worst for all: all three are evaluated exactly on the order found.
Part 2 (random order): the graphic random-order selector on random multigraphs with 5-7 edges and on named small graphs,
every arrival order enumerated (exact), and K5 / K6 by Monte Carlo over 400 orders (exact over the coins).
Columns: colours_used (on the worst order), colours_allowed, bound (claimed factor f), effective_factor (1 / worst
probability), bound_ratio = effective_factor / bound (<= 1: bound met; close to 1: bound nearly reached).
Run: .venv/bin/python benchmarks/bench_matroid_selection.py   (writes benchmarks/results/matroid_selection_stress.{csv,md}
and a copy of the CSV into trustml_nb/datasets/, which `matroid_selection.stress_results()` and the lessons read)
About 3-4 minutes on the shared 2-core machine.
"""
import itertools
import math
import time
from pathlib import Path

import pandas as pd

from trustml_nb.core import markdown_table
from trustml_nb.matroid_selection import (FAMILIES, ColouringSelector, DoublingColouringSelector, GraphicMatroid,
                                          GraphicRandomOrderSelector, LaminarColouringSelector, acceptance_probabilities,
                                          adversarial_order_search, random_matroid)

OUT = Path(__file__).parent / 'results'
SIZES = (5, 6, 7, 8, 9, 10)
SEEDS = (0, 1, 2)


def row(M, instance, rep, colours_listed, exhaustive, orders):
    return dict(family=M.family, instance=instance, n=M.n_elements, alpha=rep.arboricity, rank=rep.rank, selector=rep.selector,
                bound=rep.bound, colours_allowed=rep.colours_allowed, colours_used=rep.colours_used, colours_listed=colours_listed,
                worst_probability=rep.worst_probability, effective_factor=rep.effective_factor, bound_ratio=rep.bound_ratio,
                bound_met=rep.bound_met, exhaustive=exhaustive, orders_evaluated=orders,
                colours_over_alpha=rep.colours_used / rep.arboricity,
                colours_over_allowed=rep.colours_used / rep.colours_allowed if rep.colours_allowed else float('nan'))


def adversarial_part():
    rows = []
    for family in FAMILIES:
        for n in SIZES:
            for seed in SEEDS:
                M = random_matroid(family, n, seed=1000 * n + seed)
                found = adversarial_order_search(M, ColouringSelector(), n_restarts=4, n_steps=250, exhaustive_up_to=7, seed=seed,
                                                 show_progress=False)
                sels = [ColouringSelector(), DoublingColouringSelector()]
                if family in LaminarColouringSelector.families: sels.append(LaminarColouringSelector())
                for sel in sels:
                    rep = acceptance_probabilities(M, sel, order=found.worst_order)
                    rows.append(row(M, f"{family} n={n} seed={1000 * n + seed}", rep, found.colours_used_listed, found.exhaustive,
                                    found.orders_evaluated))
        print(f"{family}: done", flush=True)
    return rows


NAMED_GRAPHS = {
    'K4': list(itertools.combinations(range(4), 2)),
    'triangle + pendant': [(0, 1), (1, 2), (0, 2), (2, 3)],
    'two parallel pairs': [(0, 1), (0, 1), (1, 2), (1, 2), (0, 2)],
    'triple edge': [(0, 1), (0, 1), (0, 1)],
    'C5': [(i, (i + 1) % 5) for i in range(5)],
    'star K1,6': [(0, i) for i in range(1, 7)],
    'bowtie': [(0, 1), (1, 2), (0, 2), (0, 3), (3, 4), (0, 4)],
    'K4 + parallel edge': list(itertools.combinations(range(4), 2)) + [(0, 1)],
}


def random_order_part():
    rows, sel = [], GraphicRandomOrderSelector()
    graphs = dict(NAMED_GRAPHS)
    for n in (5, 6, 7):
        for seed in range(6): graphs[f"random n={n} seed={seed}"] = random_matroid('graphic', n, seed=seed).edges
    for name, edges in graphs.items():
        M = GraphicMatroid(edges)
        rep = acceptance_probabilities(M, sel, random_order=True, max_orders=40320, show_progress=False)
        rows.append(row(M, name, rep, 0, True, rep.orders_evaluated))
    for name, k in (('K5', 5), ('K6', 6)):
        M = GraphicMatroid(list(itertools.combinations(range(k), 2)))
        rep = acceptance_probabilities(M, sel, random_order=True, n_orders=400, seed=0, show_progress=False)
        rows.append(row(M, name + ' (Monte Carlo)', rep, 0, False, rep.orders_evaluated))
    print("graphic random order: done", flush=True)
    return rows


if __name__ == '__main__':
    t0 = time.perf_counter()
    table = pd.DataFrame(adversarial_part() + random_order_part())
    OUT.mkdir(exist_ok=True)
    table.to_csv(OUT / 'matroid_selection_stress.csv', index=False)
    table.to_csv(Path(__file__).parents[1] / 'trustml_nb' / 'datasets' / 'matroid_selection_stress.csv', index=False)
    summary = table.groupby(['selector', 'family']).agg(instances=('n', 'size'), worst_bound_ratio=('bound_ratio', 'max'),
                                                        most_colours_used=('colours_used', 'max'),
                                                        most_colours_over_alpha=('colours_over_alpha', 'max'),
                                                        most_colours_over_allowed=('colours_over_allowed', 'max'),
                                                        all_bounds_met=('bound_met', 'all')).reset_index()
    text = ("# Fair matroid selection: adversarial-order and small-instance stress test\n\n"
            "Written by `benchmarks/bench_matroid_selection.py`. bound_ratio = (1 / worst acceptance probability) / claimed factor;"
            " <= 1 means the bound held, near 1 means it was nearly reached. Probabilities are exact except the rows marked Monte Carlo.\n\n"
            + markdown_table(summary) + f"\n\nRun time: {time.perf_counter() - t0:.0f} s.\n")
    (OUT / 'matroid_selection_stress.md').write_text(text)
    print(text)
