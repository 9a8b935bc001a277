# SPDX-License-Identifier: Apache-2.0
"""Small shared pieces of the object layer: timestamps and identifiers."""

import datetime
import uuid as uuidlib


def utcnow() -> datetime.datetime:
    """Naive UTC now, as the database stores it."""
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def is_uuid_like(value: object) -> bool:
    """Whether ``value`` is a UUID string in any of its usual spellings."""
    if not isinstance(value, str):
        return False
    if len(value) not in (32, 36):
        return False
    try:
        uuidlib.UUID(value)
    except ValueError:
        return False
    return True


def new_uuid() -> str:
    return str(uuidlib.uuid4())
