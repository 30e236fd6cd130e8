"""``python -m extrap_plugins.instrument app.py [ARGS...]``: measure a program without changing it
(:mod:`extrap_plugins.instrument.launch`)."""

from .launch import main

main()
