"Scripts of benchmarks/ loaded as modules, so tests can check the pieces they define (importing one loads no model)."
import importlib.util
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / 'benchmarks'


def benchmark_script(name:str):
    "benchmarks/<name>.py as a module, loaded once per test process."
    if name in sys.modules: return sys.modules[name]
    if str(BENCHMARKS) not in sys.path: sys.path.insert(0, str(BENCHMARKS)) # the scripts import one another by name
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f'{name}.py')
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
