"""Warnings point at the user's line: a warning about the user's data names the line of the user's code that called the
package, even when the package function that warns was reached through other package functions (issue 16: lesson 00's
DroppedRowsWarning pointed at the package's own source line)."""
import warnings

from trustml_nb.core import DroppedRowsWarning, SmallGroupWarning
from trustml_nb.data import adult_task
from trustml_nb.groups import intersect
from trustml_nb.multicalibration import adult_mc_task


def _caught(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        fn()
    return [w for w in caught if issubclass(w.category, (DroppedRowsWarning, SmallGroupWarning))]


def test_adult_task_warns_at_the_callers_line():
    caught = _caught(lambda: adult_task({'train': 0.5, 'test': None}, sensitive=('sex', 'race'), min_group_size=500, max_rows=3000, seed=0))
    kinds = {w.category for w in caught}
    assert kinds == {DroppedRowsWarning, SmallGroupWarning}, caught
    assert all(w.filename == __file__ for w in caught), [(w.category.__name__, w.filename, w.lineno) for w in caught]


def test_intersect_warns_at_the_callers_line():
    import pandas as pd
    A = pd.DataFrame({'sex': ['F', 'M'] * 50, 'race': ['a'] * 98 + ['b'] * 2})
    caught = _caught(lambda: intersect(A, min_size=5))
    assert [w.category for w in caught] == [SmallGroupWarning] and caught[0].filename == __file__, caught


def test_a_warning_raised_two_package_calls_deep_still_names_the_users_line():
    # adult_mc_task (multicalibration) -> adult_task (data) -> intersect (groups): the warnings come from data and groups
    caught = _caught(lambda: adult_mc_task(max_rows=2000, min_group_size=100, seed=0))
    assert {w.category for w in caught} == {DroppedRowsWarning, SmallGroupWarning}, caught
    assert all(w.filename == __file__ for w in caught), [(w.category.__name__, w.filename, w.lineno) for w in caught]
