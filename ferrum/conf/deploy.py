# SPDX-License-Identifier: Apache-2.0
"""Options of the [deploy] group: what the ``direct`` deploy and in-band
cleaning ask of the ironic-python-agent, with Ironic's names.

Every option is read when a step is listed or sent to the agent, so a
change takes effect at the next deploy or cleaning.
"""

from oslo_config import cfg

GROUP = 'deploy'

opts: list[cfg.Opt] = [
    cfg.IntOpt('erase_devices_priority', min=0,
               help='Priority of the agent\'s erase_devices clean step in '
                    'automated cleaning (it overwrites every disk). Unset, '
                    'the agent\'s own priority (10) applies; 0 turns the '
                    'step off, as Ironic\'s option of the same name.'),
    cfg.IntOpt('erase_devices_metadata_priority', min=0,
               help='Priority of the agent\'s erase_devices_metadata clean '
                    'step (it wipes partition tables and file system '
                    'signatures). Unset, the agent\'s own priority (99) '
                    'applies; 0 turns the step off.'),
    cfg.IntOpt('shred_random_overwrite_iterations', default=1, min=0,
               help='Times erase_devices overwrites each disk with random '
                    'data before the final pass (0: none, only zeros when '
                    'shred_final_overwrite_with_zeros is set).'),
    cfg.BoolOpt('shred_final_overwrite_with_zeros', default=True,
                help='Whether erase_devices ends by writing zeros over each '
                     'disk. With shred_random_overwrite_iterations = 0 this '
                     'must be set, or nothing is erased (the agent refuses).'),
    cfg.BoolOpt('continue_if_disk_secure_erase_fails', default=False,
                help='Whether erase_devices overwrites a disk whose ATA or '
                     'NVMe secure erase failed, instead of failing the '
                     'step.'),
    cfg.BoolOpt('enable_ata_secure_erase', default=True,
                help='Whether erase_devices tries ATA secure erase first on '
                     'disks that support it.'),
    cfg.BoolOpt('enable_nvme_secure_erase', default=True,
                help='Whether erase_devices tries NVMe secure erase first '
                     'on disks that support it.'),
    cfg.BoolOpt('stream_raw_images', default=True,
                help='Whether the agent writes a raw image to the disk as '
                     'it downloads it, instead of downloading it whole '
                     'first (which needs memory for the whole image on the '
                     'node).'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group=GROUP)


def list_opts() -> dict[str, list[cfg.Opt]]:
    """The group's options for the sample file (:mod:`ferrum.conf.opts`)."""
    return {GROUP: opts}
