"""A stacked nuisance learner for the issue-13 side-by-side comparison (config `stack` of bench_pse_coverage_nonlinear.py):
GLM + additive cubic splines + the package's boosting preset, combined with non-negative weights fitted on a 25% holdout
(least squares on the predictions, i.e. the Brier score for probabilities), then every learner with a positive weight refitted on all rows."""
import numpy as np
from scipy.optimize import nnls
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import SplineTransformer, StandardScaler
from trustml_nb.pse import GLMClassifier, GLMRegressor, make_learners


class _Stack(BaseEstimator):
    def __init__(self, base=None, holdout=0.25, seed=0):
        self.base, self.holdout, self.seed = base, holdout, seed

    def _cands(self): return self.base

    def fit(self, X, y):
        X, y = np.asarray(X, float), np.asarray(y)
        rng = np.random.default_rng(self.seed)
        idx = rng.permutation(len(X)); m = int(len(X) * self.holdout)
        ho, tr = idx[:m], idx[m:]
        P = np.column_stack([self._pred(clone(c).fit(X[tr], y[tr]), X[ho]) for c in self._cands()])
        w, _ = nnls(P, np.asarray(y[ho], float))
        w = w / w.sum() if w.sum() > 0 else np.eye(len(w))[np.argmin(((P - y[ho, None]) ** 2).mean(0))]
        self.weights_ = w
        self.models_ = [clone(c).fit(X, y) if wi > 0 else None for c, wi in zip(self._cands(), w)]
        if hasattr(self, '_classes'): self.classes_ = np.array([0, 1])
        return self

    def _mix(self, X):
        X = np.asarray(X, float)
        return sum(wi * self._pred(m, X) for m, wi in zip(self.models_, self.weights_) if m is not None)


class StackClassifier(ClassifierMixin, _Stack):
    _classes = True
    def _pred(self, m, X): return m.predict_proba(X)[:, 1]
    def predict_proba(self, X):
        p = np.clip(self._mix(X), 1e-6, 1 - 1e-6); return np.column_stack([1 - p, p])
    def predict(self, X): return (self.predict_proba(X)[:, 1] > 0.5).astype(int)


class StackRegressor(RegressorMixin, _Stack):
    def _pred(self, m, X): return m.predict(X)
    def predict(self, X): return self._mix(X)


def stack_learners(binary_y, seed=0):
    hgb = make_learners('hgb', binary_y, seed)
    spl = lambda est: make_pipeline(StandardScaler(), SplineTransformer(n_knots=6, degree=3, extrapolation='linear'), est)
    clf = [GLMClassifier(), spl(LogisticRegression(C=1.0, max_iter=500)), hgb['propensity']]
    reg = [GLMRegressor(), spl(Ridge(alpha=1.0)), hgb['pseudo']]
    return {'propensity': StackClassifier(clf, seed=seed), 'outcome': StackClassifier(clf, seed=seed) if binary_y else StackRegressor(reg, seed=seed),
            'pseudo': StackRegressor(reg, seed=seed)}
