"""The ``talpas`` reader: the Talpas format Extra-P 4 reads (``extrap --talpas``).

One measured value per line, JSON with ``;`` between the members::

    {"parameters":{"x":20};"metric":"time";"callpath":"compute";"value":82.0}

``parameters``, ``metric``, ``callpath`` and ``value`` are required (as in
Extra-P); lines with the same parameters, call path and metric are
repetitions; blank lines are skipped.  As in Extra-P, every ``;`` in a line
is read as a ``,`` (so names cannot contain ``;``), and every call path and
metric must be measured at every point (``--reader-option incomplete=allow``
relaxes that).
"""

from __future__ import annotations

import pathlib
import re

from extrap_plugins.errors import InputError
from extrap_plugins.experiment import Experiment
from extrap_plugins.hookspecs import hookimpl
from extrap_plugins.registration import ReaderInfo

from ._common import (
    EMPTY_FILE, INCOMPLETE_OPTION, check_options, choice, first_content_line, head_readings, read_text,
    universal_newlines,
)
from .json_reader import JsonLines, finish, read_json_lines

NAME = "talpas"
OPTIONS = dict(INCOMPLETE_OPTION)
#: (Keys in another case too: the reader says they are not read.)
_SNIFF = re.compile(rb'^\{.*"(parameters|metric|callpath|value)"\s*:.*;\s*"(parameters|metric|callpath|value)"\s*:',
                    re.IGNORECASE)


@hookimpl
def extrap_readers() -> list[ReaderInfo]:
    return [
        ReaderInfo(
            name=NAME,
            read=read,
            description='Talpas records, one per line: '
                        '{"parameters":{"x":20};"metric":"time";"callpath":"f";"value":1.5}',
            patterns=("*.txt", "*.talpas"),
            sniff=sniff,
            options=OPTIONS,
        )
    ]


def sniff(path: pathlib.Path) -> bool:
    """The first non-blank line is a ``{...}`` record with ``;`` between its members (in UTF-16 without its
    byte-order mark too, which the reader then refuses, saying so)."""
    return any(_SNIFF.match(first_content_line(data)) for data in head_readings(path))


def read(path: pathlib.Path, options: dict[str, str]) -> Experiment:
    """Read a Talpas file."""
    settings = check_options(options, OPTIONS, NAME)
    allow_incomplete = choice(settings, "incomplete", ("error", "allow"), "error") == "allow"
    text = universal_newlines(read_text(path))
    if not text.strip():
        raise InputError(EMPTY_FILE, path)
    lines = JsonLines(text, path, separator=";")
    columns = read_json_lines(lines, path, params_key="parameters", require_names=True)
    return finish(columns, path, allow_incomplete, lines.line_of, reader=NAME)
