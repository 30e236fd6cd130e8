"""The built-in exporters, one module each; every one is a plugin listed in ``DEFAULT_PLUGINS``.

=========================  ===============  ==============================================
module                     exporter         writes
=========================  ===============  ==============================================
``text_exporter``          ``text``         an aligned table (the CLI's default)
``json_exporter``          ``json``         the versioned machine interface
``csv_exporter``           ``csv``          one row per model
``extrap_jsonl_exporter``  ``extrap-jsonl``  the measurements, as Extra-P's JSON Lines
``plot_exporter``          ``plot``         one figure per model (matplotlib)
``html_exporter``          ``html``         a self-contained report (``assets/``)
=========================  ===============  ==============================================

``_options`` holds what they share: the common options (target, sort,
values, level) and their reading.
"""
