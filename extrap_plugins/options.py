"""Option values from text (command line, reader/exporter options, environment): one set of words and messages.

======================  ====================================================
:func:`parse_bool`      ``on/off``, ``true/false``, ``yes/no``, ``1/0``
:func:`env_flag`        an environment variable read with :func:`parse_bool`
:func:`parse_int`       a whole number in a range
:func:`parse_fraction`  a number in [0, 1)
:func:`parse_share`     a share in (0, 1), as ``5%`` or ``0.05``
:func:`guess_type`      ``--option KEY=VALUE`` text to bool, int, float or str
:class:`Parser`         the command line's parser: a mistake is one line
======================  ====================================================

Errors are :class:`ValueError` whose text names the option, what was expected
and what was given; callers turn them into :class:`~extrap_plugins.errors.InputError`.
"""

from __future__ import annotations

import argparse
import os
from numbers import Integral

__all__ = ["TRUE", "FALSE", "parse_bool", "env_flag", "parse_int", "parse_fraction", "parse_share",
           "guess_type", "Parser"]

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


def parse_bool(value: object, name: str) -> bool:
    """A yes/no option.

    >>> parse_bool("on", "parallel"), parse_bool("No", "parallel"), parse_bool(True, "x")
    (True, False, True)
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, Integral) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in TRUE + FALSE:
        return value.strip().lower() in TRUE
    raise ValueError(f"{name}: expected on or off (true/false, yes/no, 1/0), got {value!r}")


def env_flag(variable: str) -> bool:
    """Whether the environment variable is set to a yes word (unset, empty or unknown words: no)."""
    return os.environ.get(variable, "").strip().lower() in TRUE


def parse_int(value: object, name: str, low: int, high: int | float = float("inf")) -> int:
    """A whole number from ``low`` to ``high`` (``7``, ``"7"`` and ``7.0`` are whole; ``True`` is not)."""
    expected = (f"a whole number from {low} to {high}" if high != float("inf")
                else f"a whole number of at least {low}")
    try:
        if isinstance(value, bool):
            raise ValueError
        if isinstance(value, float):
            if not value.is_integer():
                raise ValueError
            number = int(value)
        else:
            number = int(str(value).strip()) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected {expected}, got {value!r}") from None
    if not low <= number <= high:
        raise ValueError(f"{name}: expected {expected}, got {number}")
    return number


def parse_fraction(value: object, name: str) -> float:
    """A number from 0 up to (not including) 1."""
    expected = "a number from 0 up to (not including) 1"
    try:
        if isinstance(value, bool):
            raise ValueError
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected {expected}, got {value!r}") from None
    if not 0.0 <= number < 1.0:
        raise ValueError(f"{name}: expected {expected}, got {number:g}")
    return number


def parse_share(value: object, name: str, example: str = "5%") -> float:
    """A share strictly between 0 and 1, given as a percentage (``5%``) or a number (``0.05``)."""
    expected = f"a share between 0 and 1 (exclusive), such as {example} or {float(example[:-1]) / 100:g}"
    text = str(value).strip()
    try:
        if isinstance(value, bool):
            raise ValueError
        number = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise ValueError(f"{name}: expected {expected}, got {value!r}") from None
    if not 0.0 < number < 1.0:
        raise ValueError(f"{name}: expected {expected}, got {text}")
    return number


def guess_type(text: str) -> object:
    """``--option KEY=VALUE`` text as the value it spells: bool words, int, float, else the text.

    >>> guess_type("on"), guess_type("3"), guess_type("0.5"), guess_type("press")
    (True, 3, 0.5, 'press')
    """
    lowered = text.strip().lower()
    if lowered in TRUE[1:]:
        return True
    if lowered in FALSE[1:]:
        return False
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


class Parser(argparse.ArgumentParser):
    """An argument parser whose mistakes are one line and exit status 2 (argparse prints its whole usage, a dozen
    lines, before the line that says what is wrong); ``--help`` still shows the usage."""

    def error(self, message: str):
        if message.startswith("argument ") and message.endswith(": expected one argument"):
            option = message[len("argument "):].split(":")[0].split("/")[0]
            message += f" (a value that starts with '-' is written {option}=VALUE)"
        self.exit(2, f"{self.prog}: error: {message}; see {self.prog} --help\n")
