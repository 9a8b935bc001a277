# SPDX-License-Identifier: Apache-2.0
"""In-band steps: the agent's clean steps, and what a command sends along.

The agent lists its clean steps once it runs (``clean.get_clean_steps``);
they are cached in the node's ``driver_internal_info``
(``agent_cached_clean_steps``, Ironic's key) with the agent's hardware
manager versions, which every ``clean.execute_clean_step`` sends back.
Until the agent has reported (cleaning is computed before it boots, and a
manual clean is checked before it), the steps of ironic-python-agent's
generic hardware manager stand in for its list.

``[deploy] erase_devices_priority`` and ``erase_devices_metadata_priority``
override the agent's priorities of its two erase steps, as in Ironic
(0 turns a step off).
"""

from typing import Any

from oslo_config import cfg

from ferrum.objects import node as node_obj
from ferrum.objects import port as port_obj

#: The ``driver_internal_info`` keys of the agent's reported steps, by
#: step type; each with the hardware manager versions the agent reported,
#: which every ``execute_<type>_step`` must send back exactly (else the
#: agent answers CLEAN_VERSION_MISMATCH).
CACHED = 'agent_cached_clean_steps'
CACHED_DEPLOY = 'agent_cached_deploy_steps'
#: The steps ironic-python-agent's generic hardware manager has (13.0.0),
#: with its priorities: what stands in until the agent reports its own.
GENERIC_CLEAN_STEPS: tuple[tuple[str, int, bool], ...] = (
    ('erase_devices_metadata', 99, True),
    ('erase_devices', 10, True),
    ('erase_devices_express', 0, True),
    ('erase_pstore', 0, False),
    ('clean_uefi_nvram', 0, False),
    ('burnin_cpu', 0, False),
    ('burnin_disk', 0, False),
    ('burnin_memory', 0, False),
    ('burnin_network', 0, False),
)
#: The steps whose priority an option of [deploy] overrides.
_PRIORITY_OPTIONS = {'erase_devices': 'erase_devices_priority',
                     'erase_devices_metadata':
                         'erase_devices_metadata_priority'}
#: instance_info keys that may carry credentials (Ironic's node_sanitize).
_INSTANCE_SECRETS = ('configdrive', 'image_url')
#: driver_internal_info keys holding secrets have one of these in their name.
_INTERNAL_SECRETS = ('password', 'token', 'secret')
MASK = '******'


def _standing_in() -> list[dict[str, Any]]:
    return [{'step': name, 'priority': priority, 'interface': 'deploy',
             'reboot_requested': False, 'abortable': abortable}
            for name, priority, abortable in GENERIC_CLEAN_STEPS]


def reported(result: dict[str, Any],
             step_type: str = 'clean') -> dict[str, Any]:
    """What to cache of a ``clean.get_clean_steps`` (or
    ``deploy.get_deploy_steps``) result: the deploy interface's steps (once
    each: the agent already chose the hardware manager of each step) and
    the managers' versions."""
    found: dict[str, dict[str, Any]] = {}
    for steps in (result.get('%s_steps' % step_type) or {}).values():
        for step in steps or ():
            if (isinstance(step, dict) and step.get('interface') == 'deploy'
                    and isinstance(step.get('step'), str)):
                found.setdefault(step['step'], step)
    return {'steps': list(found.values()),
            'versions': result.get('hardware_manager_version') or {}}


def clean_steps(conf: cfg.ConfigOpts,
                info: dict[str, Any]) -> list[dict[str, Any]]:
    """The agent's clean steps for the node, priorities overridden."""
    cached = info.get(CACHED)
    steps = (cached.get('steps') if isinstance(cached, dict) else None
             ) or _standing_in()
    result = []
    for step in steps:
        priority = step.get('priority') or 0
        option = _PRIORITY_OPTIONS.get(step['step'])
        if option is not None and conf.deploy[option] is not None:
            priority = conf.deploy[option]
        result.append({'step': step['step'], 'priority': int(priority),
                       'interface': 'deploy',
                       'abortable': bool(step.get('abortable')),
                       'argsinfo': step.get('argsinfo'),
                       'reboot_requested': bool(
                           step.get('reboot_requested')),
                       'requires_ramdisk': True})
    return result


def is_agent_step(step: dict[str, Any]) -> bool:
    return bool(step.get('requires_ramdisk'))


def versions(info: dict[str, Any], key: str = CACHED) -> dict[str, Any]:
    """The hardware manager versions the agent reported, or {}."""
    cached = info.get(key)
    found = cached.get('versions') if isinstance(cached, dict) else None
    return found if isinstance(found, dict) else {}


def _masked(info: dict[str, Any], secret: Any) -> dict[str, Any]:
    return {key: MASK if secret(key.lower()) else value
            for key, value in info.items()}


def node_view(node: node_obj.Node,
              conf: cfg.ConfigOpts | None = None,
              configdrive: bool = False) -> dict[str, Any]:
    """The node as the agent sees it (lookup, and every command): secrets
    masked, as Ironic masks them.

    :param conf: given, the erase options go along in
        ``driver_internal_info``, where the agent's erase steps read them.
    :param configdrive: keep ``instance_info configdrive`` (the image
        write needs it).
    """
    instance = _masked(node.instance_info,
                       lambda key: 'password' in key
                       or key in _INSTANCE_SECRETS)
    if configdrive and 'configdrive' in node.instance_info:
        instance['configdrive'] = node.instance_info['configdrive']
    internal = _masked(node.driver_internal_info,
                       lambda key: any(word in key
                                       for word in _INTERNAL_SECRETS))
    if conf is not None:
        deploy = conf.deploy
        internal.update({
            'agent_erase_devices_iterations':
                deploy.shred_random_overwrite_iterations,
            'agent_erase_devices_zeroize':
                deploy.shred_final_overwrite_with_zeros,
            'agent_continue_if_secure_erase_failed':
                deploy.continue_if_disk_secure_erase_fails,
            'agent_continue_if_ata_erase_failed':
                deploy.continue_if_disk_secure_erase_fails,
            'agent_enable_ata_secure_erase': deploy.enable_ata_secure_erase,
            'agent_enable_nvme_secure_erase':
                deploy.enable_nvme_secure_erase,
        })
    return {'uuid': node.uuid, 'properties': node.properties,
            'instance_info': instance, 'driver_internal_info': internal}


def ports(db: Any, node_id: int) -> list[dict[str, Any]]:
    """The node's ports as commands send them."""
    return [{'uuid': port.uuid, 'address': port.address,
             'pxe_enabled': getattr(port, 'pxe_enabled', True)}
            for port in port_obj.Port.list(db, node_id=node_id)]
