"""An example third-party modeler: a power law fitted in log-log space, one series at a time."""

import warnings

import numpy as np

from extrap_plugins import Factor, ModelerInfo, Term, hookimpl


class PowerLaw:
    """y = c * x1^a1 * ... * xm^am, by least squares on log(y) (scikit-learn style)."""

    def __init__(self, parameters=("p",)):
        self.parameters = parameters  # the host passes the experiment's parameter names

    def fit(self, X, y):
        if np.any(X <= 0) or np.any(y <= 0):
            warnings.warn("power law needs positive parameters and values; fitting the mean", stacklevel=2)
            self.constant_, self.terms_ = float(np.mean(y)), []
            return self
        A = np.column_stack([np.ones(len(y)), np.log(X)])
        (log_c, *exponents), *_ = np.linalg.lstsq(A, np.log(y), rcond=None)
        self.constant_ = 0.0
        self.terms_ = [Term(float(np.exp(log_c)), {n: Factor(float(a), 0) for n, a in zip(self.parameters, exponents)})]
        return self

    def predict(self, X):
        if not self.terms_:
            return np.full(len(X), self.constant_)
        exponents = [f.exponent for f in self.terms_[0].factors.values()]
        return self.terms_[0].coefficient * np.prod(np.power(X, exponents), axis=1)


@hookimpl
def extrap_modelers():
    return [ModelerInfo("powerlaw", PowerLaw, "power law c·x^a fitted in log-log space (example plugin)")]
