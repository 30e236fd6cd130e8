"""Small plugins the tests register on a fresh host."""

from __future__ import annotations

import sys

import numpy as np


class Mean:
    """A per-series (scikit-learn style) modeler: the mean of the values it was given."""

    def fit(self, X, y):
        self.constant_, self.terms_ = float(np.mean(y)), []
        return self

    def predict(self, X):
        return np.full(len(X), self.constant_)


class Exits:
    """A batched modeler whose ``fit_group`` calls ``sys.exit(code)`` (picklable: it goes to process workers)."""

    def __init__(self, code):
        self.code = code

    def fit_group(self, group, *, measure):
        sys.exit(self.code)


class Interrupted:
    """A batched modeler whose ``fit_group`` is interrupted (Ctrl-C)."""

    def fit_group(self, group, *, measure):
        raise KeyboardInterrupt
