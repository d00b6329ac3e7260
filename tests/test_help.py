"""`help()` on every public function and class of every module lists each parameter with its meaning (core.document_parameters),
read from the comments beside the parameters by fastcore's docments (core.param_docs), which adds only the shared-line rule
`lo, hi, # bounds`; it agrees with docments wherever docments finds a comment."""
import importlib
import inspect
import linecache
import pkgutil
import pydoc
import re
import sys
import textwrap

import pytest
from contract import package_modules
from fastcore.docments import docments

import trustml_nb
from trustml_nb.core import document_parameters, param_docs



_modules = package_modules


def _own_init(cls)->bool:
    "The class's constructor is trustml_nb's (not another library's, e.g. matplotlib's Figure)."
    klass = next(k for k in cls.__mro__ if '__init__' in vars(k))
    return klass is not object and klass.__module__.startswith('trustml_nb')


def _public_callables():
    found = {}
    for mod in _modules():
        for name, obj in vars(mod).items():
            if name.startswith('_') or getattr(obj, '__module__', None) != mod.__name__: continue
            if inspect.isfunction(obj) or (isinstance(obj, type) and not issubclass(obj, BaseException) and _own_init(obj)):
                found[f"{mod.__name__}.{name}"] = obj
    return found


CALLABLES = _public_callables()


def test_there_are_many_public_callables():
    assert len(CALLABLES) > 300, len(CALLABLES)


def _undescribed(obj)->list:
    "The parameters of `obj` that help(obj) does not describe."
    params = [p for p in inspect.signature(obj).parameters if p not in ('self', 'cls')]
    text = pydoc.render_doc(obj, renderer=pydoc.plaintext)
    return [p for p in params if not re.search(rf"^[\s|]*{re.escape(p)} : (?!\(undocumented\))\S", text, re.M)]


@pytest.mark.parametrize('name', sorted(CALLABLES))
def test_help_lists_every_parameter_with_its_meaning(name):
    missing = _undescribed(CALLABLES[name])
    assert not missing, f"help({name}) does not describe: {missing}"


def _public_methods():
    "Public methods with parameters that trustml_nb wrote (not ones another library generated, e.g. matplotlib's Artist.set)."
    found = {}
    for mod in _modules():
        for cname, cls in vars(mod).items():
            if cname.startswith('_') or getattr(cls, '__module__', None) != mod.__name__ or not isinstance(cls, type) \
                    or issubclass(cls, BaseException): continue
            for mname, meth in vars(cls).items():
                fn = getattr(meth, '__func__', meth)
                if mname.startswith('_') or not inspect.isfunction(fn) or fn.__module__ != mod.__name__: continue
                if any(p not in ('self', 'cls') for p in inspect.signature(fn).parameters): found[f"{mod.__name__}.{cname}.{mname}"] = fn
    return found


METHODS = _public_methods()


def test_there_are_many_public_methods():
    assert len(METHODS) > 150, len(METHODS)


@pytest.mark.parametrize('name', sorted(METHODS))
def test_help_on_a_method_lists_every_parameter_with_its_meaning(name):
    missing = _undescribed(METHODS[name])
    assert not missing, f"help({name}) does not describe: {missing}"


def _write_module(tmp_path, monkeypatch, source):
    path = tmp_path / 'docs_demo_mod.py'
    path.write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop('docs_demo_mod', None); linecache.checkcache()
    return importlib.import_module('docs_demo_mod')


def test_the_reader_on_the_layouts_docments_allows(tmp_path, monkeypatch):
    mod = _write_module(tmp_path, monkeypatch, '''
        from dataclasses import dataclass
        def f(
            a:int, # first "#" text
            # the second,
            # on two lines
            b='x # not a comment',
            lo=0, hi=1, # bounds
            *args, # more values
            flag:bool=False, # a switch
            **kwargs, # settings
        )->float: # the result
            "Demo."
            return 1.0
        def g(x): return x
        def h(y:int)->int: # what h returns
            "No parameter comment."
            return y
        @dataclass
        class Point:
            "A point."
            x: float # abscissa
            label: str = 'p' # its name
        class Thing:
            "A thing."
            def __init__(self,
                         size:int, # how big
                        ): self.size = size
            def grow(self, by:int=1): # how much
                "Grow."
                self.size += by
        ''')
    docs = param_docs(mod.f)
    assert docs == {'a': 'first "#" text', 'b': 'the second, on two lines', 'lo': 'bounds', 'hi': 'bounds', 'args': 'more values',
                    'flag': 'a switch', 'kwargs': 'settings', 'return': 'the result'}
    assert param_docs(mod.g) == {'x': ''}
    assert param_docs(mod.h) == {'y': '', 'return': 'what h returns'}
    assert param_docs(mod.Point) == {'x': 'abscissa', 'label': 'its name'}
    assert param_docs(mod.Thing) == {'size': 'how big'}
    done = document_parameters('docs_demo_mod', extra={'g': {'x': 'the value'}})
    assert sorted(done) == ['Point', 'Thing', 'Thing.grow', 'f', 'g', 'h'], done
    assert mod.f.__doc__.startswith('Demo.\n\nParameters\n----------\na : first "#" text\nb : the second, on two lines')
    assert mod.f.__doc__.endswith('\n\nReturns\n-------\nthe result')
    assert 'x : the value' in mod.g.__doc__ and 'y : (undocumented)' in mod.h.__doc__
    assert 'x : abscissa' in mod.Point.__init__.__doc__ and mod.Point.__doc__ == 'A point.'   # the class docstring stays one line
    assert 'by : how much' in mod.Thing.grow.__doc__
    assert document_parameters('docs_demo_mod') == []          # a second call adds nothing


def test_the_reader_agrees_with_fastcore_docments():
    "Peer check: wherever fastcore's docments finds a comment for a parameter, ours finds the same text."
    compared = 0
    for name, obj in CALLABLES.items():
        target = obj.__init__ if isinstance(obj, type) else obj
        if isinstance(obj, type) and getattr(target, '__code__', None) is None or getattr(target.__code__, 'co_filename', '') == '<string>': continue
        theirs, ours = docments(target), param_docs(obj)
        for p, text in theirs.items():
            if p in ('self', 'return') or not text: continue
            assert ours.get(p) == text, f"{name}.{p}: ours {ours.get(p)!r}, docments {text!r}"
            compared += 1
    assert compared > 1000, compared
