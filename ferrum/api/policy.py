# SPDX-License-Identifier: Apache-2.0
"""Policy in code: Ironic's rule names and default check strings.

Operators' existing ``policy.yaml`` overrides for Ironic keep working: the
rule names and defaults are Ironic's secure-RBAC ones (system scope and
project scope; a node's ``owner`` and ``lessee`` projects). ferrum's own
resources, leases and the Placement status, follow the same style under
``baremetal:lease:*`` and ``baremetal:placement:*``.

oslo.policy always enforces scope when a rule declares ``scope_types``
(its ``enforce_scope`` option is gone), and ``enforce_new_defaults`` is
on, as Ironic sets it: no deprecated pre-RBAC rule is OR-ed in.

``oslopolicy-sample-generator --namespace ferrum`` writes the sample
(``etc/ferrum/policy.yaml.sample``) from :func:`list_rules`. The rules are
only evaluated under ``[DEFAULT] auth_strategy = keystone``; see
:mod:`ferrum.api.access`.
"""

import logging
import time
from typing import Any

import yaml
from oslo_config import cfg
from oslo_policy import _checks
from oslo_policy import policy

from ferrum.api import authorizer
from ferrum.common import exception
from ferrum.conf import tenancy

LOG = logging.getLogger(__name__)

# ---- personas (Ironic's check strings) -------------------------------------

SYSTEM_ADMIN = 'role:admin and system_scope:all'
SYSTEM_MEMBER = '(role:member and system_scope:all) or rule:service_role'
SYSTEM_READER = ('(role:reader and system_scope:all) or (role:service and '
                 'system_scope:all) or rule:service_role')
SYSTEM_SERVICE = 'role:service and system_scope:all'
PROJECT_ADMIN = 'role:admin and project_id:%(node.owner)s'
PROJECT_MEMBER = ('role:member and (project_id:%(node.owner)s or '
                  'project_id:%(node.lessee)s)')
PROJECT_READER = ('role:reader and (project_id:%(node.owner)s or '
                  'project_id:%(node.lessee)s)')
PROJECT_SERVICE = 'role:service and project_id:%(node.owner)s'
PROJECT_OWNER_ADMIN = 'role:admin and project_id:%(node.owner)s'
PROJECT_OWNER_MANAGER = 'role:manager and project_id:%(node.owner)s'
PROJECT_OWNER_MEMBER = 'role:member and project_id:%(node.owner)s'
PROJECT_OWNER_READER = 'role:reader and project_id:%(node.owner)s'
PROJECT_LESSEE_ADMIN = 'role:admin and project_id:%(node.lessee)s'
PROJECT_LESSEE_MANAGER = 'role:manager and project_id:%(node.lessee)s'
ALLOCATION_OWNER_MEMBER = 'role:member and project_id:%(allocation.owner)s'
ALLOCATION_OWNER_READER = 'role:reader and project_id:%(allocation.owner)s'
#: ferrum's: a lease belongs to the project it was booked for.
LEASE_PROJECT_MEMBER = 'role:member and project_id:%(lease.project)s'
LEASE_PROJECT_READER = 'role:reader and project_id:%(lease.project)s'


def _any(*checks: str) -> str:
    return ' or '.join('(%s)' % check for check in checks)


SYSTEM_OR_PROJECT_MEMBER = _any(SYSTEM_MEMBER, PROJECT_MEMBER, SYSTEM_SERVICE)
SYSTEM_OR_PROJECT_READER = _any(SYSTEM_READER, PROJECT_READER,
                                PROJECT_SERVICE)
SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN = _any(
    SYSTEM_MEMBER, SYSTEM_SERVICE, PROJECT_OWNER_MEMBER, PROJECT_LESSEE_ADMIN,
    PROJECT_LESSEE_MANAGER, PROJECT_SERVICE)
SYSTEM_MEMBER_OR_OWNER_LESSEE_ADMIN = _any(
    SYSTEM_MEMBER, SYSTEM_SERVICE, PROJECT_OWNER_ADMIN, PROJECT_OWNER_MANAGER,
    PROJECT_LESSEE_ADMIN, PROJECT_LESSEE_MANAGER, PROJECT_SERVICE)
SYSTEM_ADMIN_OR_OWNER_ADMIN = _any(SYSTEM_ADMIN, SYSTEM_SERVICE,
                                   PROJECT_OWNER_ADMIN, PROJECT_OWNER_MANAGER,
                                   PROJECT_SERVICE)
SYSTEM_MEMBER_OR_OWNER_ADMIN = _any(SYSTEM_MEMBER, SYSTEM_SERVICE,
                                    PROJECT_OWNER_ADMIN,
                                    PROJECT_OWNER_MANAGER, PROJECT_SERVICE)
SYSTEM_MEMBER_OR_OWNER_MEMBER = _any(SYSTEM_MEMBER, SYSTEM_SERVICE,
                                     PROJECT_OWNER_MEMBER, PROJECT_SERVICE)
SYSTEM_OR_OWNER_READER = _any(SYSTEM_READER, SYSTEM_SERVICE,
                              PROJECT_OWNER_READER, PROJECT_SERVICE)
ALLOCATION_MEMBER = _any(SYSTEM_MEMBER, ALLOCATION_OWNER_MEMBER)
ALLOCATION_READER = _any(SYSTEM_READER, ALLOCATION_OWNER_READER)
ALLOCATION_CREATOR = _any(SYSTEM_MEMBER, 'role:member')
API_READER = '(role:reader) or (role:service)'
#: Volume target properties may hold connection secrets (Ironic's).
TARGET_PROPERTIES_READER = _any(SYSTEM_READER, 'role:admin')
LEASE_MEMBER = _any(SYSTEM_MEMBER, LEASE_PROJECT_MEMBER)
LEASE_READER = _any(SYSTEM_READER, LEASE_PROJECT_READER)

_BOTH = ['system', 'project']
_NODE = '/nodes/{node_ident}'


def _rule(name: str, check: str, description: str,
          *operations: tuple[str, str],
          scope: list[str] | None = None) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(
        name=name, check_str=check, description=description,
        scope_types=scope or _BOTH,
        operations=[{'path': path, 'method': method}
                    for method, path in operations])


def _generic() -> list[policy.RuleDefault]:
    return [
        policy.RuleDefault(
            'service_role',
            'role:service and project_name:%(config.service_project_name)s',
            description='A service (nova, an inspector) calling with the '
                        'service role from the service project. As in '
                        'Ironic, config.service_project_name is set only '
                        'when [DEFAULT] rbac_service_role_elevated_access '
                        'is true (to rbac_service_project_name); otherwise '
                        'this rule matches nobody.'),
    ]


def _node_update(field: str, check: str, what: str) -> (
        policy.DocumentedRuleDefault):
    return _rule('baremetal:node:update:%s' % field, check,
                 'Governs if node %s can be updated via the API.' % what,
                 ('PATCH', _NODE))


#: The node fields each behind a ``baremetal:node:get:<field>`` rule, and
#: what a caller that fails it sees instead: Ironic's strings to the letter
#: (clients and operators match on them).
REDACTED_NODE_FIELDS: dict[str, Any] = {
    'last_error': ('** Value Redacted - Requires '
                   'baremetal:node:get:last_error permission. **'),
    'reservation': ('** Redacted - requires '
                    'baremetal:node:get:reservation permission. **'),
    'driver_internal_info': {'content': (
        '** Redacted - Requires baremetal:node:get:driver_internal_info '
        'permission. **')},
    'driver_info': {'content': (
        '** Redacted - requires baremetal:node:get:driver_info '
        'permission. **')},
}


def _nodes() -> list[policy.DocumentedRuleDefault]:
    lists = (('GET', '/nodes'), ('GET', '/nodes/detail'))
    get = ('GET', _NODE)
    redacted = [
        _rule('baremetal:node:get:%s' % field, SYSTEM_OR_OWNER_READER,
              'Governs if the node %s field is masked from API clients '
              'with insufficient privileges.' % field, get)
        for field in REDACTED_NODE_FIELDS]
    updates = [
        _node_update('driver_info', SYSTEM_MEMBER_OR_OWNER_MEMBER,
                     'driver_info'),
        _node_update('properties', SYSTEM_MEMBER_OR_OWNER_MEMBER,
                     'properties'),
        _node_update('chassis_uuid', SYSTEM_ADMIN, 'chassis_uuid'),
        _node_update('instance_uuid', SYSTEM_MEMBER_OR_OWNER_MEMBER,
                     'instance_uuid'),
        _node_update('lessee', SYSTEM_MEMBER_OR_OWNER_MEMBER, 'lessee'),
        _node_update('owner', SYSTEM_MEMBER, 'owner'),
        _node_update('driver_interfaces', SYSTEM_MEMBER_OR_OWNER_ADMIN,
                     'driver and interfaces'),
        _node_update('network_data', SYSTEM_MEMBER_OR_OWNER_MEMBER,
                     'network_data'),
        _node_update('conductor_group', SYSTEM_MEMBER, 'conductor_group'),
        _node_update('name', SYSTEM_MEMBER_OR_OWNER_MEMBER, 'name'),
        _node_update('retired', SYSTEM_MEMBER_OR_OWNER_MEMBER,
                     'retired and retired_reason'),
        _node_update('shard', SYSTEM_ADMIN, 'shard'),
        _node_update('parent_node', SYSTEM_MEMBER, 'parent_node'),
        _node_update('disable_power_off', SYSTEM_ADMIN, 'disable_power_off'),
    ]
    return [
        _rule('baremetal:node:create', _any(SYSTEM_ADMIN, SYSTEM_SERVICE),
              'Create Node records', ('POST', '/nodes')),
        _rule('baremetal:node:create:self_owned_node',
              '(role:admin) or (role:service)',
              'Create node records which will be tracked as owned by the '
              'associated user project.', ('POST', '/nodes')),
        _rule('baremetal:node:list', API_READER,
              'Retrieve multiple Node records, filtered by an explicit '
              'owner or the client project_id', *lists),
        _rule('baremetal:node:list_all', SYSTEM_READER,
              'Retrieve multiple Node records', *lists),
        _rule('baremetal:node:get', SYSTEM_OR_PROJECT_READER,
              'Retrieve a single Node record', get),
        _rule('baremetal:node:get:filter_threshold', SYSTEM_READER,
              'Filter to allow operators to govern the threshold where '
              'information should be filtered. Non-authorized users are '
              'subject to the baremetal:node:get:<field> checks.', get),
        *redacted,
        *updates,
        _rule('baremetal:node:update', SYSTEM_OR_PROJECT_MEMBER,
              'Generalized update of node records', ('PATCH', _NODE)),
        _rule('baremetal:node:disable_cleaning', SYSTEM_ADMIN,
              'Disable Node disk cleaning (automated_clean = false): a '
              'tenant must not keep the next tenant\'s disks unwiped',
              ('PATCH', _NODE)),
        _rule('baremetal:node:update_extra', SYSTEM_OR_PROJECT_MEMBER,
              'Update Node extra field', ('PATCH', _NODE)),
        _rule('baremetal:node:update_instance_info',
              SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN,
              'Update Node instance_info field', ('PATCH', _NODE)),
        _rule('baremetal:node:delete', SYSTEM_ADMIN, 'Delete Node records',
              ('DELETE', _NODE)),
        _rule('baremetal:node:delete:self_owned_node', PROJECT_ADMIN,
              'Delete node records which are associated with the '
              'requesting project.', ('DELETE', _NODE)),
        _rule('baremetal:node:validate',
              SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN,
              'Request active validation of Nodes',
              ('GET', _NODE + '/validate')),
        _rule('baremetal:node:set_maintenance',
              SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN,
              'Set maintenance flag, taking a Node out of service',
              ('PUT', _NODE + '/maintenance')),
        _rule('baremetal:node:clear_maintenance',
              SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN,
              'Clear maintenance flag, placing the Node into service again',
              ('DELETE', _NODE + '/maintenance')),
        _rule('baremetal:node:get_boot_device', SYSTEM_MEMBER_OR_OWNER_ADMIN,
              'Retrieve Node boot device metadata',
              ('GET', _NODE + '/management/boot_device'),
              ('GET', _NODE + '/management/boot_device/supported')),
        _rule('baremetal:node:set_boot_device', SYSTEM_MEMBER_OR_OWNER_ADMIN,
              'Change Node boot device',
              ('PUT', _NODE + '/management/boot_device')),
        _rule('baremetal:node:inject_nmi', SYSTEM_MEMBER_OR_OWNER_ADMIN,
              'Inject NMI for a node',
              ('PUT', _NODE + '/management/inject_nmi')),
        _rule('baremetal:node:get_states', SYSTEM_OR_PROJECT_READER,
              'View Node power and provision state',
              ('GET', _NODE + '/states')),
        _rule('baremetal:node:set_power_state', SYSTEM_OR_PROJECT_MEMBER,
              'Change Node power status', ('PUT', _NODE + '/states/power')),
        _rule('baremetal:node:set_provision_state',
              SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN,
              'Change Node provision status',
              ('PUT', _NODE + '/states/provision')),
        _rule('baremetal:node:vif:list', SYSTEM_OR_PROJECT_READER,
              'List VIFs attached to node', ('GET', _NODE + '/vifs')),
        _rule('baremetal:node:vif:attach',
              SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN,
              'Attach a VIF to a node', ('POST', _NODE + '/vifs')),
        _rule('baremetal:node:vif:detach',
              SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN,
              'Detach a VIF from a node',
              ('DELETE', _NODE + '/vifs/{node_vif_ident}')),
        _rule('baremetal:node:history:get', SYSTEM_OR_OWNER_READER,
              'Filter to allow operators to retrieve history records for a '
              'node.', ('GET', _NODE + '/history'),
              ('GET', _NODE + '/history/{event_ident}')),
        _rule('baremetal:node:firmware:get', SYSTEM_OR_PROJECT_READER,
              'Retrieve Node Firmware components information',
              ('GET', _NODE + '/firmware')),
        _rule('baremetal:node:vmedia:attach', SYSTEM_OR_PROJECT_MEMBER,
              'Attach a virtual media device to a node',
              ('POST', _NODE + '/vmedia')),
        _rule('baremetal:node:vmedia:detach', SYSTEM_OR_PROJECT_MEMBER,
              'Detach a virtual media device from a node',
              ('DELETE', _NODE + '/vmedia')),
        _rule('baremetal:node:vmedia:get', SYSTEM_OR_PROJECT_READER,
              'Get virtual media device details from a node',
              ('GET', _NODE + '/vmedia')),
        _rule('baremetal:node:inventory:get', SYSTEM_OR_OWNER_READER,
              'Retrieve inspection data for a node.',
              ('GET', _NODE + '/inventory')),
        _rule('baremetal:shards:get', SYSTEM_READER,
              'Governs if shards can be read via the API clients.',
              ('GET', '/shards')),
        _rule('baremetal:node:traits:list', SYSTEM_OR_PROJECT_READER,
              'List node traits', ('GET', _NODE + '/traits')),
        _rule('baremetal:node:traits:set', SYSTEM_MEMBER_OR_OWNER_ADMIN,
              'Add a trait to, or replace all traits of, a node',
              ('PUT', _NODE + '/traits'),
              ('PUT', _NODE + '/traits/{trait}')),
        _rule('baremetal:node:traits:delete', SYSTEM_MEMBER_OR_OWNER_ADMIN,
              'Remove one or all traits from a node',
              ('DELETE', _NODE + '/traits'),
              ('DELETE', _NODE + '/traits/{trait}')),
        _rule('baremetal:node:vendor_passthru', SYSTEM_ADMIN,
              'Access vendor-specific Node functions',
              ('GET', _NODE + '/vendor_passthru/methods'),
              *(((method, _NODE + '/vendor_passthru?method={method_name}')
                 for method in ('GET', 'PUT', 'POST', 'PATCH', 'DELETE')))),
        # Public routes: the ramdisk agent has no token.
        _rule('baremetal:node:ipa_heartbeat', '',
              'Receive heartbeats from IPA ramdisk',
              ('POST', '/heartbeat/{node_ident}')),
        _rule('baremetal:driver:ipa_lookup', '',
              'Access IPA ramdisk functions', ('GET', '/lookup')),
        _rule('baremetal:driver:ipa_continue_inspection', '',
              'Receive inspection data from the ramdisk',
              ('POST', '/continue_inspection')),
    ]


def _ports() -> list[policy.DocumentedRuleDefault]:
    lists = (('GET', '/ports'), ('GET', '/ports/detail'))
    return [
        _rule('baremetal:port:get', SYSTEM_OR_PROJECT_READER,
              'Retrieve Port records', ('GET', '/ports/{port_id}'),
              ('GET', _NODE + '/ports'), ('GET', _NODE + '/ports/detail')),
        _rule('baremetal:port:list', API_READER,
              'Retrieve multiple Port records, filtered by owner', *lists),
        _rule('baremetal:port:list_all', SYSTEM_READER,
              'Retrieve multiple Port records', *lists),
        _rule('baremetal:port:create', SYSTEM_ADMIN_OR_OWNER_ADMIN,
              'Create Port records', ('POST', '/ports')),
        _rule('baremetal:port:delete', SYSTEM_ADMIN_OR_OWNER_ADMIN,
              'Delete Port records', ('DELETE', '/ports/{port_id}')),
        _rule('baremetal:port:update', SYSTEM_MEMBER_OR_OWNER_ADMIN,
              'Update Port records', ('PATCH', '/ports/{port_id}')),
    ]


def _portgroups() -> list[policy.DocumentedRuleDefault]:
    one = '/portgroups/{portgroup_ident}'
    lists = (('GET', '/portgroups'), ('GET', '/portgroups/detail'))
    return [
        _rule('baremetal:portgroup:get', SYSTEM_OR_PROJECT_READER,
              'Retrieve Portgroup records', *lists, ('GET', one),
              ('GET', _NODE + '/portgroups'),
              ('GET', _NODE + '/portgroups/detail')),
        _rule('baremetal:portgroup:create', SYSTEM_ADMIN_OR_OWNER_ADMIN,
              'Create Portgroup records', ('POST', '/portgroups')),
        _rule('baremetal:portgroup:delete', SYSTEM_ADMIN_OR_OWNER_ADMIN,
              'Delete Portgroup records', ('DELETE', one)),
        _rule('baremetal:portgroup:update', SYSTEM_MEMBER_OR_OWNER_ADMIN,
              'Update Portgroup records', ('PATCH', one)),
        _rule('baremetal:portgroup:list', API_READER,
              'Retrieve multiple Port records, filtered by owner', *lists),
        _rule('baremetal:portgroup:list_all', SYSTEM_READER,
              'Retrieve multiple Port records', *lists),
    ]


def _allocations() -> list[policy.DocumentedRuleDefault]:
    one = '/allocations/{allocation_id}'
    return [
        _rule('baremetal:allocation:get', ALLOCATION_READER,
              'Retrieve Allocation records', ('GET', one),
              ('GET', _NODE + '/allocation')),
        _rule('baremetal:allocation:list', API_READER,
              'Retrieve multiple Allocation records, filtered by owner',
              ('GET', '/allocations')),
        _rule('baremetal:allocation:list_all', SYSTEM_READER,
              'Retrieve multiple Allocation records',
              ('GET', '/allocations')),
        _rule('baremetal:allocation:create', ALLOCATION_CREATOR,
              'Create Allocation records', ('POST', '/allocations')),
        _rule('baremetal:allocation:create_restricted', SYSTEM_MEMBER,
              'Create Allocation records with a specific owner.',
              ('POST', '/allocations')),
        _rule('baremetal:allocation:delete', ALLOCATION_MEMBER,
              'Delete Allocation records', ('DELETE', one),
              ('DELETE', _NODE + '/allocation')),
        _rule('baremetal:allocation:update', ALLOCATION_MEMBER,
              'Change name and extra fields of an allocation',
              ('PATCH', one)),
    ]


def _chassis() -> list[policy.DocumentedRuleDefault]:
    one = '/chassis/{chassis_id}'
    system = ['system']
    return [
        _rule('baremetal:chassis:get', SYSTEM_READER,
              'Retrieve Chassis records', ('GET', '/chassis'),
              ('GET', '/chassis/detail'), ('GET', one), scope=system),
        _rule('baremetal:chassis:create', SYSTEM_ADMIN,
              'Create Chassis records', ('POST', '/chassis'), scope=system),
        _rule('baremetal:chassis:delete', SYSTEM_ADMIN,
              'Delete Chassis records', ('DELETE', one), scope=system),
        _rule('baremetal:chassis:update', SYSTEM_MEMBER,
              'Update Chassis records', ('PATCH', one), scope=system),
    ]


def _volumes() -> list[policy.DocumentedRuleDefault]:
    lists = [(('GET', prefix + '/volume/' + kind))
             for prefix in ('', _NODE) for kind in ('connectors', 'targets')]
    connector = '/volume/connectors/{volume_connector_id}'
    target = '/volume/targets/{volume_target_id}'
    return [
        _rule('baremetal:volume:list_all', SYSTEM_READER,
              'Retrieve a list of all Volume connector and target records',
              *lists),
        _rule('baremetal:volume:list', API_READER,
              'Retrieve a list of Volume connector and target records',
              *lists),
        _rule('baremetal:volume:get', SYSTEM_OR_PROJECT_READER,
              'Retrieve Volume connector and target records',
              ('GET', '/volume'), ('GET', _NODE + '/volume'), *lists,
              ('GET', connector), ('GET', target)),
        _rule('baremetal:volume:create', SYSTEM_MEMBER_OR_OWNER_LESSEE_ADMIN,
              'Create Volume connector and target records',
              ('POST', '/volume/connectors'), ('POST', '/volume/targets')),
        _rule('baremetal:volume:delete', SYSTEM_MEMBER_OR_OWNER_LESSEE_ADMIN,
              'Delete Volume connector and target records',
              ('DELETE', connector), ('DELETE', target)),
        _rule('baremetal:volume:update',
              SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN,
              'Update Volume connector and target records',
              ('PATCH', connector), ('PATCH', target)),
        _rule('baremetal:volume:view_target_properties',
              TARGET_PROPERTIES_READER,
              'Ability to view volume target properties',
              ('GET', connector), ('GET', target)),
    ]


def _services() -> list[policy.DocumentedRuleDefault]:
    return [
        _rule('baremetal:driver:get', SYSTEM_READER,
              'View list of available drivers', ('GET', '/drivers'),
              ('GET', '/drivers/{driver_name}'), scope=['system']),
        _rule('baremetal:driver:get_properties', SYSTEM_READER,
              'View driver-specific properties',
              ('GET', '/drivers/{driver_name}/properties'),
              scope=['system']),
        # Both scopes, as Ironic's: the service role in the service
        # project (rule:service_role) lists conductors.
        _rule('baremetal:conductor:get', SYSTEM_READER,
              'Retrieve Conductor records', ('GET', '/conductors'),
              ('GET', '/conductors/{hostname}')),
        _rule('baremetal:event:list', API_READER,
              "Follow the event feed, filtered by the caller's project "
              "(ferrum's extension)", ('GET', '/events')),
        _rule('baremetal:event:list_all', SYSTEM_READER,
              "Follow the events of every project (ferrum's extension)",
              ('GET', '/events')),
        _rule('baremetal:placement:get_status', SYSTEM_READER,
              "Retrieve the Placement sync's state (ferrum's extension)",
              ('GET', '/placement/status'), scope=['system']),
        _rule('baremetal:metrics:get', SYSTEM_READER,
              "Read the Prometheus metrics at /metrics (ferrum's "
              'extension; clients from [metrics] allowed_scrapers need no '
              'token)', ('GET', '/metrics'), scope=['system']),
    ]


def _deploy_templates() -> list[policy.DocumentedRuleDefault]:
    one = '/deploy_templates/{deploy_template_ident}'
    return [
        _rule('baremetal:deploy_template:get', SYSTEM_READER,
              'Retrieve Deploy Template records',
              ('GET', '/deploy_templates'), ('GET', one)),
        _rule('baremetal:deploy_template:create', SYSTEM_ADMIN,
              'Create Deploy Template records',
              ('POST', '/deploy_templates')),
        _rule('baremetal:deploy_template:delete', SYSTEM_ADMIN,
              'Delete Deploy Template records', ('DELETE', one)),
        _rule('baremetal:deploy_template:update', SYSTEM_ADMIN,
              'Update Deploy Template records', ('PATCH', one)),
    ]


def _leases() -> list[policy.DocumentedRuleDefault]:
    one = '/leases/{lease_ident}'
    lists = ('GET', '/leases')
    return [
        _rule('baremetal:lease:create', LEASE_MEMBER,
              'Book a lease for a project: a project member for its own '
              'project, a system member for any.', ('POST', '/leases')),
        _rule('baremetal:lease:create_restricted', SYSTEM_MEMBER,
              'Let a project-scoped caller book a lease from the nodes of '
              'an owner other than its project (as Ironic\'s '
              'baremetal:allocation:create_restricted); without it, only '
              'from its project\'s nodes and the shared pool. A system-'
              'scoped caller books from any nodes.', ('POST', '/leases')),
        _rule('baremetal:lease:create:shared_pool', '@',
              'Let a project-scoped lease take nodes that have no owner '
              '(the operator\'s shared pool) as well as nodes its project '
              'owns; deny it to confine projects to their own nodes.',
              ('POST', '/leases'), scope=['project']),
        _rule('baremetal:lease:get', LEASE_READER,
              'Retrieve a lease', ('GET', one)),
        _rule('baremetal:lease:list', API_READER,
              "Retrieve leases, filtered by the caller's project", lists,
              ('GET', _NODE + '/leases')),
        _rule('baremetal:lease:list_all', SYSTEM_READER,
              'Retrieve the leases of every project', lists,
              ('GET', _NODE + '/leases')),
        _rule('baremetal:lease:update', LEASE_MEMBER,
              'Change the name, extra or end of a lease', ('PATCH', one)),
        _rule('baremetal:lease:delete', LEASE_MEMBER,
              'Cancel or end a lease', ('DELETE', one)),
    ]


def list_rules() -> list[policy.RuleDefault]:
    """Every default: the ``oslo.policy.policies`` entry point."""
    return [*_generic(), *_nodes(), *_ports(), *_portgroups(),
            *_allocations(), *_chassis(), *_volumes(), *_services(),
            *_deploy_templates(),
            *_leases()]


class PolicyFileInvalid(exception.FerrumException):
    msg_fmt = ('Cannot use the policy file %(path)s (set by [oslo_policy] '
               'policy_file): %(reason)s')


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def check_rules(enforcer: policy.Enforcer) -> None:
    """Read the policy file now (or again) and refuse one that is unusable.

    oslo.policy logs a rule whose check string does not parse and denies
    it: here that stops start-up instead, naming the rule.

    :raises PolicyFileInvalid: the file does not parse, or a rule in it
        does not.
    """
    path = enforcer.policy_path or enforcer.policy_file
    # oslo.policy logs a rule it cannot parse with a traceback; the one
    # line below names it instead.
    parser_log = logging.getLogger('oslo_policy._parser')
    was_disabled, parser_log.disabled = parser_log.disabled, True
    try:
        enforcer.load_rules()
    except (ValueError, yaml.YAMLError) as exc:
        raise PolicyFileInvalid(path=path, reason=_first_line(exc)) from None
    except (TypeError, AttributeError):
        raise PolicyFileInvalid(path=path, reason=(
            'it is not a YAML mapping of rule names to check strings '
            '("baremetal:node:get": "role:reader").')) from None
    finally:
        parser_log.disabled = was_disabled
    for name, rule in enforcer.file_rules.items():
        loaded = enforcer.rules.get(name)
        if (isinstance(loaded, _checks.FalseCheck)
                and rule.check_str.strip() != '!'):
            raise PolicyFileInvalid(
                path=enforcer.policy_path, reason=(
                    'the rule "%s" has a check string that does not parse: '
                    '"%s".' % (name, rule.check_str[:200])))


def enforcer(conf: cfg.ConfigOpts,
             clock: authorizer.Clock = time.monotonic) -> authorizer.Enforcer:
    """The application's one Enforcer, defaults registered, file checked.

    :param clock: when the policy file was last checked (see
        :meth:`ferrum.api.authorizer.Enforcer.check_file`).
    :raises PolicyFileInvalid: see :func:`check_rules`.
    """
    built = authorizer.Enforcer(conf, clock)
    # Ironic's defaults changed from the pre-RBAC ones on purpose.
    built.suppress_default_change_warnings = True
    built.register_defaults(list_rules())
    check_rules(built)
    if built.policy_path:
        LOG.info('API policy: defaults overridden by %s', built.policy_path)
    return built


def sample_enforcer() -> policy.Enforcer:
    """For ``oslopolicy-policy-generator``: the defaults on a fresh conf."""
    conf = cfg.ConfigOpts()
    tenancy.register_opts(conf)
    conf([], project='ferrum')
    built = policy.Enforcer(conf)
    built.register_defaults(list_rules())
    return built
