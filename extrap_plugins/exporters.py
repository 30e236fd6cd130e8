"""Built-in exporters: text table, JSON, CSV (being written)."""

from extrap_plugins.hookspecs import hookimpl


@hookimpl
def extrap_exporters():
    return []
