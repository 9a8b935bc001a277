# SPDX-License-Identifier: Apache-2.0
"""Lease windows: parsing times, the rules a window must follow, free gaps.

Times travel as ISO 8601 with a time zone (a naive time is taken as UTC)
and are stored as naive UTC, as every ferrum timestamp is.
"""

import datetime
from collections.abc import Iterable

from oslo_config import cfg

from ferrum.common import exception

Window = tuple[datetime.datetime, datetime.datetime]


def parse(what: str, value: str) -> datetime.datetime:
    """An ISO 8601 time as naive UTC, or a 400 naming ``what``."""
    try:
        parsed = datetime.datetime.fromisoformat(value.replace('Z', '+00:00'))
        if parsed.tzinfo is not None:
            parsed = parsed.astimezone(datetime.timezone.utc).replace(
                tzinfo=None)
    except (ValueError, AttributeError, OverflowError):
        raise exception.InvalidParameterValue(
            reason='%s must be an ISO 8601 time such as '
                   '"2026-12-01T18:00:00Z", not "%s".' % (what,
                                                          str(value)[:60])
        ) from None
    if not datetime.datetime(1970, 1, 2) <= parsed <= datetime.datetime(
            9999, 1, 1):
        raise exception.InvalidParameterValue(
            reason='%s is out of range: %s.' % (what, value[:60]))
    return parsed.replace(microsecond=0)


def render(value: datetime.datetime | None) -> str | None:
    return None if value is None else value.isoformat() + '+00:00'


def check(conf: cfg.ConfigOpts, start: datetime.datetime,
          end: datetime.datetime, now: datetime.datetime,
          new: bool = True) -> None:
    """Refuse (400) a window that breaks the [lease] rules.

    :param new: the start is being chosen now, so it may not lie in the
        past beyond ``start_grace``.
    """
    if end <= start:
        raise exception.InvalidParameterValue(
            reason='The lease must end after it starts (start %s, end %s).'
                   % (render(start), render(end)))
    grace = datetime.timedelta(seconds=conf.lease.start_grace)
    if new and start < now - grace:
        raise exception.InvalidParameterValue(
            reason='The lease start %s is in the past; leave start out to '
                   'start now.' % render(start))
    if end <= now:
        raise exception.InvalidParameterValue(
            reason='The lease end %s is in the past.' % render(end))
    longest = conf.lease.max_duration
    if longest and (end - start).total_seconds() > longest:
        raise exception.InvalidParameterValue(
            reason='The lease lasts %d seconds; at most %d are allowed '
                   '([lease] max_duration).'
                   % ((end - start).total_seconds(), longest))


def before_end(conf: cfg.ConfigOpts, start: datetime.datetime,
               end: datetime.datetime,
               asked: datetime.datetime | None) -> datetime.datetime | None:
    """When the before_end event fires: as asked, else end minus
    ``[lease] before_end`` (never before the start), else never."""
    if asked is not None:
        if not start <= asked <= end:
            raise exception.InvalidParameterValue(
                reason='before_end must lie between the start and the end '
                       'of the lease.')
        return asked
    if not conf.lease.before_end:
        return None
    return max(start, end - datetime.timedelta(seconds=conf.lease.before_end))


def free_gaps(busy: Iterable[Window], start: datetime.datetime,
              end: datetime.datetime) -> list[Window]:
    """The parts of [start, end) that no busy window covers."""
    gaps: list[Window] = []
    cursor = start
    for busy_start, busy_end in sorted(busy):
        if busy_start > cursor:
            gaps.append((cursor, min(busy_start, end)))
        cursor = max(cursor, busy_end)
        if cursor >= end:
            break
    if cursor < end:
        gaps.append((cursor, end))
    return [gap for gap in gaps if gap[0] < gap[1]]
