# SPDX-License-Identifier: Apache-2.0
"""Who is calling and what it may do: the one place handlers ask.

The request context is built once per request, here (:func:`load_context`):

- ``auth_strategy = keystone``: from the identity headers keystonemiddleware
  set (``RequestContext.from_environ``); it removed any the client sent;
- ``noauth`` and ``http_basic``: a fixed system administrator, whatever
  identity headers the client sends, and the policy is not consulted (as
  Ironic's ``policy.authorize`` does under those strategies).

Every handler reaches a resource through :func:`node`, :func:`port`,
:func:`portgroup`, :func:`allocation` or :func:`lease`: get-or-404, then
the resource's read rule (failing it is the same 404 as a missing
resource, so a project cannot learn what exists outside it), then the
action's rule (failing it is a 403: the caller may know the resource but
not change it). Lists ask :func:`list_project` which project they are
confined to.
"""

import logging
from collections.abc import Callable, Mapping
from typing import Any, cast

import flask
import yaml
from oslo_config import cfg
from oslo_context import context as context_mod

from ferrum.api import auth
from ferrum.api import authorizer as authorizer_mod
from ferrum.api import microversion
from ferrum.api import node_lookup
from ferrum.api import policy
from ferrum.api import services
from ferrum.common import exception
from ferrum.common import requester
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import base
from ferrum.objects import lease as lease_obj
from ferrum.objects import node as node_obj
from ferrum.objects import port as port_obj
from ferrum.objects import portgroup as portgroup_obj

LOG = logging.getLogger(__name__)

_ENFORCER = 'FERRUM_POLICY'
_ADMIN_ROLES = ['admin', 'manager', 'member', 'reader']


class Forbidden(exception.FerrumException):
    msg_fmt = 'Access was denied to the following resource: %(rule)s'
    code = 403


class PolicyUnusable(exception.TemporaryFailure):
    msg_fmt = ('The API cannot check permissions: its policy file is '
               'unusable. Retry later; the server log has the details.')


def install(app: flask.Flask) -> None:
    """Build the app's one Enforcer (keystone only) and the context hook.

    :raises PolicyFileInvalid: the policy file or one of its rules does not
        parse.
    """
    conf = app.config['FERRUM_CONF']
    if conf.auth_strategy == 'keystone':
        app.config[_ENFORCER] = authorizer_mod.Authorizer(
            policy.enforcer(conf), conf.rbac_service_project_name
            if conf.rbac_service_role_elevated_access else None)
    app.before_request(load_context)
    app.teardown_request(_forget_requester)


def enforcing() -> bool:
    return _authorizer() is not None


def _authorizer() -> authorizer_mod.Authorizer | None:
    """The app's Authorizer, which ``keystone`` alone has (:func:`install`):
    one lookup per check, where reading the option through oslo.config
    cost more than a remembered decision."""
    return cast(authorizer_mod.Authorizer | None,
                flask.current_app.config.get(_ENFORCER))


def load_context() -> None:
    """The request's context, in ``flask.g``: see the module docstring."""
    if not enforcing():
        ctx = context_mod.RequestContext(
            user_id=flask.g.get('user'), roles=list(_ADMIN_ROLES),
            system_scope='all', is_admin=True)
    elif (auth.is_public(flask.request.path)
          or auth.allowed_scraper(flask.request.environ)):
        # auth_token did not see this request: its headers are the
        # client's own and count for nothing.
        ctx = context_mod.RequestContext(roles=[])
    else:
        ctx = context_mod.RequestContext.from_environ(flask.request.environ)
    flask.g.context = ctx
    # Who asked, for the events this request records (history's user).
    requester.set_requester(ctx.user_id, ctx.project_id)


def _forget_requester(_error: BaseException | None) -> None:
    # The server's thread serves other requests next.
    requester.set_requester(None, None)


def context() -> context_mod.RequestContext:
    return cast(context_mod.RequestContext, flask.g.context)


def allowed(rule: str, target: Mapping[str, Any] | None = None) -> bool:
    """Whether the caller passes ``rule`` on ``target``; a scope mismatch
    (a project token on a system-only rule) is a plain no."""
    authorizer = _authorizer()
    if authorizer is None:
        return True
    caller = flask.g.get('caller')
    if caller is None:
        # The request's first check: the file (at most once a second),
        # then the caller's credentials, once for all its checks.
        _refresh(authorizer)
        caller = flask.g.caller = authorizer_mod.Caller(
            _policy_values(context()))
    return authorizer.allowed(rule, target or {}, caller)


def _policy_values(ctx: context_mod.RequestContext) -> dict[str, Any]:
    """oslo.context's policy values and the project's name, which it
    leaves out and Ironic's context adds: Ironic's ``service_role`` rule
    (the nova and inspector service users, when ``[DEFAULT]
    rbac_service_role_elevated_access`` is set) matches on it. A plain
    dict: a key added to oslo's mapping would warn as deprecated on every
    read."""
    values = dict(ctx.to_policy_values())
    values['project_name'] = ctx.project_name
    return values


def _refresh(authorizer: authorizer_mod.Authorizer) -> None:
    """The policy file's check (see :meth:`Enforcer.check_file`).

    :raises PolicyUnusable: the file changed and does not parse.
    """
    try:
        authorizer.refresh()
    except authorizer_mod.StillUnusable:
        raise PolicyUnusable() from None  # logged when it was read
    except (ValueError, TypeError, AttributeError, yaml.YAMLError,
            cfg.Error, OSError) as exc:
        # The parsers' errors for a file that is not a mapping of strings,
        # and a file that cannot be read (permissions).
        LOG.error('API requests are refused until this is fixed: the policy '
                  'file %s is unusable: %s',
                  authorizer.enforcer.policy_path, exc)
        raise PolicyUnusable() from None


def check(rule: str, target: Mapping[str, Any] | None = None) -> None:
    """:raises Forbidden: the caller does not pass ``rule``."""
    if not allowed(rule, target):
        raise Forbidden(rule=rule)


def _reveal(read_rule: str, target: Mapping[str, Any],
            not_found: exception.NotFound) -> None:
    if not allowed(read_rule, target):
        raise not_found


# ---- targets ------------------------------------------------------------

def node_target(node: node_obj.Node) -> dict[str, str]:
    """What node rules compare the token's project with (unset: absent,
    so that no project matches it)."""
    return _node_target(node.owner, node.lessee)


def _node_target(owner: str | None, lessee: str | None) -> dict[str, str]:
    target = {}
    if owner:
        target['node.owner'] = owner
    if lessee:
        target['node.lessee'] = lessee
    return target


def allocation_target(owner: str | None) -> dict[str, str]:
    return {'allocation.owner': owner} if owner else {}


def lease_target(project: str) -> dict[str, str]:
    return {'lease.project': project}


# ---- the retrieval helpers ------------------------------------------------

def node(ident: str, rule: str, named: bool = False) -> node_obj.Node:
    """The node ``ident`` names, if the caller may see it and do ``rule``.

    :param named: looked up by name at every version (ferrum's extensions).
    :raises NodeNotFound: missing, or hidden from the caller.
    :raises Forbidden: visible, but ``rule`` is not allowed.
    """
    found = (node_lookup.get_named(ident, status=404) if named
             else node_lookup.get(ident))
    target = node_target(found)
    _reveal('baremetal:node:get', target,
            exception.NodeNotFound(node=ident))
    check(rule, target)
    return found


def visible_node(found: node_obj.Node, ident: str) -> node_obj.Node:
    """``found`` if the caller may see it, else the 404 of a missing one."""
    _reveal('baremetal:node:get', node_target(found),
            exception.NodeNotFound(node=ident))
    return found


def named_node(ident: str) -> node_obj.Node:
    """The node a body or query value names; one hidden from the caller is
    the same 400 as an unknown one (see :func:`node_lookup.get_named`)."""
    found = node_lookup.get_named(ident)
    if not allowed('baremetal:node:get', node_target(found)):
        raise node_lookup.unknown(ident)
    return found


def parent_uuid(ident: str, owner: str | None, own_uuid: str | None
                ) -> str:
    """The UUID of the parent node ``ident`` names (API 1.83), as Ironic
    links one: a node the caller may see, with the same ``owner`` as the
    child. Anything else is one 400 that says nothing of whether the
    node exists. A node cannot be its own parent (it would hide itself
    from every list)."""
    refused = exception.InvalidParameterValue(
        reason="Unable to apply the requested parent_node '%s'. Requested "
               "value was invalid." % ident[:100])
    try:
        found = node_lookup.get(ident)
    except exception.NodeNotFound:
        raise refused from None
    if (not allowed('baremetal:node:get', node_target(found))
            or found.owner != owner or found.uuid == own_uuid):
        raise refused
    return found.uuid


def candidate_uuids(idents: list[str]) -> list[str]:
    """Candidate nodes (names or UUIDs) as UUIDs; one hidden from the
    caller is the same 400 as an unknown one
    (see :func:`node_lookup.candidate_uuids`)."""
    found = node_lookup.candidate_uuids(idents)
    if not enforcing() or allowed('baremetal:node:list_all'):
        return found
    nodes = node_obj.Node.list(services.db(), {'uuid_in': found})
    hidden = {n.uuid for n in nodes if not allowed('baremetal:node:get',
                                                   node_target(n))}
    if hidden:
        by_uuid = node_obj.uuids_of(services.db(), idents)
        first = next(ident for ident in idents if by_uuid[ident] in hidden)
        raise node_lookup.unknown(first)
    return found


def port(ident: str, rule: str) -> port_obj.Port:
    """The port ``ident`` names, judged by its node's owner and lessee."""
    # Ports have no names before 1.88, so anything else names no port.
    if base.is_uuid_like(ident):
        found = port_obj.Port.get(services.db(), ident)
    elif microversion.at_least(88):
        found = port_obj.Port.get_by_name(services.db(), ident)
    else:
        raise exception.PortNotFound(port=ident[:100])
    target = node_target(node_obj.Node.get(services.db(), found.node_id))
    _reveal('baremetal:port:get', target, exception.PortNotFound(port=ident))
    check(rule, target)
    return found


def portgroup(ident: str, rule: str) -> portgroup_obj.Portgroup:
    """The group ``ident`` (UUID or name) names, judged as Ironic judges
    it: hidden (404) unless the caller may see its node
    (``baremetal:node:get``), then ``rule`` (403)."""
    found = portgroup_obj.Portgroup.get(services.db(), ident)
    target = node_target(node_obj.Node.get(services.db(), found.node_id))
    _reveal('baremetal:node:get', target,
            exception.PortgroupNotFound(portgroup=ident))
    check(rule, target)
    return found


def allocation(ident: str, rule: str) -> allocation_obj.Allocation:
    found = allocation_obj.Allocation.get(services.db(), ident)
    return allocation_checked(found, ident, rule)


def allocation_checked(found: allocation_obj.Allocation, ident: str,
                       rule: str) -> allocation_obj.Allocation:
    """``found`` (named ``ident`` by the client), if ``rule`` allows."""
    target = allocation_target(found.owner)
    _reveal('baremetal:allocation:get', target,
            exception.AllocationNotFound(allocation=ident))
    check(rule, target)
    return found


def lease(ident: str, rule: str) -> lease_obj.Lease:
    found = lease_obj.Lease.get(services.db(), ident)
    target = lease_target(found.project)
    _reveal('baremetal:lease:get', target,
            exception.LeaseNotFound(lease=ident))
    check(rule, target)
    return found


def node_redactions() -> Callable[[node_obj.Node], frozenset[str]]:
    """What to redact on each node of this request, as Ironic does: nothing
    for a caller past ``baremetal:node:get:filter_threshold`` (decided once
    per request), else each field whose ``baremetal:node:get:<field>``
    rule it fails on that node."""
    if allowed('baremetal:node:get:filter_threshold'):
        return _nothing
    fields = policy.REDACTED_NODE_FIELDS
    # The answer depends on the node's owner and lessee only: a page of a
    # thousand nodes has a handful of pairs, so checks stay per pair.
    known: dict[tuple[str | None, str | None], frozenset[str]] = {}

    def hidden(found: node_obj.Node) -> frozenset[str]:
        pair = (found.owner, found.lessee)
        if pair not in known:
            target = node_target(found)
            known[pair] = frozenset(name for name in fields if not allowed(
                'baremetal:node:get:%s' % name, target))
        return known[pair]
    return hidden


def _nothing(_node: node_obj.Node) -> frozenset[str]:
    return frozenset()


def node_field_readable(field: str
                        ) -> Callable[[str | None, str | None], bool]:
    """Whether the caller may read a node's ``field`` (one of Ironic's
    redacted fields), by the node's owner and lessee, as
    :func:`node_redactions` decides it: always past
    ``baremetal:node:get:filter_threshold``, else by
    ``baremetal:node:get:<field>``. For what the event feed repeats of a
    node's fields (its errors: ``last_error``)."""
    if allowed('baremetal:node:get:filter_threshold'):
        return lambda _owner, _lessee: True
    return node_readable('baremetal:node:get:%s' % field)


def node_readable(rule: str) -> Callable[[str | None, str | None], bool]:
    """Whether the caller passes ``rule`` on a node, by the node's owner
    and lessee (decided once per pair for this request)."""
    known: dict[tuple[str | None, str | None], bool] = {}

    def readable(owner: str | None, lessee: str | None) -> bool:
        if (owner, lessee) not in known:
            known[owner, lessee] = allowed(rule, _node_target(owner, lessee))
        return known[owner, lessee]
    return readable


def list_project(kind: str, asked: str | None = None) -> str | None:
    """The project a list of ``kind`` is confined to; None for all.

    As Ironic's ``check_list_policy``: ``baremetal:<kind>:list_all`` sees
    everything; otherwise ``baremetal:<kind>:list`` sees the caller's
    project only, and a filter (``asked``) naming another is refused.

    :raises Forbidden: neither rule allows, or ``asked`` names another
        project.
    """
    if allowed('baremetal:%s:list_all' % kind):
        return None
    project = context().project_id
    if not project or (asked and asked != project):
        raise Forbidden(rule='baremetal:%s:list_all' % kind)
    check('baremetal:%s:list' % kind)
    return str(project)
