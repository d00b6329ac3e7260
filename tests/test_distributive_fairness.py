"""Distributive fairness (issue 37): the exact fair-division calculus against an independent brute force.

The oracle below is written differently on purpose: allocations are dicts of frozensets built by counting in base n+1,
money splits by nested recursion, payoffs with Python integers (exact), every property from its pairwise definition in
the paper / Freeman et al. (2019), and Pareto optimality by comparing every pair of payoff vectors. It shares no code with
trustml_nb.distributive_fairness.
"""
import itertools
import time

import numpy as np
import pandas as pd
import pytest
from contract import check_estimator_contract

from trustml_nb.distributive_fairness import (MAIN_PROPERTIES, PROPERTIES, FairDivision, fair_division, money_splits,
                                               pareto_optimal)

# ---- the oracle ------------------------------------------------------------------------------------------------------


def _splits(total, n):
    "Every tuple of n non-negative ints summing to total (recursively)."
    if n == 1: return [(total,)]
    return [(first,) + rest for first in range(total + 1) for rest in _splits(total - first, n - 1)]


def _allocations(n, m, money, discard):
    "Yield (bundles, cash): bundles[i] the frozenset of goods of agent i; goods counted in base n+1 (digit 0 = nobody)."
    base = n + 1 if discard else n
    for code in range(base ** m):
        owner, c = [], code
        for _ in range(m):
            owner.append(c % base); c //= base
        owner = [o - 1 for o in owner] if discard else owner      # -1: nobody
        bundles = tuple(frozenset(g for g in range(m) if owner[g] == i) for i in range(n))
        for cash in _splits(money, n):
            yield bundles, cash


def _value(vals, i, bundle, cash_of_owner):
    return sum(vals[i][g] for g in bundle) + cash_of_owner


def _oracle(vals, money, discard=True):
    "dict (owners tuple, cash tuple) -> set of properties, decided from the definitions with exact integers."
    n, m = len(vals), len(vals[0])
    rows = []
    for bundles, cash in _allocations(n, m, money, discard):
        u = tuple(_value(vals, i, bundles[i], cash[i]) for i in range(n))
        rows.append((bundles, cash, u))
    payoff_set = {u for _, _, u in rows}
    frontier = {u for u in payoff_set
                if not any(all(w[k] >= u[k] for k in range(n)) and any(w[k] > u[k] for k in range(n)) for w in payoff_set)}
    eq_levels = [min(u) for _, _, u in rows if len(set(u)) == 1]
    best_eq = max(eq_levels) if eq_levels else None
    complete_gaps = [max(u) - min(u) for b, _, u in rows if sum(len(x) for x in b) == m]
    least_gap = min(complete_gaps) if complete_gaps else None
    maximin, usw = max(min(u) for _, _, u in rows), max(sum(u) for _, _, u in rows)
    out = {}
    for bundles, cash, u in rows:
        props = set()
        envy_free, ef1, eq1 = True, True, True
        for i in range(n):
            for j in range(n):
                if i == j: continue
                mine, theirs = u[i], _value(vals, i, bundles[j], cash[j])
                if mine < theirs: envy_free = False
                if mine < theirs and not any(mine >= theirs - vals[i][g] for g in bundles[j]): ef1 = False
                if u[i] < u[j] and not any(u[i] >= u[j] - vals[j][g] for g in bundles[j]): eq1 = False
        if envy_free: props.add('EF')
        if ef1: props.add('EF1')
        if len(set(u)) == 1:
            props.add('EQ')
            if min(u) == best_eq: props.add('EQ*')
        if eq1: props.add('EQ1')
        if sum(len(x) for x in bundles) == m and max(u) - min(u) == least_gap: props.add('min-gap')
        if min(u) == maximin: props.add('RMM')
        if sum(u) == usw: props.add('USW')
        if u in frontier: props.add('PO')
        owners = tuple(next((i for i in range(n) if g in bundles[i]), -1) for g in range(m))
        out[(owners, tuple(cash))] = props
    return out


def _ours(vals, money, discard=True):
    r = FairDivision(allow_discard=discard).fit(np.array(vals), money=money).report_
    t = r.table
    owners = t[[c for c in t.columns if c.startswith('owner ')]].to_numpy()
    cash = t[[c for c in t.columns if c.startswith('money ')]].to_numpy().round().astype(int)
    flags = t[list(PROPERTIES)].to_numpy()
    return {(tuple(map(int, o)), tuple(map(int, c))): {p for p, f in zip(PROPERTIES, fl) if f}
            for o, c, fl in zip(owners, cash, flags)}


def _random_instance(rng):
    n = int(rng.choice([2, 3]))
    m = int(rng.integers(1, 5 if n == 2 else 4))
    money = int(rng.choice([0, 0, 1, 2, 3]))
    kind = rng.integers(3)
    if kind == 0: vals = rng.integers(0, 6, size=(n, m))                     # many ties
    elif kind == 1: vals = rng.integers(0, 101, size=(n, m))
    else:                                                                    # values summing to 100, as in the paper
        vals = np.array([np.diff(np.sort(np.r_[0, rng.choice(np.arange(1, 100), m - 1, replace=False), 100]))
                         if m > 1 else [100] for _ in range(n)])
    return vals.astype(int).tolist(), money, bool(rng.integers(4) > 0)


def test_calculus_matches_the_brute_force_on_1000_random_instances():
    rng = np.random.default_rng(37)
    agreed, allocations, disagreements = 0, 0, []
    for k in range(1000):
        vals, money, discard = _random_instance(rng)
        want, got = _oracle(vals, money, discard), _ours(vals, money, discard)
        assert want.keys() == got.keys(), (vals, money, discard)
        bad = [a for a in want if want[a] != got[a]]
        if bad: disagreements.append((vals, money, discard, bad[0], want[bad[0]], got[bad[0]]))
        else: agreed += 1
        allocations += len(want)
    print(f"agreement with the brute force: {agreed} of 1000 instances ({allocations:,} allocations)")
    assert not disagreements, disagreements[:3]


def test_the_oracle_and_the_calculus_find_every_property_somewhere():
    "The comparison above is not vacuous: on the random instances each property is both present and absent."
    rng = np.random.default_rng(5)
    seen = {p: set() for p in PROPERTIES}
    for _ in range(60):
        vals, money, discard = _random_instance(rng)
        for props in _ours(vals, money, discard).values():
            for p in PROPERTIES: seen[p].add(p in props)
    assert all(s == {True, False} for s in seen.values()), seen


def test_a_wrong_property_is_caught():
    "Mutation check: flipping one definition (EF with > instead of >=) makes the comparison fail."
    vals = [[49, 46, 5], [47, 48, 5]]
    want = _oracle(vals, 0)
    mutated = {a: (p - {'EF'}) if 'EF' in p else p for a, p in want.items()}
    assert mutated != _ours(vals, 0)


def test_paper_instance_two_matches_the_authors_menu_labels():
    "The labels the authors put on their menu for instance 2 (authors' code), recomputed."
    v = [[5, 47, 45, 3], [45, 5, 48, 2], [23, 25, 32, 20]]
    fd = FairDivision().fit(np.array(v))
    lab = lambda owners: {p for p in MAIN_PROPERTIES if fd.classify(owners)[p]}
    assert lab([2, 0, 1, 2]) == {'EF', 'PO'}                  # 47, 48, 43
    assert lab([1, 2, 0, 2]) == {'EQ', 'RMM'}                 # 45, 45, 45
    assert lab([1, 0, 2, 2]) == {'RMM', 'PO'}                 # 47, 45, 52
    assert lab([1, 0, 1, 2]) == {'USW', 'PO'}                 # 47, 93, 20


def test_pareto_optimal_matches_pairwise_dominance():
    rng = np.random.default_rng(0)
    for _ in range(200):
        P = rng.integers(0, 4, size=(int(rng.integers(1, 40)), int(rng.integers(1, 5)))).astype(float)
        want = [not any((q >= p).all() and (q > p).any() for q in P) for p in P]
        assert pareto_optimal(P).tolist() == want


def test_money_splits_count_is_stars_and_bars():
    from math import comb
    for n in (1, 2, 3, 4):
        for u in range(6):
            s = money_splits(n, u)
            assert len(s) == comb(u + n - 1, n - 1) and len({tuple(r) for r in s}) == len(s) and (s.sum(1) == u).all()


def test_classify_agrees_with_the_table_and_measures_wasted_money():
    v = np.array([[45, 30, 25], [35, 40, 25], [50, 5, 45]])
    fd = FairDivision().fit(v, money=5)
    t = fd.report_.table
    for k in range(0, len(t), 97):
        row = t.iloc[k]
        owners = [int(row[f'owner {g}']) for g in fd.goods_]
        cash = [row[f'money {a}'] for a in fd.agents_]
        got = fd.classify(owners, money=cash)
        assert all(got[p] == row[p] for p in PROPERTIES)
    wasted = fd.classify([0, 1, 2], money=[0, 0, 0])
    assert not wasted['PO'] and not wasted['USW']
    with pytest.raises(ValueError, match='money'): fd.classify([0, 1, 2], money=[5, 5, 0])
    with pytest.raises(ValueError, match='allocation'): fd.classify([0, 1, 7])


def test_bad_input_is_refused_naming_the_argument():
    with pytest.raises(ValueError, match='valuations'): FairDivision().fit(np.ones((1, 3)))
    with pytest.raises(ValueError, match='valuations'): FairDivision().fit(np.ones((2, 9)))
    with pytest.raises(ValueError, match='valuations'): FairDivision().fit(-np.ones((2, 2)))
    with pytest.raises(ValueError, match='valuations'): FairDivision().fit(np.array([[1, np.nan], [1, 2]]))
    with pytest.raises(TypeError, match='valuations'): FairDivision().fit([['a', 'b'], ['c', 'd']])
    with pytest.raises(ValueError, match='money'): FairDivision().fit(np.ones((2, 2)), money=-1)
    with pytest.raises(ValueError, match='money'): FairDivision(money_unit=2).fit(np.ones((2, 2)), money=3)
    with pytest.raises(ValueError, match='max_allocations'): FairDivision(max_allocations=10).fit(np.ones((3, 3)))
    with pytest.raises(TypeError, match='allow_discard'): FairDivision(allow_discard='yes').fit(np.ones((2, 2)))
    with pytest.raises(ValueError, match='money_unit'): FairDivision(money_unit=0).fit(np.ones((2, 2)))


def test_fair_division_contract():
    v = pd.DataFrame([[49, 46, 5], [47, 48, 5]], index=['P1', 'P2'], columns=['A', 'B', 'C'])
    check_estimator_contract(FairDivision(), fit=lambda e: e.fit(v, money=2), output=lambda e: e.report_.table)


def test_labelled_valuations_keep_their_names_and_reordered_goods_give_the_same_sets():
    v = pd.DataFrame([[5, 47, 45, 3], [45, 5, 48, 2], [23, 25, 32, 20]], index=['Ann', 'Bo', 'Cy'], columns=list('ABCD'))
    a, b = fair_division(v), fair_division(v[list('DBCA')])
    assert a.agents == ('Ann', 'Bo', 'Cy') and b.goods == ('D', 'B', 'C', 'A')
    bundle = lambda part: (part.split(': ')[0], frozenset(part.split(': ')[1].split(', ')))
    key = lambda r: {frozenset(map(bundle, s.split(' | '))) for s in r.table.loc[r.table['PO'] & r.table['EF'], 'allocation']}
    assert key(a) == key(b)
    assert a.property_counts.equals(b.property_counts)


def test_the_largest_paper_instance_is_fast():
    t0 = time.perf_counter()
    r = fair_division(np.array([[45, 4, 3, 48], [15, 20, 40, 25], [52, 1, 45, 2]]), money=7)
    assert r.n_allocations == 4 ** 4 * 36
    assert time.perf_counter() - t0 < 10


# ---- instances, prompts, parsing ----------------------------------------------------------------------------------------

from trustml_nb.distributive_fairness import (INSTANCES_FILE, INSTANCES_SHA256, classify_answers, generative_prompt,  # noqa: E402
                                               menu_options, menu_prompt, paper_instances, parse_allocation, parse_choice,
                                               property_shares, reorder_instance)


def test_shipped_instances_are_verified_and_complete():
    from trustml_nb.data import dataset_path, verify_checksum
    assert verify_checksum(dataset_path(INSTANCES_FILE), INSTANCES_SHA256) == INSTANCES_SHA256
    inst = paper_instances()
    assert len(inst) == 10
    for name, i in inst.items():
        assert (i.valuations.to_numpy() >= 0).all() and i.valuations.shape[0] in (2, 3)
        want = [100, 100, 99] if name == 'HP10' else [100] * len(i.valuations)    # HP10's Person 3 sums to 99 in the authors' code
        assert i.valuations.sum(axis=1).tolist() == want, name
    assert [k for k, i in inst.items() if i.money] == ['HP7', 'HP8', 'HP10']
    assert [k for k, i in inst.items() if i.decision_maker] == ['HP9', 'HP10']


def test_menu_options_reproduce_the_authors_menus():
    "The authors' menus for HP2, HP6 and HP7 (payoff vectors from their code), found by the calculus."
    inst = paper_instances()
    pay = lambda k: [tuple(r) for r in menu_options(inst[k])[[c for c in menu_options(inst[k]).columns if c.startswith('payoff ')]].to_numpy().tolist()]
    assert set(pay('HP2')) == {(45, 45, 45), (47, 48, 43), (47, 45, 52), (47, 93, 20)}
    assert {(45, 45, 45), (48, 60, 52), (48, 20, 97)} <= set(pay('HP6'))
    assert (45, 45, 45) in pay('HP7')


def test_parsing_is_strict_and_every_answer_is_kept():
    hp = paper_instances()['HP8']
    good = '{"Good A": "Person 3", "Good B": "Person 2", "Good C": "Person 2", "Good D": "Person 1", "Person 1 money": 5, "Person 2 money": 0, "Person 3 money": 2}'
    p = parse_allocation(good, hp)
    assert p['status'] == 'parsed' and p['owners'] == [2, 1, 1, 0] and p['money'] == [5, 0, 2]
    too_much = good.replace('"Person 3 money": 2', '"Person 3 money": 3')
    assert parse_allocation(too_much, hp)['status'] == 'unparseable'
    c = classify_answers([good, too_much, 'no idea', '{"Good A": 1}'], hp)
    assert len(c) == 4 and c['status'].tolist() == ['parsed', 'unparseable', 'unparseable', 'unparseable']
    assert c.loc[0, ['EF', 'RMM', 'PO']].tolist() == [True, True, True]       # the authors' EF + RMM + PO option for this instance
    s = property_shares(c, hp)
    assert s.attrs['parse_rate'] == 0.25 and s.set_index('property').loc['EF', 'answers_percent'] == 100
    assert s.set_index('property').loc['EF', 'humans_percent'] == 32.2
    with pytest.raises(TypeError, match='texts'): classify_answers('one string', hp)


def test_prompts_name_every_good_and_person_and_reordering_round_trips():
    inst = paper_instances()
    for i in inst.values():
        text = generative_prompt(i)
        assert all(g in text for g in i.valuations.columns)
        assert all((a in text) or a == i.decision_maker for a in i.valuations.index)
    hp = inst['HP3']
    re3, back = reorder_instance(hp, goods_order=list(hp.valuations.columns[::-1]), agents_order=list(hp.valuations.index[::-1]))
    assert re3.valuations.loc['Person 1'].tolist() == hp.valuations.loc['Person 3'].tolist()[::-1]
    opts = menu_options(hp)
    text = menu_prompt(hp, opts, order=list(range(len(opts)))[::-1])
    assert text.index(opts['allocation'].iloc[-1]) < text.index(opts['allocation'].iloc[0])
    assert parse_choice('Option 1', len(opts)) == 0 and parse_choice('Option 9', len(opts)) is None


# ---- the explorer, headless ----------------------------------------------------------------------------------------------

from trustml_nb.distributive_fairness import division_explorer, parse_valuations, render_division  # noqa: E402


def test_render_division_is_pure_and_checks_its_input():
    head, fig, rep = render_division(money=5, instance='HP7', highlight='RMM')
    assert head.startswith('HP7, money 5: 1,344 allocations') and 'humans chose' in head and rep.money == 5
    head2, _, rep2 = render_division(money=0, instance='HP1', values='10 90; 90 10')
    assert head2.startswith('edited') and 'humans' not in head2 and rep2.max_welfare == 180
    with pytest.raises(ValueError, match='instance'): render_division(instance='HP99')
    with pytest.raises(ValueError, match='highlight'): render_division(highlight='fairest')
    with pytest.raises(ValueError, match='valuations text'): render_division(values='1 2; 3')
    assert parse_valuations('1,2\n3 4').tolist() == [[1, 2], [3, 4]]


def test_explorer_handlers_rerender_and_keep_the_report():
    ex = division_explorer(instance='HP2')
    first = ex.n_renders
    ex.controls['money'].value = 20                      # what the browser test does (End on the first slider)
    assert ex.n_renders == first + 1 and ex.report.money == 20 and ex.error is None
    ex.controls['values'].value = 'not numbers'
    assert isinstance(ex.error, ValueError) and ex.report.money == 20    # the last good report is kept, the error shown
    ex.controls['values'].value = ''
    ex.controls['highlight'].value = 'USW'
    assert ex.error is None and ex.report.n_allocations == 256 * 231    # 4^4 goods assignments x C(22, 2) money splits



def test_the_explorer_shows_property_counts_not_thousands_of_allocation_rows():
    ex = division_explorer(instance='HP7', money=5)
    html = ex.report._repr_html_()
    assert f"to_frame() holds the full table ({ex.report.n_allocations:,} rows)" in html
    assert 'Person 1: nothing' not in html, "the allocation rows belong to report.table, not the widget"
    counts = ex.report.property_counts.set_index('property')['allocations']
    assert all(f"<td>{n}</td>" in html for n in counts), "every property's count is displayed"

# ---- the harness, with stand-in models (the live run is benchmarks/bench_distributive_fairness.py llm) ---------------------

from trustml_nb.distributive_fairness import cyclic_orders, generative_answers, menu_choice_shares  # noqa: E402


class _ContentLM:
    "Stand-in that reads the menu and puts probability 0.9 on the option whose allocation equalises payoffs (HP2: 45, 45, 45)."
    def answer_probabilities(self, prompts, options):
        out = []
        for p in prompts:
            lines = [l for l in p.splitlines() if l.startswith('Option ')]
            eq = [k for k, l in enumerate(lines) if 'Person 1: Good C | Person 2: Good A | Person 3: Good B, Good D' in l]
            row = np.full(len(options), 0.1 / (len(options) - 1)); row[eq[0]] = 0.9
            out.append(row)
        return np.array(out)

    def generate(self, prompt, max_new_tokens=80):
        return '{"Good A": "Person 2", "Good B": "Person 3", "Good C": "Person 1", "Good D": "Person 3"}'


def test_menu_choice_shares_follow_content_not_position():
    hp2 = paper_instances()['HP2']
    s = menu_choice_shares(_ContentLM(), hp2)
    assert len(s) == 16 and sorted(map(tuple, cyclic_orders(4))) == sorted({tuple(g['option']) for _, g in s.groupby('order')})
    by_option = s.groupby('option')['probability'].mean()
    assert by_option.idxmax() == 0 and np.isclose(by_option.max(), 0.9)          # menu_options lists EQ* first
    assert np.allclose(s.groupby('position')['probability'].mean(), 0.25)        # no position bias
    assert s.loc[s['option'] == 0, ['EQ', 'RMM']].all(axis=None)


def test_generative_answers_keep_variations_and_answers():
    g = generative_answers(_ContentLM(), paper_instances()['HP2'], intentions=('fairest', 'EF'), valuation_formats=('sentences', 'table'))
    assert len(g) == 4 and (g['status'] == 'parsed').all() and g['EQ'].all()
    with pytest.raises(ValueError, match='intentions'): generative_answers(_ContentLM(), paper_instances()['HP2'], intentions=('kind',))


from trustml_nb.distributive_fairness import (ORDERS, PERSONAS, VALUATION_FORMATS, generative_study, harness_variations,  # noqa: E402
                                               human_share_consistency, instance_checks, menu_study, position_bias, study_shares,
                                               wilson_interval)


def test_human_shares_are_checked_against_the_calculus_and_the_one_failure_is_hp7():
    inst = paper_instances()
    c = pd.concat([human_share_consistency(i) for i in inst.values() if i.human_shares], ignore_index=True)
    assert len(c) == 26 and c.loc[~c['holds'], ['instance', 'subset', 'superset']].values.tolist() == [['HP7', 'RMM', 'PO']]
    # independent of the module's sets: the HP7 RMM allocation (everyone at 45 with the money) is undominated by brute force
    t = inst['HP7'].fit().report_.table
    P = t[[c for c in t.columns if c.startswith('payoff ')]].to_numpy()
    rmm = P[t['RMM'].to_numpy()][0]
    assert rmm.tolist() == [45, 45, 45] and not ((P >= rmm).all(1) & (P > rmm).any(1)).any()
    checks = instance_checks()
    assert checks.loc['HP7', 'human_shares'].startswith('inconsistent') and 'independent transcription' in checks.loc['HP2', 'valuations']
    with pytest.raises(ValueError, match='no human shares'): human_share_consistency(inst['HP10'])


def test_lines_answers_parse_and_reordered_variations_map_back():
    hp2 = paper_instances()['HP2']
    vs = harness_variations(hp2, templates=VALUATION_FORMATS, orders=ORDERS, personas=tuple(PERSONAS))
    assert len(vs) == len(VALUATION_FORMATS) * len(ORDERS) * len(PERSONAS)
    assert all(v['prompt'].startswith(PERSONAS[v['persona']]) for v in vs)
    rev = next(v for v in vs if v['order'] == 'agents reversed')          # shown: Person 1 is the original Person 3
    c = classify_answers(['Good A: Person 3\nGood B: Person 1\nGood C: Person 2\nGood D: Person 1'], hp2, mapping=rev['mapping'])
    assert c.loc[0, 'allocation'] == 'Person 1: Good A | Person 2: Good C | Person 3: Good B, Good D'
    assert parse_allocation('Good A: Person 1\nGood B: Person\nGood C: nobody', paper_instances()['HP1'])['status'] == 'unparseable'
    with pytest.raises(ValueError, match='orders'): harness_variations(hp2, orders=('backwards',))


class _CountingLM:
    calls = 0
    def generate(self, prompt, max_new_tokens=80):
        _CountingLM.calls += 1
        return 'Good A: Person 2\nGood B: Person 3\nGood C: Person 1\nGood D: Person 3'


def test_generative_study_resumes_from_its_log(tmp_path):
    hp2 = paper_instances()['HP2']
    log = tmp_path / 'a.jsonl'
    a = generative_study(_CountingLM(), [hp2], orders=ORDERS, path=log, limit=2)
    assert len(a) == 2 and _CountingLM.calls == 2
    b = generative_study(_CountingLM(), [hp2], orders=ORDERS, path=log)
    assert len(b) == 3 and _CountingLM.calls == 3                      # only the missing variation ran
    orig = b[b['order'] == 'original'].iloc[0]
    assert orig['status'] == 'parsed' and orig['EQ'] and orig['RMM']   # (45, 45, 45)
    s = study_shares(b)
    assert s.loc[0, 'parsed'] == 3 and 0 <= s.loc[0, 'EQ_low'] <= s.loc[0, 'EQ'] <= s.loc[0, 'EQ_high'] <= 1


def test_wilson_interval_matches_the_closed_form_and_covers():
    lo, hi = wilson_interval(5, 10)
    assert np.isclose(lo, 0.23659, atol=1e-4) and np.isclose(hi, 0.76341, atol=1e-4)
    rng = np.random.default_rng(37); n, p = 40, 0.3
    cover = np.mean([(lambda k: wilson_interval(k, n)[0] <= p <= wilson_interval(k, n)[1])(rng.binomial(n, p)) for _ in range(2000)])
    assert 0.92 <= cover <= 0.98


def test_position_bias_separates_position_from_content():
    inst = paper_instances()
    content = menu_study(_ContentLM(), [inst['HP2']])
    assert np.allclose(position_bias(content)['excess'], 0)                 # content-driven: no excess in any position

    class _First:
        def answer_probabilities(self, prompts, options):
            return np.array([[0.7] + [0.3 / (len(options) - 1)] * (len(options) - 1)] * len(prompts))
    pb = position_bias(menu_study(_First(), [inst['HP2'], inst['HP6']]))
    assert np.isclose(pb.loc[0, 'mean_probability'], 0.7) and pb.loc[0, 'excess'] > 0.4 and (pb.loc[1:, 'excess'] < 0).all()


def test_prose_answers_parse_only_when_every_good_has_one_owner():
    inst = paper_instances()
    p = parse_allocation('I would give Good A to Person 2 and Good C to Person 1, while Person 3 receives Good B, Good D.', inst['HP2'])
    assert p['status'] == 'parsed' and p['owners'] == [1, 2, 0, 2] and p['read_as'] == 'prose'
    assert parse_allocation('Give Good A to Person 1, Good B to Person 2 and Good C to Person 3.', inst['HP3'])['reason'] == 'Good D is missing'
    assert 'more than one' in parse_allocation('Good A to Person 1; Good A to Person 2; Good B to Person 2; Good C to nobody', inst['HP1'])['reason']


def test_position_bias_uniform_share_is_per_menu_when_variations_are_pooled():
    class _First:
        def answer_probabilities(self, prompts, options):
            return np.array([[0.7] + [0.3 / (len(options) - 1)] * (len(options) - 1)] * len(prompts))
    hp2 = paper_instances()['HP2']                                        # a 4-option menu
    pooled = position_bias(menu_study(_First(), [hp2], personas=('none', 'EQ', 'USW'), templates=('sentences', 'table')))
    assert np.allclose(pooled['uniform'], 0.25) and np.isclose(pooled.loc[0, 'excess'], 0.45)


from dataclasses import replace  # noqa: E402

from trustml_nb.distributive_fairness import human_share_records  # noqa: E402


def test_human_share_records_match_the_oracle_and_flag_hp7():
    "The recorded human allocations, classified by the brute-force oracle (not the module), add up to the recorded shares."
    inst = paper_instances()
    for name in ('HP2', 'HP5', 'HP6', 'HP7'):
        i = inst[name]; agents = list(i.valuations.index); goods = list(i.valuations.columns)
        props = _oracle(i.valuations.to_numpy().astype(int).tolist(), int(i.money))
        sums = dict.fromkeys(('EQ', 'EF', 'RMM', 'USW', 'PO'), 0.0)
        for a in i.human_allocations:
            key = (tuple(agents.index(a['owners'][g]) if a['owners'][g] else -1 for g in goods),
                   tuple(int((a.get('money') or {}).get(x, 0)) for x in agents))
            for p in sums: sums[p] += a['percent'] * (p in props[key])
        ours = human_share_records(i).set_index('property')['from_allocations']
        assert {p: round(v, 4) for p, v in sums.items()} == ours.to_dict()
        if name != 'HP7': assert all(abs(sums[p] - i.human_shares[p]) < 0.05 for p in sums)    # complete records: equal
    hp7 = human_share_records(inst['HP7']).set_index('property')
    assert hp7.loc['PO', ['recorded', 'from_allocations']].tolist() == [12.7, 55.0] and hp7.loc['PO', 'verdict'].startswith('below')
    assert hp7.loc['RMM', 'verdict'] == 'equal' and hp7.loc['EF', 'verdict'] == 'above (other choices)'
    bad = replace(inst['HP5'], human_shares={**inst['HP5'].human_shares, 'EF': 60.0})          # a mistyped share is caught
    assert human_share_records(bad).set_index('property').loc['EF', 'verdict'].startswith('below')
    with pytest.raises(ValueError, match='per-allocation'): human_share_records(inst['HP1'])
    from trustml_nb.distributive_fairness import render_division
    assert 'recorded PO 12.7% is inconsistent' in render_division(money=5, instance='HP7')[0]          # the widget flags it
    assert 'inconsistent' not in render_division(money=0, instance='HP2')[0]
