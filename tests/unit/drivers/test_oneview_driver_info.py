# SPDX-License-Identifier: Apache-2.0
"""The OneView node fields, the ownership rule and the [oneview] settings:
pure functions, no appliance."""

import pytest

from ferrum.common import exception
from ferrum.drivers.oneview import client
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


@pytest.mark.parametrize('url, address', [
    ('oneview.example.com', 'oneview.example.com'),
    ('https://oneview.example.com/', 'oneview.example.com'),
    ('https://10.0.0.5:8443/rest', '10.0.0.5:8443'),
    ('127.0.0.1:40000', '127.0.0.1:40000'),
    ('[::1]:443', '[::1]:443'),
])
def test_manager_url_becomes_what_hponeview_wants(url, address):
    assert client.address_of(url) == address


def _oneview_conf(conf, **values):
    base = {'manager_url': 'ov.example.com', 'username': 'u',
            'password': 'secret-pw', 'tls_cacert_file': '/etc/ca.pem'}
    base.update(values)
    for name, value in base.items():
        conf.set_override(name, value, 'oneview')
    return conf


def test_settings_need_a_ca_file_unless_insecure(conf):
    with pytest.raises(client.OneViewConfigError) as caught:
        client.settings_from(_oneview_conf(conf, tls_cacert_file=None))
    assert 'tls_cacert_file' in str(caught.value)
    insecure = client.settings_from(_oneview_conf(
        conf, allow_insecure_connections=True))
    assert insecure.ca_file is None
    assert insecure.hponeview_config['ssl_certificate'] is False


def test_settings_always_carry_a_timeout_and_hide_the_password(conf):
    settings = client.settings_from(_oneview_conf(conf))
    config = settings.hponeview_config
    assert config['timeout'] == 60.0
    assert config['ssl_certificate'] == '/etc/ca.pem'
    assert 'secret-pw' not in repr(settings)
    assert settings.wait == 600
    conf.set_override('task_timeout', 0, 'oneview')
    assert client.settings_from(conf).wait == -1


def test_missing_options_are_named(conf):
    with pytest.raises(client.OneViewConfigError) as caught:
        client.settings_from(conf)
    assert 'manager_url, username, password' in str(caught.value)


def test_one_client_per_settings(conf):
    _oneview_conf(conf)
    assert client.get_client(conf) is client.get_client(conf)
    first = client.get_client(conf)
    conf.set_override('username', 'other', 'oneview')
    assert client.get_client(conf) is not first
