# SPDX-License-Identifier: Apache-2.0
"""driver_info of redfish nodes: Ironic's names, checked without I/O, and
errors that name the field and never echo a secret."""

import pytest

from ferrum.common import exception
from ferrum.drivers.redfish import driver_info


def test_the_address_defaults_to_https_and_the_rest_to_ironics_defaults():
    params = driver_info.parse({'redfish_address': '10.0.0.5:8443/'})
    assert params.address == 'https://10.0.0.5:8443'
    assert (params.system_id, params.username, params.password,
            params.verify_ca, params.auth_type) == ('', '', '', True, 'auto')
    assert params.system_path == ''


def test_a_system_id_becomes_its_path_and_a_path_stays():
    info = {'redfish_address': 'http://bmc', 'redfish_system_id': 'a b'}
    assert driver_info.parse(info).system_path == '/redfish/v1/Systems/a%20b'
    info['redfish_system_id'] = '/redfish/v1/Systems/1/'
    assert driver_info.parse(info).system_path == '/redfish/v1/Systems/1'


@pytest.mark.parametrize('value, expected', [
    (True, True), (False, False), ('false', False), ('True', True),
    ('no', False), ('', True), (None, True)])
def test_verify_ca_true_or_false(value, expected):
    params = driver_info.parse({'redfish_address': 'bmc',
                                'redfish_verify_ca': value})
    assert params.verify_ca is expected


def test_verify_ca_a_bundle_path_that_exists(tmp_path):
    bundle = tmp_path / 'ca.pem'
    bundle.write_text('x')
    params = driver_info.parse({'redfish_address': 'bmc',
                                'redfish_verify_ca': str(bundle)})
    assert params.verify_ca == str(bundle)
    with pytest.raises(exception.InvalidParameterValue,
                       match='redfish_verify_ca'):
        driver_info.parse({'redfish_address': 'bmc',
                           'redfish_verify_ca': str(tmp_path / 'missing')})


@pytest.mark.parametrize('info, field', [
    ({'redfish_address': 'ftp://bmc'}, 'redfish_address'),
    ({'redfish_address': 'https://'}, 'redfish_address'),
    ({'redfish_address': 'bmc:99999'}, 'redfish_address'),
    ({'redfish_address': 7}, 'redfish_address'),
    ({'redfish_address': 'https://bmc one/'}, 'redfish_address'),
    ({'redfish_address': 'bmc\t1'}, 'redfish_address'),
    ({'redfish_address': 'bmc', 'redfish_auth_type': 'kerberos'},
     'redfish_auth_type'),
    ({'redfish_address': 'bmc', 'redfish_system_id': '/other/1'},
     'redfish_system_id'),
    ({'redfish_address': 'bmc', 'redfish_username': ['x']},
     'redfish_username'),
    ({'redfish_address': 'bmc', 'redfish_verify_ca': 3},
     'redfish_verify_ca'),
])
def test_bad_values_name_their_field(info, field):
    with pytest.raises(exception.InvalidParameterValue, match=field):
        driver_info.parse(info)


def test_a_missing_address_says_what_to_set():
    with pytest.raises(exception.MissingParameterValue,
                       match='redfish_address is required'):
        driver_info.parse({'redfish_username': 'admin'})


@pytest.mark.parametrize('address', [
    'https://admin:T0p@bmc', 'admin:T0p@bmc', 'https://admin:T0p@bmc:99999',
    'ftp://admin:T0p@bmc', 'https://admin:T0p@', 'https://admin:T0p@[::1'])
def test_secrets_stay_out_of_messages_and_repr(address):
    with pytest.raises(exception.InvalidParameterValue) as caught:
        driver_info.parse({'redfish_address': address})
    assert 'T0p' not in str(caught.value)
    assert 'redfish_password' in str(caught.value)
    params = driver_info.parse({'redfish_address': 'bmc',
                                'redfish_password': 'T0p-secret'})
    assert 'T0p-secret' not in repr(params)


def test_auth_type_is_case_insensitive():
    assert driver_info.parse({'redfish_address': 'bmc',
                              'redfish_auth_type': 'Basic'}
                             ).auth_type == 'basic'
