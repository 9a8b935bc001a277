# SPDX-License-Identifier: Apache-2.0
"""``GET /v1/events?since=<id>``: the event feed (ferrum's extension).

Node history entries and allocation and lease events in the order of
their ids, which are committed in increasing order
(:mod:`ferrum.objects.event`): a follower that asks again with the last id
it saw gets every later event exactly once. The answer comes at once with
what is there (possibly nothing); ``next`` is the URL to ask next, with
``since`` moved past the events returned, or, when the page is not full,
to the newest event (of any project) there was when it was read. No
microversion gates it.

Under ``keystone``, ``baremetal:event:list_all`` (a system reader) sees
every event; otherwise ``baremetal:event:list`` sees the events of the
caller's project: of nodes it owned or leased when the event happened, of
its allocations and of its leases. A node's error (an ``ERROR`` entry of
its history) reads as Ironic's redaction text to a caller without
``baremetal:node:get:last_error`` on the node, as ``last_error`` does on
the node itself (a lessee, by default); its ``user`` (who asked for the
change) is null to a caller without ``baremetal:node:history:get`` on the
node, who may not read the node's history either. An allocation's or a
lease's event shows its ``user`` to that user's project (and to a system
reader) only.
"""

import urllib.parse
from typing import Any

import flask

from ferrum.api import access
from ferrum.api import listing
from ferrum.api import services
from ferrum.api.views import event as event_view
from ferrum.common import exception
from ferrum.objects import event as event_obj


def _since() -> int:
    raw = flask.request.args.get('since', '0')
    # ASCII digits only: str.isdigit() also takes '²', which int() refuses.
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 18:
        raise exception.InvalidParameterValue(
            reason='since must be the id of an event (a whole number 0 or '
                   'more), not "%s".' % raw[:100])
    return int(raw)


def list_events() -> dict[str, Any]:
    since, limit = _since(), listing.parse_limit()
    unknown = set(flask.request.args) - {'since', 'limit'}
    if unknown:
        raise exception.InvalidParameterValue(
            reason='Unknown query parameter(s) %s; /v1/events takes since '
                   'and limit.' % ', '.join(sorted(unknown))[:200])
    project = access.list_project('event')
    db = services.db()
    # Read before the events: a page that is not full then covers every
    # event up to it, and ``next`` moves there, past the other projects'
    # events too. A project's filter has no index, so a quiet project's
    # follower would otherwise scan again, at every poll, all the events
    # since its own last one.
    newest = event_obj.newest(db)
    rows = event_obj.since(db, since, limit, project, upto=newest)
    last = rows[-1]['id'] if len(rows) == limit else max(since, newest)
    query = urllib.parse.urlencode({'since': last, 'limit': limit})
    readable = event_view.Readable(
        errors=access.node_field_readable('last_error'),
        users=access.node_readable('baremetal:node:history:get'),
        project=project)
    return {'events': [event_view.render(row, readable) for row in rows],
            'next': '%sv1/events?%s' % (listing.base_url(), query)}
