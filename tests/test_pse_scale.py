"""Cross-fitting at scale (issue 38, item 3): a nested regression that several targets share, and NIE*'s P(X=1 | Z), are
fitted once, with the same numbers as fitting every target's chain on its own."""
import numpy as np

from trustml_nb.pse import GLMRegressor, PathSpecificEffects, crossfit_gmf
from trustml_nb.pse_simulator import sim_oximetry

TARGETS = [(1, 1, 1), (0, 0, 0), (0, 0, 1), (1, 0, 1)]


class _CountingRegressor(GLMRegressor):
    "A GLM regressor that counts its fits (class-wide: clones count too)."
    fits = 0

    def fit(self, X, y):
        type(self).fits += 1
        return super().fit(X, y)


def _data(n=3000):
    sim = sim_oximetry(n, seed=3); d, R = sim.data, sim.roles
    return (d[R['x']].to_numpy(), d['duration'].to_numpy(float), [d[R['z']].to_numpy(float), d[R['w']].to_numpy(float), d[R['v']].to_numpy(float)])


def test_shared_stages_are_fitted_once_with_the_numbers_of_separate_chains():
    x, y, blocks = _data()
    _CountingRegressor.fits = 0
    joint = crossfit_gmf(x, y, blocks, TARGETS, learners={'propensity': 'glm', 'outcome': _CountingRegressor(), 'pseudo': _CountingRegressor()},
                         n_folds=3, binary_y=False)
    # per fold: one regression for each of (1,1,1) and (0,0,0); (0,0,1) and (1,0,1) share their last stage (Y on H_2 among X=1),
    # then 1 + 2 pseudo-outcome stages: 6 fits, not 7
    assert _CountingRegressor.fits == 6 * 3
    for a in TARGETS:   # each target cross-fitted on its own: nothing shared, the same numbers to the bit
        alone = crossfit_gmf(x, y, blocks, [a], learners='glm', n_folds=3, binary_y=False)
        assert np.array_equal(alone.regressions[a], joint.regressions[a])
        assert all(np.array_equal(p, q) for p, q in zip(alone.raw_propensities, joint.raw_propensities))


def test_nie_star_reuses_the_first_propensity_model_and_changes_nothing():
    from trustml_nb.pse import _crossfit, make_learners
    x, y, blocks = _data(2000)
    L = make_learners('glm', binary_y=False)
    kw = dict(n_folds=3, clip=0.01, seed=0, min_group_rows=10, n_jobs=1)
    main = _crossfit(x, y, blocks, TARGETS, L, False, **kw)[0]
    fresh = _crossfit(x, y, [blocks[0], blocks[2]], [(0, 1)], L, False, **kw)[0]
    reused = _crossfit(x, y, [blocks[0], blocks[2]], [(0, 1)], L, False, known=[{0: main.raw_propensities[0]}], **kw)[0]
    assert np.array_equal(fresh.raw_propensities[0], main.raw_propensities[0])   # the same model: same Z, rows, folds and seed
    assert all(np.array_equal(p, q) for p, q in zip(fresh.raw_propensities, reused.raw_propensities))
    assert np.array_equal(fresh.regressions[(0, 1)], reused.regressions[(0, 1)])


def test_the_effects_table_does_not_depend_on_the_number_of_workers():
    # the tasks run longest first and their results are put back in order: two workers give the one-worker table
    sim = sim_oximetry(3000, seed=4); R = sim.roles
    fit = lambda j: PathSpecificEffects(exposure=R['x'], covariates=R['z'], mediators_first=R['w'], mediators_second=R['v'], outcome='vented',
                                        learners='glm', n_folds=3, n_jobs=j, warn=False).fit(sim.data).report_.table
    assert fit(1).equals(fit(2))
