# SPDX-License-Identifier: Apache-2.0
"""How a request names a node, per microversion, as in Ironic.

- From 1.5 a node may be addressed by name as well as by UUID; before, a
  name finds nothing (404), exactly as Ironic answered before names existed.
  A name in a query filter (``?node=``) before 1.5 is refused with a 406
  that names the version it needs, as Ironic refuses one for ports.
- Candidate node lists (allocations from 1.52; leases, ferrum's extension,
  at every version) take names whatever the version.
- Names follow two grammars: hostname-safe (RFC 952/1123) before 1.10, and
  RFC 3986 unreserved characters from 1.10. A name may never look like a
  UUID, which would make addressing ambiguous.
"""

import re

import flask

from ferrum.api import json_suffix
from ferrum.api import microversion
from ferrum.api import services
from ferrum.common import exception
from ferrum.objects import base
from ferrum.objects import node as node_obj

_NAMES_MINOR = 5
_UNRESERVED_MINOR = 10
#: Before 1.10: a lower-case host name with optional dotted domain parts.
_HOSTNAME_SAFE = re.compile(r'^[a-z0-9]([a-z0-9\-]{0,61}[a-z0-9])?'
                            r'(\.[a-z0-9\-_]{0,62}[a-z0-9])*\.?$')
#: From 1.10: RFC 3986 unreserved characters.
_UNRESERVED = re.compile(r'^[A-Za-z0-9._~-]+$')
#: Path words under /v1/nodes that a name would shadow.
RESERVED_NAMES = ('detail',)


def get(ident: str) -> node_obj.Node:
    """The node ``ident`` names at the request's version.

    :raises NodeNotFound: no such node, or a name before 1.5.
    """
    if not base.is_uuid_like(ident) and not microversion.at_least(
            _NAMES_MINOR):
        raise exception.NodeNotFound(node=ident[:100])
    try:
        return node_obj.Node.get(services.db(), ident)
    except exception.NodeNotFound:
        # Before 1.91 the path's ".json" was dropped: it may be the name's.
        if not flask.request.environ.get(json_suffix.STRIPPED):
            raise
        return node_obj.Node.get(services.db(), ident + '.json')


def check_name(name: str) -> None:
    """Refuse (400) a node name the request's version does not allow."""
    if microversion.at_least(_UNRESERVED_MINOR):
        valid = len(name) <= 255 and bool(_UNRESERVED.match(name))
        grammar = 'letters, digits and "-._~" (RFC 3986 unreserved)'
    else:
        valid = len(name) <= 255 and bool(_HOSTNAME_SAFE.match(name))
        grammar = ('a lower-case host name (letters, digits, "-", dotted '
                   'parts); API 1.10 and later also allow "_~" and upper '
                   'case')
    if not valid:
        raise exception.InvalidParameterValue(
            reason='Invalid node name "%s": use %s.' % (name[:100], grammar))
    if base.is_uuid_like(name):
        raise exception.InvalidParameterValue(
            reason='A node name cannot look like a UUID: %s' % name)
    if name in RESERVED_NAMES:
        raise exception.InvalidParameterValue(
            reason='The word "%s" is reserved and cannot be used as a node '
                   'name. Reserved words are: %s.'
                   % (name, ', '.join(RESERVED_NAMES)))


def get_named(ident: str, status: int = 400) -> node_obj.Node:
    """The node a body or query value names: unknown is a 400 there (a
    bad value in the request), or a 404 with ``status=404`` (the path).

    :raises VersionTooOld: a name in a body or query before 1.5 (406, as
        a name in the ports' node filter): it was never looked up, so "not
        found" would send the client looking for a typo.
    """
    try:
        return get(ident)
    except exception.NodeNotFound:
        if status == 404:
            raise
        if not base.is_uuid_like(ident):
            microversion.require(_NAMES_MINOR, 'A node name')
        raise unknown(ident) from None


def unknown(ident: str) -> exception.InvalidParameterValue:
    return exception.InvalidParameterValue(
        reason='Node %s could not be found; give an existing node UUID '
               'or name.' % ident[:255])


def candidate_uuids(idents: list[str]) -> list[str]:
    """Names and UUIDs -> UUIDs, in the order given, without repeats.

    One query, however many candidates: metalsmith sends every node its
    own filters kept.
    """
    found = node_obj.uuids_of(services.db(), idents)
    missing = [ident for ident in idents if ident not in found]
    if missing:
        # Looked up by name at every version (see the module docstring).
        raise unknown(missing[0])
    return list(dict.fromkeys(found[ident] for ident in idents))
