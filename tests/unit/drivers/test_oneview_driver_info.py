# SPDX-License-Identifier: Apache-2.0
"""The OneView node fields and the ownership rule: pure functions, no
appliance."""

import pytest

from ferrum.common import exception
from ferrum.drivers.oneview import driver_info as di

HW = '/rest/server-hardware/30303437-3034-4D32-3230-313130304752'
SPT = '/rest/server-profile-templates/1b7e1c11-2f9a-4f67-b9e9-d0c3c4c2e2ab'
SP = '/rest/server-profiles/9d2c4a57-0c5e-4f5e-a4f4-1234567890ab'
SHT = '/rest/server-hardware-types/A'
EG = '/rest/enclosure-groups/G'


def test_parse_reads_driver_info_and_the_template_capability():
    node = di.parse({di.HARDWARE_URI: HW, di.APPLIED_PROFILE_URI: SP},
                    {'capabilities': 'boot_mode:uefi,'
                     'server_profile_template_uri:%s, '
                     'server_hardware_type_uri:%s' % (SPT, SHT)})
    assert node == di.OneViewNode(
        server_hardware_uri=HW, server_profile_template_uri=SPT,
        applied_server_profile_uri=SP, server_hardware_type_uri=SHT)


def test_capabilities_may_be_a_dict():
    node = di.parse({di.HARDWARE_URI: HW},
                    {'capabilities': {di.TEMPLATE_URI: SPT,
                                      di.ENCLOSURE_GROUP_URI: EG}})
    assert (node.server_profile_template_uri, node.enclosure_group_uri,
            node.applied_server_profile_uri) == (SPT, EG, None)


@pytest.mark.parametrize('info, props, error, words', [
    ({}, {'capabilities': 'server_profile_template_uri:%s' % SPT},
     exception.MissingParameterValue, 'server_hardware_uri is required'),
    ({di.HARDWARE_URI: HW}, {}, exception.MissingParameterValue,
     'server_profile_template_uri is required'),
    ({di.HARDWARE_URI: '/rest/enclosures/1'},
     {'capabilities': 'server_profile_template_uri:%s' % SPT},
     exception.InvalidParameterValue, 'starting with /rest/server-hardware/'),
    ({di.HARDWARE_URI: HW}, {'capabilities': 'server_profile_template_uri:x'},
     exception.InvalidParameterValue, '/rest/server-profile-templates/'),
    ({di.HARDWARE_URI: HW, di.APPLIED_PROFILE_URI: 42},
     {'capabilities': 'server_profile_template_uri:%s' % SPT},
     exception.InvalidParameterValue, 'applied_server_profile_uri'),
    ({di.HARDWARE_URI: HW}, {'capabilities': 'no-colon'},
     exception.InvalidParameterValue, 'is not key:value'),
    ({di.HARDWARE_URI: HW}, {'capabilities': ['a:b']},
     exception.InvalidParameterValue, 'must be a string'),
])
def test_parse_names_the_bad_field(info, props, error, words):
    with pytest.raises(error) as caught:
        di.parse(info, props)
    assert words in str(caught.value)


@pytest.mark.parametrize('on_hardware, applied, owner', [
    (None, None, di.FREE),
    ('', SP, di.FREE),          # a stale record does not make it ours
    (SP, SP, di.FERRUM),
    (SP, None, di.ONEVIEW),
    (SP, SP + 'x', di.ONEVIEW),
])
def test_ownership_follows_the_three_rules_of_the_spec(on_hardware, applied,
                                                       owner):
    assert di.ownership(on_hardware, applied) == owner


def _hardware(**extra):
    return dict({'uri': HW, 'serverHardwareTypeUri': SHT,
                 'serverGroupUri': EG}, **extra)


def _template(**extra):
    return dict({'uri': SPT, 'serverHardwareTypeUri': SHT,
                 'enclosureGroupUri': EG, 'macType': 'Physical',
                 'boot': {'manageBoot': True, 'order': ['PXE']}}, **extra)


def test_a_matching_template_has_no_compatibility_errors():
    node = di.OneViewNode(HW, SPT, server_hardware_type_uri=SHT,
                          enclosure_group_uri=EG)
    assert di.compatibility_errors(_hardware(), _template(), node) == []


def test_every_mismatch_is_named():
    node = di.OneViewNode(HW, SPT, server_hardware_type_uri='/rest/x',
                          enclosure_group_uri='/rest/y')
    errors = di.compatibility_errors(
        _hardware(), _template(serverHardwareTypeUri='/rest/other',
                               enclosureGroupUri='/rest/eg2',
                               macType='Virtual', boot={}), node)
    text = ' | '.join(errors)
    assert len(errors) == 6, text
    for words in ('server hardware type /rest/other', 'enclosure group '
                  '/rest/eg2', 'boot.manageBoot', 'Virtual MACs',
                  'server_hardware_type_uri is /rest/x',
                  'enclosure_group_uri is /rest/y'):
        assert words in text


def test_a_profile_is_named_for_its_node_by_the_uuid_in_brackets():
    uuid = '1be26c0b-03f2-4d2d-ae87-c02d7f33c123'
    name = di.profile_name('bay-1', uuid)
    assert name == 'bay-1 [%s]' % uuid
    assert di.named_for(name, uuid)
    assert di.named_for(di.profile_name('ferrum cleaning', uuid), uuid)
    assert not di.named_for(name, '2be26c0b-03f2-4d2d-ae87-c02d7f33c123')
    assert not di.named_for('OneView user profile %s' % uuid, uuid)
    assert not di.named_for(None, uuid)
