# SPDX-License-Identifier: Apache-2.0
"""Reading one field of a node's ``driver_info`` (or ``instance_info``),
checked without I/O.

Each hardware type's ``driver_info`` module parses its own fields with
these, so that a wrong value is refused the same way whatever the driver:
``InvalidParameterValue`` saying "driver_info <field> <what is wrong>".
A message repeats a value only where it cannot be a secret.
"""

import urllib.parse
from collections.abc import Mapping
from typing import Any

from ferrum.common import exception


def fail(field: str, reason: str, where: str = 'driver_info'
         ) -> exception.InvalidParameterValue:
    """The error for a wrong ``field``: "<where> <field> <reason>"."""
    return exception.InvalidParameterValue(
        reason='%s %s %s' % (where, field, reason))


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


def http_url(text: str, field: str, credentials_hint: str,
             where: str = 'driver_info') -> urllib.parse.SplitResult:
    """``text``, an http:// or https:// URL with a host, split.

    :param credentials_hint: what the message refusing credentials in the
        URL says after "must not hold credentials: " (why, or where they
        go instead).
    :param where: ``driver_info`` or ``instance_info``, for messages.
    :raises InvalidParameterValue: it is not one. The user part of a URL
        may hold a password: credentials are refused before any message
        repeats the value, and a value with an ``@`` that is not a URL is
        not repeated at all.
    """
    netloc = text.split('://', 1)[-1].split('/', 1)[0]
    if '@' in netloc.split('?', 1)[0].split('#', 1)[0]:
        raise fail(field, 'must not hold credentials: ' + credentials_hint,
                   where)
    shown = ('"%s"' % text[:200] if '@' not in text
             else 'this value (not repeated: it may hold a password)')
    try:
        url = urllib.parse.urlsplit(text)
        url.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        raise fail(field, 'is not a URL (%s): %s' % (exc, shown),
                   where) from None
    # urlsplit drops tabs and line breaks silently ("bmc\t1" would become
    # host bmc1), so they are refused here, with blanks.
    if (url.scheme not in ('http', 'https') or not url.hostname
            or any(char in text for char in '\x00\t\r\n ')):
        raise fail(field, 'must be an http:// or https:// URL with a host, '
                   'not %s' % shown, where)
    return url
