"""Option values from text (command line, reader/exporter options, environment): one set of words and messages.

======================  ====================================================
:func:`one_line`        an error message as one line of reasonable length
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
import difflib
import os
import re
import sys
from numbers import Integral
from typing import Sequence

__all__ = ["TRUE", "FALSE", "one_line", "parse_bool", "env_flag", "parse_int", "parse_fraction", "parse_share",
           "guess_type", "Parser"]

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


LONGEST_WORD = 300
"""Characters of a word (no blank in it) an error message shows whole; a longer one is cut in its middle."""


def one_line(message: str) -> str:
    """An error message as one line of reasonable length: its control characters (a newline or a tab in a value
    the user gave) as escapes, and a word of more than :data:`LONGEST_WORD` characters (a 100,000-character value
    said back) cut in its middle, saying how much is left out.

    >>> print(one_line("--size 'a" + chr(10) + "b': no such parameter"))
    --size 'a\\nb': no such parameter
    >>> shown = one_line("-o '" + "x" * 100_000 + "': is a folder")
    >>> len(shown), shown[61:97]
    (167, 'xx… (99,883 characters left out) …xx')
    """
    from .formatting import printable

    def cut(match: re.Match) -> str:
        word = match.group(0)
        return f"{word[:60]}… ({len(word) - 120:,} characters left out) …{word[-60:]}"

    return re.sub(rf"\S{{{LONGEST_WORD + 1},}}", cut, printable(str(message)))


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


def is_number(text: str) -> bool:
    """Whether ``text`` spells a number ``float`` reads (``"1e3"``, ``" 2 "``, ``"nan"``; not ``"1,5"``)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def split_values(text: str) -> list[str]:
    """``"4,8,16"`` -> ``["4", "8", "16"]``: a list of values on the command line (``--param``, ``--np``), each
    stripped; one comma at the end is allowed, an empty value between commas is not (``4,8,,32``: a value was
    left out, and dropping it silently would measure another design).

    >>> split_values(" 4, 8,16,")
    ['4', '8', '16']

    Raises
    ------
    ValueError
        Saying a value is missing between commas.
    """
    items = [item.strip() for item in text.split(",")]
    if len(items) > 1 and not items[-1]:
        items.pop()
    if any(not item for item in items) and any(items):
        raise ValueError("a value is missing between commas")
    return [item for item in items if item]


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
    lines, before the line that says what is wrong); ``--help`` still shows the usage.

    In a command whose last positional takes the rest of the line (``run``, ``autotune`` and the sweep's own
    ``-- PROGRAM [ARGS]``), an option it does not know before the program is one line naming it, with the known
    option it is closest to: argparse took the option's value for the program's first word, and the program
    swallowed the options after it (``autotune --parm p=1,2 -o runs -- app`` said that -o was missing).  The
    program begins at ``--`` or at the first word that is neither an option nor an option's value; from there on
    every word is the program's, as before."""

    def error(self, message: str):
        if message.startswith("argument ") and message.endswith(": expected one argument"):
            option = message[len("argument "):].split(":")[0].split("/")[0]
            message += f" (a value that starts with '-' is written {option}=VALUE)"
        self.exit(2, f"{self.prog}: error: {one_line(message)}; see {self.prog} --help\n")

    def parse_args(self, args=None, namespace=None):
        """As argparse's, but words no option takes are refused by the command they were given to, naming the
        option meant (``efficiency --procs p``: "did you mean --processes?"), not by the top-level parser."""
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            commands = next((a for a in self._actions if isinstance(a, argparse._SubParsersAction)), None)
            parser = commands.choices.get(getattr(namespace, commands.dest, None), self) if commands else self
            option = next((word.split("=")[0] for word in extras if word.startswith("--")), None)
            close = difflib.get_close_matches(option, list(parser._option_string_actions), n=1, cutoff=0.75) \
                if option else []
            parser.error(f"unrecognized arguments: {' '.join(extras)}"
                         + (f" (did you mean {close[0]}?)" if close else ""))
        return namespace

    def parse_known_args(self, args=None, namespace=None):
        words = sys.argv[1:] if args is None else list(args)
        refuse_nul(self, words)
        if any(action.nargs == argparse.REMAINDER for action in self._actions if not action.option_strings):
            unknown = unknown_option_before_program(self, words)
            if unknown is not None:
                close = difflib.get_close_matches(unknown, list(self._option_string_actions), n=1, cutoff=0.75)
                where = "before '--'" if "--" in words else "before the program"
                hint = f"; did you mean {close[0]}?" if close else ""
                self.error(f"unrecognized option '{unknown}' ({where}){hint}")
        return super().parse_known_args(words, namespace)



def refuse_nul(parser: argparse.ArgumentParser, words: Sequence[str]) -> None:
    """A word with a NUL byte is one line naming its option: no file name, value or program argument can hold one
    (``main()`` called with it raised "ValueError: embedded null byte" where the word became a path or a launch)."""
    for i, word in enumerate(words):
        if "\0" in word:
            option, attached, value = word.partition("=") if word.startswith("-") else ("", "", word)
            if not attached:
                option, value = (words[i - 1] if i and words[i - 1].startswith("-") else ""), word
            where = f"argument {option}: " if option else ""
            parser.error(f"{where}{value!r} holds a NUL byte, which no file name, value or argument can hold")


NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")
"""A word argparse takes for a value, not an option (as its ``_negative_number_matcher``)."""


def unknown_option_before_program(parser: argparse.ArgumentParser, words: Sequence[str]) -> str | None:
    """The name of the first option ``parser`` does not know among ``words`` before the program (``--``, or the first
    word that is neither an option nor an option's value), or None.

    Known options are matched as argparse does (``--param=V``, ``-oDIR``, ``--par`` for ``--param``) and their value
    is skipped. A word this cannot be sure of (an ambiguous abbreviation, a cluster of short flags, an option with a
    variable number of values) ends the look: argparse decides it, as before.

    >>> parser = argparse.ArgumentParser(); _ = parser.add_argument("-o"); _ = parser.add_argument("rest", nargs="...")
    >>> unknown_option_before_program(parser, ["--parm", "p=1", "-o", "runs", "--", "app", "--x"])
    '--parm'
    >>> unknown_option_before_program(parser, ["-o", "runs", "app", "--parm"]) is None
    True
    """
    known = parser._option_string_actions
    position = 0
    while position < len(words):
        word = words[position]
        if word == "--" or not word.startswith("-") or word == "-" or NEGATIVE_NUMBER.match(word):
            return None  # the program begins
        position += 1
        name, equals, _ = word.partition("=")
        action, attached = known.get(name), bool(equals)
        if action is None and name.startswith("--") and parser.allow_abbrev:
            matches = [option for option in known if option.startswith(name)]
            if len(matches) > 1:
                return None  # ambiguous: argparse says so
            action = known[matches[0]] if matches else None
        if action is None and not name.startswith("--") and word[:2] in known:
            action, attached = known[word[:2]], True  # -oDIR
            if action.nargs == 0:
                return None  # a cluster of short flags
        if action is None:
            return None if " " in word else name  # argparse takes a word with a space for a value
        if action.nargs is None and not attached:
            position += 1  # its value
        elif action.nargs not in (0, None):
            return None
    return None
