"""Reader plugins, installed as ``extrap_plugins.readers``.

Each module registers its readers through the ``extrap_readers`` hook.
"""
