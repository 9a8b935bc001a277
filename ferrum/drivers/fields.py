# SPDX-License-Identifier: Apache-2.0
"""Reading one field of a node's ``driver_info``, checked without I/O.

Each hardware type's ``driver_info`` module parses its own fields with
these, so that a wrong value is refused the same way whatever the driver:
``InvalidParameterValue`` saying "driver_info <field> <what is wrong>".
A message repeats a value only where it cannot be a secret.
"""

from collections.abc import Mapping
from typing import Any

from ferrum.common import exception


def fail(field: str, reason: str) -> exception.InvalidParameterValue:
    """The error for a wrong ``field``: "driver_info <field> <reason>"."""
    return exception.InvalidParameterValue(
        reason='driver_info %s %s' % (field, reason))


def string(info: Mapping[str, Any], field: str) -> str:
    """A text field; '' when absent. NUL and line breaks are refused: the
    value may reach a command line, a header or a log line."""
    value = info.get(field)
    if value is None:
        return ''
    if not isinstance(value, str):
        raise fail(field, 'must be a string')
    if any(char in value for char in '\x00\r\n'):
        raise fail(field, 'must not contain NUL or newline characters')
    return value


def choice(info: Mapping[str, Any], field: str, choices: tuple[str, ...],
           default: str) -> str:
    """One of ``choices`` (as spelt there), matched ignoring case and
    surrounding blanks; ``default`` when absent or empty."""
    value = info.get(field)
    if value is None or value == '':
        return default
    text = str(value).strip()
    for known in choices:
        if text.lower() == known.lower():
            return known
    raise fail(field, 'must be one of %s, not "%s"'
               % (', '.join(choices), text[:100]))
