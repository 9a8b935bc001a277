# SPDX-License-Identifier: Apache-2.0
"""API microversions: the list of versions, and per-request negotiation.

A client asks for a version with ``X-OpenStack-Ironic-API-Version: 1.N``
or ``OpenStack-API-Version: baremetal 1.N`` (``latest`` means the maximum).
No header means the minimum, as in Ironic. A version outside the range is
answered with 406 and the supported range.

To add a version: append it to ``VERSIONS`` with a one-line note, record it
in ``doc/api-versions.md``, and gate the new behaviour on
``request_version() >= (1, N)``. Claim a version only once everything it
stands for is implemented.
"""

import re
from typing import Any

import flask
import microversion_parse

from ferrum.common import exception

#: (minor version, what it means in ferrum). Ironic's history, version by
#: version: ferrum serves each one for the resources it has. A version that
#: only concerns a resource ferrum does not serve (RAID, volumes,
#: rescue, BIOS, events, deploy templates, indicators) is
#: claimed because clients need the versions after it; the fields it adds
#: are shown with their "nothing configured" value and requests for the
#: missing resource get a clear error.
VERSIONS: tuple[tuple[int, str], ...] = (
    (1, 'Nodes, ports, drivers; version discovery; errors.'),
    (2, 'Provision state "available" replaces "None".'),
    (3, 'Node driver_internal_info.'),
    (4, 'Provision target "manage" and the manageable state.'),
    (5, 'Node names; a node is addressed by UUID or name.'),
    (6, 'Provision target "inspect"; inspection timestamps.'),
    (7, 'Node clean_step.'),
    (8, 'The "fields" query parameter.'),
    (9, 'Node list filter provision_state.'),
    (10, 'Node names may use the RFC 3986 unreserved characters.'),
    (11, 'Nodes are created in "enroll" (before: "available", unverified).'),
    (12, 'Node raid_config fields (RAID is not served).'),
    (13, 'Provision target "abort".'),
    (14, 'Node /states/provision reports manageable -> cleaning.'),
    (15, 'Manual cleaning: target "clean" with clean_steps.'),
    (16, 'Node list filter driver.'),
    (17, 'Provision target "adopt".'),
    (18, 'Port internal_info.'),
    (19, 'Port local_link_connection and pxe_enabled.'),
    (20, 'Node network_interface (ferrum ships "noop").'),
    (21, 'Node resource_class and its list filter.'),
    (22, 'Ramdisk lookup and heartbeat, for drivers\' asynchronous work.'),
    (23, 'Port groups: /v1/portgroups.'),
    (24, 'Port portgroup_uuid; a node\'s groups and a group\'s ports.'),
    (25, 'A node\'s chassis_uuid can be removed.'),
    (26, 'Port group mode and properties.'),
    (27, 'Soft power off and soft reboot, and a power timeout.'),
    (28, 'VIFs: /v1/nodes/{node}/vifs attach, list and detach.'),
    (29, 'PUT /v1/nodes/{node}/management/inject_nmi.'),
    (30, 'Dynamic drivers: /v1/drivers?type= and ?detail=.'),
    (31, 'Node <kind>_interface fields and their defaults.'),
    (32, 'Volume connectors and targets, /v1/volume (stored; booting '
         'from a volume is not served).'),
    (33, 'Node storage_interface (always "noop"; "cinder" is refused).'),
    (34, 'Port physical_network.'),
    (35, 'configdrive accepted by "rebuild".'),
    (36, 'Agent version in heartbeats.'),
    (37, 'Node traits: the traits field and /v1/nodes/{node}/traits.'),
    (38, 'Rescue (not served: node rescue_interface is "no-rescue").'),
    (39, 'Inspection wait state.'),
    (40, 'BIOS settings (not served: bios_interface is "no-bios").'),
    (41, 'Aborting inspection.'),
    (42, 'Node fault and its list filter.'),
    (43, 'The "detail" query parameter on node lists.'),
    (44, 'Node deploy_step.'),
    (45, 'reset_interfaces when PATCHing a node\'s driver.'),
    (46, 'Node conductor_group and its list filter.'),
    (47, 'Node automated_clean.'),
    (48, 'Node protected and protected_reason.'),
    (49, '/v1/conductors and the node conductor field.'),
    (50, 'Node owner and its list filter.'),
    (51, 'Node description and the description_contains filter.'),
    (52, 'Node allocation_uuid (allocations: see doc/api-versions.md).'),
    (53, 'Port is_smartnic.'),
    (54, 'Node events (not served).'),
    (55, 'Deploy templates: /v1/deploy_templates.'),
    (56, 'configdrive as a JSON object.'),
    (57, 'Allocation PATCH of name and extra.'),
    (58, 'Allocation backfill.'),
    (59, 'configdrive vendor_data.'),
    (60, 'Allocation owner.'),
    (61, 'Node retired and retired_reason, and the retired filter.'),
    (62, 'Agent token in heartbeats (accepted, not checked).'),
    (63, 'Indicators (not served).'),
    (64, 'Port local_link_connection network_type.'),
    (65, 'Node lessee and its list filter.'),
    (66, 'Node network_data (not served: always {}, setting one is '
         'refused).'),
    (67, 'VIF attach naming its port with port_uuid.'),
    (68, 'agent_verify_ca in heartbeats (accepted, not used).'),
    (69, 'deploy_steps when deploying or rebuilding (not served: refused '
         'unless empty).'),
    (70, 'disable_ramdisk when cleaning (not served: refused when true).'),
    (71, 'System-scoped roles understood: a signifier, the policy applies '
         'at every version (doc/tenancy.md).'),
    (72, 'agent_status and agent_status_message in heartbeats (accepted, '
         'not used).'),
    (73, 'Provision targets "deploy" and "undeploy" ("active", "deleted").'),
    (74, 'BIOS setting registry fields (not served: no BIOS settings).'),
    (75, 'Node boot_mode and secure_boot (read-only; always null).'),
    (76, 'Changing boot_mode and secure_boot (not served: 404).'),
    (77, 'The "fields" parameter on drivers (accepted from 1.8 already).'),
    (78, 'Node history: /v1/nodes/{node}/history.'),
    (79, 'An allocation tries the node named like it first.'),
    (80, 'Self-service nodes: a project admin creates and deletes its '
         'own nodes.'),
    (81, 'Node inventory (not served: no inspection data is stored; '
         '/inventory answers Ironic\'s 404 for a node without one).'),
    (82, 'Node shard, its filters, and /v1/shards.'),
    (83, 'Child nodes: parent_node, /v1/nodes/{node}/children, '
         'include_children; allocations skip children.'),
    (84, 'Continue inspection from the ramdisk (not served: 404, no node '
         'waits for inspection data).'),
    (85, 'Provision target "unhold" (not served: no node is ever held).'),
    (86, 'Node firmware_interface (redfish, fake, no-firmware) and '
         '/firmware: the components last read.'),
    (87, 'Servicing: target "service" and service_step (not served: '
         'refused, service_step is {}).'),
    (88, 'Port name.'),
    (89, 'Virtual media attach and detach: /v1/nodes/{node}/vmedia.'),
    (90, 'OVN VTEP switch keys in a port\'s local_link_connection.'),
    (91, 'A ".json" ending of a path is part of the path.'),
    (92, 'Runbooks (not served: /v1/runbooks is 404).'),
    (93, 'Virtual media list: GET /v1/nodes/{node}/vmedia.'),
    (94, 'A port created with its node\'s name.'),
    (95, 'Node disable_power_off.'),
    (96, 'Inspection rules (not served: /v1/inspection_rules is 404).'),
    (97, 'Port description.'),
    (98, 'RFC 6901 escapes ("~0", "~1") in PATCH paths\' field names.'),
    (99, 'Port and port group list filter conductor_group.'),
    (100, 'Port vendor.'),
    (101, 'Port category.'),
    (102, 'Port group physical_network.'),
    (103, 'Port group category.'),
    (104, 'Node instance_name and its list filter.'),
    (105, 'OVN VTEP link keys (1.90) removed again.'),
    (106, 'Port group list filter shard.'),
    (107, 'X-OpenStack-Request-Id on every answer (sent at every '
          'version).'),
    (108, 'disable_ramdisk when servicing (not served: no servicing).'),
    (109, 'Node health (always null: no driver reports it).'),
    (110, 'Aborting a deploy in "wait call-back".'),
    (111, 'Port available_for_dynamic_portgroup, port group '
          'dynamic_portgroup.'),
    (112, 'Runbook traits (not served: no runbooks).'),
    (113, 'Node history project.'),
    (114, 'Firmware component vendor, model, serial_number.'),
    (115, 'Node history state, target_provision_state, duration_seconds.'),
)

#: Ironic serves every version from 1.1: below 1.11 a new node is created
#: directly in "available", with no power state, and clients such as
#: openstacksdk ask for 1.10 for exactly that.
MIN_VERSION = (1, 1)
MAX_VERSION = (1, VERSIONS[-1][0])
SERVICE_TYPE = 'baremetal'
LEGACY_HEADER = 'X-OpenStack-Ironic-API-Version'
#: The headers a version is asked for with (see :func:`negotiate`).
HEADERS = ('OpenStack-API-Version', LEGACY_HEADER)
#: Each of HEADERS under its WSGI environment key.
_ENVIRON_KEYS = tuple(
    (name, 'HTTP_' + name.upper().replace('-', '_')) for name in HEADERS)


def environ_headers(environ: dict[str, Any]) -> dict[str, str]:
    """The version headers of a request, read from its WSGI environment
    (which holds one value a header: the server joined repeated ones)."""
    return {name: environ[key] for name, key in _ENVIRON_KEYS
            if key in environ}


class NotAcceptableVersion(exception.FerrumException):
    msg_fmt = ('Version %(requested)s was requested but the minor version is '
               'not supported by this service. The supported version range '
               'is: [%(min)s, %(max)s].')
    code = 406


class InvalidVersionHeader(exception.FerrumException):
    """As Ironic: a version that cannot be parsed is not acceptable."""

    msg_fmt = ('Invalid value for %(header)s header: "%(requested)s"; send '
               '"1.N" (no leading zeros or signs) or "latest".')
    code = 406


#: MAJOR.MINOR: digits only, without leading zeros.
_GRAMMAR = re.compile(r'^(0|[1-9][0-9]{0,5})\.(0|[1-9][0-9]{0,5})$')


def as_string(version: tuple[int, int]) -> str:
    return '%d.%d' % version


def negotiate(headers: dict[str, str]) -> tuple[int, int]:
    """The version a request asks for in ``headers`` (:data:`HEADERS`).

    :raises NotAcceptableVersion: the version is outside the range.
    :raises InvalidParameterValue: the header cannot be parsed.
    """
    requested = microversion_parse.get_version(
        headers, service_type=SERVICE_TYPE, legacy_headers=[LEGACY_HEADER])
    if requested is None:
        return MIN_VERSION
    if requested.strip().lower() == 'latest':
        return MAX_VERSION
    # microversion-parse takes whatever int() takes ("01.052", "1.+52",
    # " 1. 5"); the API working group's grammar is two plain numbers.
    match = _GRAMMAR.match(requested.strip())
    if match is None:
        raise InvalidVersionHeader(header=LEGACY_HEADER,
                                   requested=requested[:40])
    version = (int(match.group(1)), int(match.group(2)))
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise NotAcceptableVersion(requested=requested,
                                   min=as_string(MIN_VERSION),
                                   max=as_string(MAX_VERSION))
    return version


def request_version() -> tuple[int, int]:
    """The negotiated version of the current request."""
    version: tuple[int, int] = flask.g.api_version
    return version


def add_headers(response: flask.Response,
                version: tuple[int, int] | None) -> None:
    """Version headers on every response, as Ironic sends them."""
    response.headers['X-OpenStack-Ironic-API-Minimum-Version'] = as_string(
        MIN_VERSION)
    response.headers['X-OpenStack-Ironic-API-Maximum-Version'] = as_string(
        MAX_VERSION)
    if version is not None:
        response.headers[LEGACY_HEADER] = as_string(version)
        response.headers['OpenStack-API-Version'] = '%s %s' % (
            SERVICE_TYPE, as_string(version))
    response.headers['Vary'] = '%s, %s' % (LEGACY_HEADER, HEADERS[0])


def at_least(minor: int) -> bool:
    """Whether the current request's version is 1.``minor`` or later."""
    return request_version() >= (1, minor)


class VersionTooOld(exception.FerrumException):
    """A feature newer than the negotiated version was used; as in Ironic."""

    msg_fmt = ('%(what)s needs API version 1.%(minor)d or later; this '
               'request uses %(current)s. Send the header "%(header)s: '
               '1.%(minor)d" (or "latest").')
    code = 406


class BeyondMaximum(exception.FerrumException):
    """A feature of an Ironic version past ferrum's maximum."""

    msg_fmt = ('%(what)s comes with Ironic API version 1.%(minor)d; ferrum '
               'serves up to %(maximum)s. %(instead)s')
    code = 406


def require(minor: int, what: str, instead: str = '') -> None:
    """Refuse (406) a feature the request's version does not have yet.

    ``instead`` tells the client what to use when the feature belongs to a
    version past :data:`MAX_VERSION`, which no header can reach.
    """
    if (1, minor) > MAX_VERSION:
        raise BeyondMaximum(what=what, minor=minor, instead=instead,
                            maximum=as_string(MAX_VERSION))
    if not at_least(minor):
        raise VersionTooOld(what=what, minor=minor, header=LEGACY_HEADER,
                            current=as_string(request_version()))


class FieldVersions:
    """A resource's fields, each with the minor version that introduced it.

    :meth:`available` is called for every rendered resource, so the list
    per version is computed once.
    """

    def __init__(self, versions: dict[str, int]) -> None:
        self.versions = versions
        self._by_minor: dict[int, tuple[str, ...]] = {}

    def available(self) -> list[str]:
        """Every field the current request's version may see."""
        minor = request_version()[1]
        fields = self._by_minor.get(minor)
        if fields is None:
            fields = self._by_minor[minor] = tuple(
                name for name, introduced in self.versions.items()
                if introduced <= minor)
        return list(fields)


def endpoint(minor: int, what: str) -> None:
    """Answer 404, as Ironic, for an endpoint newer than the request.

    :raises NotFoundAtVersion: the request's version is before 1.``minor``.
    """
    if not at_least(minor):
        raise exception.NotFoundAtVersion(
            what=what, minor=minor, header=LEGACY_HEADER,
            current=as_string(request_version()))


class RemovedAtVersion(exception.FerrumException):
    """A feature a later Ironic version took away again; as Ironic."""

    msg_fmt = ('%(what)s was removed at API version 1.%(minor)d; this '
               'request uses %(current)s.')
    code = 406


def until(minor: int, what: str) -> None:
    """Refuse (406) a feature removed at 1.``minor``, as Ironic does.

    :raises RemovedAtVersion: the request's version is 1.``minor`` or
        later.
    """
    if at_least(minor):
        raise RemovedAtVersion(what=what, minor=minor,
                               current=as_string(request_version()))
