"""trustml_nb.oath, issue 33 item 1: the audit's challenge cannot be predicted by the provider.

With a seed the provider knows, a cheater written here (independently of the package: it re-derives the sample from
numpy's default_rng, one permutation per declared group) alters about a tenth of the declared outcomes outside the sample and
a true parity gap of about 0.22 is certified at half that tolerance. With the default (OS CSPRNG, drawn after the claims) the
same cheat is caught in at least 49 of 50 audits; two default audits open different samples; a report's challenge_seed
replays its sample exactly."""
from fractions import Fraction

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

import trustml_nb.oath as oath
from trustml_nb.oath import SCALE, Auditor, InferenceOracle, Provider, audit, escape_probability, simulate_service

NU, N_QUERIES, THETA, FIXED_SEED = 50, 1000, 11_300, 0


def synthetic(n=3000, d=4, seed=0, shift=0.85):
    "Two groups; the model's positive rate is higher in group 1 (true parity gap about 0.23 on the served log)."
    rng = np.random.default_rng(seed)
    s = (rng.uniform(size=n) < 0.4).astype(int)
    X = rng.normal(size=(n, d)); X[:, 0] += shift * s
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(0, 0.5, n) > 0.3).astype(int)
    return X, s, LogisticRegression().fit(X, y)


X, S, MODEL = synthetic()


class SeedKnowingCheater(Provider):
    "Serves and commits honestly; declares 1 -> 0 in the higher-rate group, outside the sample the known seed opens, until the test passes."
    def __init__(self, model, seed, nu, theta):
        super().__init__(model); self.known_seed, self.nu, self.theta = seed, nu, theta

    def predicted_sample(self, g):
        rng = np.random.default_rng(self.known_seed)          # the documented sampler: one permutation per declared group, group 0 first
        return np.concatenate([np.flatnonzero(g == k)[rng.permutation(int((g == k).sum()))[:self.nu]] for k in (0, 1)])

    def _claimed(self, st):
        g, o = st['groups'], st['outcomes'].copy()
        opened = np.zeros(len(g), bool); opened[self.predicted_sample(g)] = True
        n = [int((g == k).sum()) for k in (0, 1)]; c = [int(o[g == k].sum()) for k in (0, 1)]
        hi = int(Fraction(c[1], n[1]) > Fraction(c[0], n[0]))
        for j in np.flatnonzero(~opened & (g == hi) & (o == 1)):
            if abs(Fraction(c[0], n[0]) - Fraction(c[1], n[1])) <= Fraction(self.theta, SCALE): break
            o[j] = 0; c[hi] -= 1
        return st['ids'], g, o

    def altered(self):
        st = self.state
        return self._claimed(st)[2] != st['outcomes']


@pytest.fixture(scope='module')
def cheat():
    prov = SeedKnowingCheater(MODEL, FIXED_SEED, NU, THETA); aud = Auditor(prov.public_key)
    simulate_service(prov, aud, X, S, N_QUERIES, block_size=100, seed=0, show_progress=False)
    return prov, aud


def true_gap(prov):
    st = prov.state; g, o = st['groups'], st['outcomes']
    return abs(o[g == 0].mean() - o[g == 1].mean())


def test_a_known_seed_lets_the_cheat_be_certified_and_the_report_says_it_is_not_sound(cheat):
    prov, aud = cheat
    alt = prov.altered()
    assert 0.20 <= true_gap(prov) <= 0.25 and 0.03 <= alt.mean() <= 0.12          # a true gap of about 0.23; 50 of 1,000 declared outcomes altered
    assert not alt[prov.predicted_sample(prov.state['groups'])].any()              # none inside the seed's sample
    rep = audit(aud, prov, InferenceOracle(MODEL), sample_per_group=NU, theta=THETA, seed=FIXED_SEED)
    assert rep.certified and not rep.cheating_detected and rep.tolerance == pytest.approx(0.113)    # the attack works
    assert rep.sound is False and rep.challenge_source == 'seed given by the caller' and rep.challenge_seed == FIXED_SEED
    assert any(n.startswith('NOT SOUND') for n in rep.notes)


def test_default_randomness_catches_the_same_cheat_in_at_least_49_of_50(cheat):
    prov, aud = cheat
    oracle, caught, seeds = InferenceOracle(MODEL), 0, set()
    for k in range(50):
        rep = audit(aud, prov, oracle, sample_per_group=NU, theta=THETA, raise_on_failure=False, check_log=k == 0)
        caught += rep.cheating_detected; seeds.add(getattr(rep, 'challenge_seed', None))
        assert rep.failed_check in ('', 'consistency') and getattr(rep, 'sound', True)
    g = prov.state['groups']; alt = prov.altered()
    exact = escape_probability(np.bincount(g, minlength=2), np.bincount(g[alt], minlength=2), NU)
    print(f"caught {caught}/50 with default randomness; exact escape probability {exact:.3g}")
    assert caught >= 49 and exact < 1e-3
    assert len(seeds) == 50                                   # a fresh 128-bit challenge every time


class Recording(Provider):
    "An honest provider that remembers which ids it was asked to open, and when its claims were read."
    def __init__(self, model, events=None): super().__init__(model); self.opened, self.events = [], events
    def claims(self):
        if self.events is not None: self.events.append('claims')
        return super().claims()
    def open(self, query_ids):
        self.opened.append(np.asarray(query_ids).copy()); return super().open(query_ids)


def honest_log(events=None):
    prov = Recording(MODEL, events); aud = Auditor(prov.public_key)
    simulate_service(prov, aud, X, S, 600, block_size=100, seed=1, show_progress=False)
    return prov, aud


def test_two_default_audits_open_different_samples():
    prov, aud = honest_log()
    for _ in range(2): audit(aud, prov, InferenceOracle(MODEL), sample_per_group=20, theta=SCALE)
    a, b = prov.opened
    assert len(a) == len(b) == 40 and not np.array_equal(np.sort(a), np.sort(b))


def test_the_challenge_is_drawn_after_the_claims_and_a_third_party_can_replay_it(monkeypatch):
    events = []
    prov, aud = honest_log(events)
    draw = oath.secrets.randbits
    monkeypatch.setattr(oath.secrets, 'randbits', lambda k: (events.append('challenge'), draw(k))[1])
    rep = audit(aud, prov, InferenceOracle(MODEL), sample_per_group=20, theta=SCALE)
    assert events == ['claims', 'challenge'] and rep.sound and rep.challenge_seed.bit_length() > 64
    assert np.array_equal(rep.sampled_ids, prov.opened[-1])
    cl = prov.claims()
    assert np.array_equal(cl.query_ids[oath.challenge_sample(cl.groups, 20, rep.challenge_seed)], rep.sampled_ids)      # replay by hand
    again = audit(aud, prov, InferenceOracle(MODEL), sample_per_group=20, theta=SCALE, seed=rep.challenge_seed)                    # replay by the package
    assert np.array_equal(again.sampled_ids, rep.sampled_ids) and again.claims_digest == rep.claims_digest and not again.sound


def test_the_packaged_attacker_also_escapes_a_known_seed_and_is_caught_otherwise(cheat):
    _, _ = cheat
    prov = oath.SamplePredictingProvider(MODEL, seed=FIXED_SEED, sample_per_group=NU, theta=THETA); aud = Auditor(prov.public_key)
    simulate_service(prov, aud, X, S, N_QUERIES, block_size=100, seed=0, show_progress=False)
    alt = prov.altered_
    assert 0 < alt.sum() <= 0.12 * N_QUERIES
    assert audit(aud, prov, InferenceOracle(MODEL), sample_per_group=NU, theta=THETA, seed=FIXED_SEED).certified
    caught = sum(audit(aud, prov, InferenceOracle(MODEL), sample_per_group=NU, theta=THETA, raise_on_failure=False, check_log=False).cheating_detected
                 for _ in range(20))
    assert caught >= 19
