"""No hidden global state (issue 33, item 5).

1. Fitting any public estimator and running its fitted methods (predict, predict_proba, transform...) leaves the caller's
   global random generators as they were: Python's `random`, numpy's legacy `np.random` and torch's default generator.
   A method that needs global seeding does it inside `core.isolated_seed`, which restores the caller's states.
2. Importing any module of the package, in a fresh interpreter, changes neither `os.environ` nor those generators
   (what Ray or Flower need is set in the processes they start, not in the user's process).

Every public estimator (tests/contract.py `package_estimators`, the same discovery as tests/test_api.py) has a small fit in
`contract.small_fits()`; a meta-test fails when one does not, so a new estimator cannot skip this contract.
"""
import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from contract import package_estimators, small_fits

ROOT = Path(__file__).resolve().parents[1]
ESTIMATORS = package_estimators()
FITS = small_fits()


def _states():
    "The three global generator states, in comparable form."
    mt = np.random.get_state()
    return dict(python=random.getstate(), numpy=(mt[0], mt[1].tolist(), *mt[2:]), torch=torch.random.get_rng_state().tolist())


def _changed(before, after):
    return [k for k in before if before[k] != after[k]]


def test_every_estimator_has_a_small_fit():
    "Meta-test: a new public estimator must get a case in contract.small_fits(), or this contract silently misses it."
    missing = sorted(set(ESTIMATORS) - set(FITS))
    assert not missing, f"estimators without a small fit in tests/contract.py small_fits(): {missing}"
    stale = sorted(set(FITS) - set(ESTIMATORS))
    assert not stale, f"small_fits() names classes that are not public estimators (renamed?): {stale}"


@pytest.mark.parametrize('name', sorted(FITS))
def test_fit_and_predict_leave_global_generators_alone(name):
    case = FITS[name]()
    est = case.make()
    random.seed(12345); np.random.seed(54321); torch.manual_seed(2024)    # distinctive caller states, not the seeds a method might use
    before = _states()
    case.fit(est)
    after_fit = _states()
    assert not _changed(before, after_fit), f"{name}.fit changed the caller's global generator(s) {_changed(before, after_fit)}"
    case.outputs(est)
    after = _states()
    assert not _changed(before, after), f"{name}'s fitted methods changed the caller's global generator(s) {_changed(before, after)}"
    # as the issue saw it: after a fit, the caller's next draw is the one its own seed gives, not the one after seed 0
    assert np.random.rand() == np.random.RandomState(54321).rand()


@pytest.mark.skipif(not __import__('trustml_nb.llm', fromlist=['x']).llm_available(), reason='the llm extra (offline model) is not installed')
def test_generate_with_a_seed_leaves_global_generators_alone():
    "BlackBoxLM.generate(seed=...) and sample_next_token(seed=...) are reproducible without reseeding the caller's torch generator."
    from trustml_nb.llm import BlackBoxLM
    lm = BlackBoxLM(cache=False, show_progress=False)
    q = 'Which number is larger? A) 21 B) 10. Answer A or B.'
    torch.manual_seed(2024); random.seed(1); np.random.seed(1)
    before = _states()
    first = lm.generate(q, max_new_tokens=2, seed=3)
    lm.sample_next_token(q, n_samples=5, seed=3)
    assert not _changed(before, _states()), f"BlackBoxLM.generate/sample_next_token changed the caller's generator(s) {_changed(before, _states())}"
    assert lm.generate(q, max_new_tokens=2, seed=3) == first


# ---- imports: a fresh interpreter -------------------------------------------------------------------------------

_PROBE = textwrap.dedent('''
    import importlib, json, os, random, sys
    def states():
        import numpy as np, torch
        mt = np.random.get_state()
        return dict(python=repr(random.getstate()), numpy=repr((mt[0], mt[1].tolist(), *mt[2:])), torch=torch.random.get_rng_state().tolist())
    def diff(env, st):
        new_env, new_st = dict(os.environ), states()
        return dict(added=sorted(set(new_env) - set(env)), removed=sorted(set(env) - set(new_env)),
                    changed=sorted(k for k in env if k in new_env and env[k] != new_env[k]), generators=[k for k in st if st[k] != new_st[k]])
    third_party, modules = json.loads(sys.argv[1]), json.loads(sys.argv[2])
    import numpy as np, torch
    random.seed(7); np.random.seed(7); torch.manual_seed(7)
    env, st = dict(os.environ), states()
    for name in third_party:                 # the package's dependencies first: what they do at their own import is not ours
        try: importlib.import_module(name)
        except Exception: pass
    out = {'third-party': diff(env, st)}
    for name in modules:                     # then each module of the package, in a process that has imported none of it
        random.seed(7); np.random.seed(7); torch.manual_seed(7)
        env, st = dict(os.environ), states()
        try: importlib.import_module(name)
        except ImportError as e: out[name] = dict(skipped=str(e)); continue
        out[name] = diff(env, st)
    print(json.dumps(out))
''')


def _module_names():
    import pkgutil
    import trustml_nb
    return ['trustml_nb'] + [f'trustml_nb.{m.name}' for m in pkgutil.iter_modules(trustml_nb.__path__) if not m.name.startswith('_')]


def _third_party_imports():
    "Top-level third-party modules the package's files import at module level (`import x`, `from x.y import z`)."
    import re
    names = set()
    for p in (ROOT / 'trustml_nb').glob('*.py'):
        for m in re.finditer(r"^(?:import|from)\s+([A-Za-z_][\w.]*)", p.read_text(), re.M):
            if not m.group(1).startswith(('trustml_nb', '__future__')): names.add(m.group(1))
    return sorted(names)


@pytest.fixture(scope='module')
def import_effects():
    "Import every module of the package in one fresh interpreter with a minimal environment; what each import changed."
    # a minimal environment: this pytest process has imported the package already, so variables an import sets are in
    # os.environ here and would be inherited (os.environ.setdefault in the child would then change nothing)
    env = {k: os.environ[k] for k in ('PATH', 'HOME', 'LANG', 'TMPDIR') if k in os.environ}
    env['PYTHONPATH'] = os.pathsep.join([str(ROOT)] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p])
    out = subprocess.run([sys.executable, '-c', _PROBE, json.dumps(_third_party_imports()), json.dumps(_module_names())],
                         capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)
    assert out.returncode == 0, f"the import probe failed: {out.stderr[-3000:]}"
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize('module', _module_names())
def test_import_changes_no_environment_variable_or_generator(module, import_effects):
    """Importing `module` (the first time in a fresh interpreter, after the package's third-party dependencies) changes no
    environment variable and no global generator. A change made by a module it imports is reported at the first module
    that imports it (the package itself, `trustml_nb`, is imported first)."""
    res = import_effects[module]
    if 'skipped' in res: pytest.skip(f"{module} needs an optional extra: {res['skipped']}")
    assert not (res['added'] or res['removed'] or res['changed']), (
        f"importing {module} changed os.environ: added {res['added']}, removed {res['removed']}, changed {res['changed']}")
    assert not res['generators'], f"importing {module} changed the global generator(s) {res['generators']}"
