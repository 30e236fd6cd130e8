"""Tests of the modeling engine (extrap_plugins/modelers and its numerical core)."""
