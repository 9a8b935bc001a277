# SPDX-License-Identifier: Apache-2.0
"""driver_info of IPMI nodes: every field's checks, and the masked repr."""

import pytest

from ferrum.common import exception
from ferrum.drivers.ipmi import driver_info
from ferrum.drivers.ipmi import management


def test_minimal_driver_info_gets_defaults():
    params = driver_info.parse({'ipmi_address': '10.0.0.5'})
    assert (params.address, params.port, params.username, params.password,
            params.cipher_suite, params.priv_level, params.protocol_version,
            params.bridging) == ('10.0.0.5', 623, '', '', None,
                                 'ADMINISTRATOR', '2.0', 'no')
    assert params.bmc == '10.0.0.5:623'


def test_every_field_is_read():
    params = driver_info.parse({
        'ipmi_address': 'bmc-7.example.com', 'ipmi_port': '6230',
        'ipmi_username': 'admin', 'ipmi_password': 's3cret',
        'ipmi_cipher_suite': 17, 'ipmi_priv_level': 'operator',
        'ipmi_bridging': 'dual', 'ipmi_target_channel': '7',
        'ipmi_target_address': '0x72', 'ipmi_transit_channel': 0,
        'ipmi_transit_address': '0x82', 'ipmi_local_address': '0x20',
        'ipmi_disable_boot_timeout': 'false'})
    assert params.port == 6230
    assert params.priv_level == 'OPERATOR'
    assert (params.target_channel, params.target_address,
            params.transit_channel, params.transit_address,
            params.local_address) == ('0x07', '0x72', '0x00', '0x82', '0x20')
    assert params.disable_boot_timeout is False


def test_repr_and_errors_never_show_the_password():
    params = driver_info.parse({'ipmi_address': '10.0.0.5',
                                'ipmi_password': 'hunter2-secret'})
    assert 'hunter2-secret' not in repr(params)
    assert 'hunter2-secret' not in str(params)
    with pytest.raises(exception.InvalidParameterValue) as err:
        driver_info.parse({'ipmi_address': '10.0.0.5',
                           'ipmi_password': ['hunter2-secret']})
    assert 'hunter2-secret' not in str(err.value)
    assert 'ipmi_password' in str(err.value)


def test_address_is_required_and_named():
    with pytest.raises(exception.MissingParameterValue, match='ipmi_address'):
        driver_info.parse({'ipmi_username': 'admin'})


@pytest.mark.parametrize('info, field', [
    ({'ipmi_address': '-oProxyCommand=x'}, 'ipmi_address'),
    ({'ipmi_address': 'a b'}, 'ipmi_address'),
    ({'ipmi_address': 42}, 'ipmi_address'),
    ({'ipmi_address': 'h', 'ipmi_port': 70000}, 'ipmi_port'),
    ({'ipmi_address': 'h', 'ipmi_port': 'http'}, 'ipmi_port'),
    ({'ipmi_address': 'h', 'ipmi_port': True}, 'ipmi_port'),
    ({'ipmi_address': 'h', 'ipmi_cipher_suite': 'best'}, 'ipmi_cipher_suite'),
    ({'ipmi_address': 'h', 'ipmi_cipher_suite': 3,
      'ipmi_protocol_version': '1.5'}, 'ipmi_cipher_suite'),
    ({'ipmi_address': 'h', 'ipmi_priv_level': 'ROOT'}, 'ipmi_priv_level'),
    ({'ipmi_address': 'h', 'ipmi_protocol_version': '3'},
     'ipmi_protocol_version'),
    ({'ipmi_address': 'h', 'ipmi_bridging': 'triple'}, 'ipmi_bridging'),
    ({'ipmi_address': 'h', 'ipmi_bridging': 'single',
      'ipmi_target_channel': 7}, 'ipmi_target_address'),
    ({'ipmi_address': 'h', 'ipmi_bridging': 'dual', 'ipmi_target_channel': 7,
      'ipmi_target_address': 1}, 'ipmi_transit_channel'),
    ({'ipmi_address': 'h', 'ipmi_target_address': 300},
     'ipmi_target_address'),
    ({'ipmi_address': 'h', 'ipmi_username': 'ad\nmin'}, 'ipmi_username'),
    ({'ipmi_address': 'h', 'ipmi_disable_boot_timeout': 'maybe'},
     'ipmi_disable_boot_timeout'),
])
def test_bad_values_name_the_field(info, field):
    with pytest.raises(exception.Invalid) as err:
        driver_info.parse(info)
    assert field in str(err.value)


def test_ipv6_address_is_normalised():
    assert driver_info.parse({'ipmi_address': '::1'}).address == '::1'


@pytest.mark.parametrize('data, device, persistent, uefi', [
    ('8000000000', None, None, False),
    ('c004000000', 'pxe', True, False),
    ('8008000000', 'disk', False, False),
    ('e004000000', 'pxe', True, True),
    ('e008000000', 'disk', True, True),
    ('8018000000', 'bios', False, False),
    ('0004000000', None, None, False),
])
def test_boot_flags_are_decoded(data, device, persistent, uefi):
    assert management.decode_boot_flags(data) == {
        'boot_device': device, 'persistent': persistent, 'uefi': uefi}


@pytest.mark.parametrize('capabilities, uefi', [
    ('boot_mode:uefi', True), ('cpu_vt:true, boot_mode:UEFI', True),
    ('boot_mode:bios', False), ('', False), ({'boot_mode': 'uefi'}, True),
])
def test_uefi_comes_from_capabilities(capabilities, uefi):
    assert management.is_uefi({'capabilities': capabilities}) is uefi
