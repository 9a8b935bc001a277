# SPDX-License-Identifier: Apache-2.0
"""Config files checked at start: bad values refused, unknown names warned."""

import logging
import textwrap

import pytest

from ferrum import conf as ferrum_conf
from ferrum.common import exception
from ferrum.conf import opts
from ferrum.conf import validation


def _load(tmp_path, text):
    path = tmp_path / 'ferrum.conf'
    path.write_text(textwrap.dedent(text))
    conf = ferrum_conf.new_conf(['--config-file', str(path)])
    return conf, str(path)


def test_a_bad_choice_read_late_is_refused_at_load(tmp_path):
    path = tmp_path / 'ferrum.conf'
    path.write_text('[lease]\nbusy_node_policy = substitue\n')
    with pytest.raises(exception.ConfigInvalid) as raised:
        ferrum_conf.load_for_program(['--config-file', str(path)],
                                     setup_logging=False)
    assert str(raised.value) == (
        "[lease] busy_node_policy in %s is not valid: Valid values are "
        "[substitute, fail], but found 'substitue'. Fix it in the config "
        "file." % path)


def test_a_bad_typed_value_names_option_and_file(tmp_path):
    conf, path = _load(tmp_path, '''
        [api]
        port = 6385x
        ''')
    with pytest.raises(exception.ConfigInvalid, match=(
            r"^\[api\] port in %s is not valid: .*'6385x'" % path)):
        validation.check_values(conf)


def test_valid_files_pass(tmp_path):
    conf, _path = _load(tmp_path, '''
        [DEFAULT]
        debug = true
        [lease]
        busy_node_policy = fail
        [api]
        port = 6390
        ''')
    validation.check_values(conf)


def test_every_fixed_set_of_values_is_declared_as_choices():
    # An option whose help lists its values but that has no choices would
    # accept a misspelling; these are ferrum's options with a fixed set.
    with_choices = {(group, opt.dest) for group, group_opts in
                    opts.list_opts() for opt in group_opts
                    if getattr(opt.type, 'choices', None)}
    assert {('DEFAULT', 'auth_strategy'), ('DEFAULT', 'rpc_transport'),
            ('allocation', 'backend'), ('json_rpc', 'auth_strategy'),
            ('lease', 'busy_node_policy')} <= with_choices


def test_unknown_names_are_warned_once_with_the_nearest_name(tmp_path,
                                                              caplog):
    conf, path = _load(tmp_path, '''
        [DEFAULT]
        enabled_hardware_type = ipmi
        log-dir = /tmp
        [lease]
        busy_node_polcy = fail
        busy_node_polcy = substitute
        zzz = 1
        [leases]
        max_duration = 60
        [keystone_authtoken]
        auth_url = http://keystone
        [oslo_policy]
        enforce_scope = true
        [placement]
        auth_type = password
        username = ferrum
        user_domain_name = Default
        ''')
    with caplog.at_level(logging.WARNING, logger=validation.LOG.name):
        warnings = validation.warn_unknown(conf)
    assert warnings == [
        'Unknown option [DEFAULT] enabled_hardware_type in %s is ignored; '
        'did you mean enabled_hardware_types?' % path,
        'Unknown option [lease] busy_node_polcy in %s is ignored; did you '
        'mean busy_node_policy?' % path,
        'Unknown option [lease] zzz in %s is ignored; '
        '"oslo-config-generator --namespace ferrum" prints every option '
        'with its help (doc/deployment.md).' % path,
        'Unknown section [leases] in %s is ignored; did you mean [lease]?'
        % path,
    ]
    assert [r.getMessage() for r in caplog.records] == warnings


def test_deprecated_names_are_known(tmp_path):
    # keystoneauth's old names still set [placement] options.
    conf, _path = _load(tmp_path, '''
        [placement]
        auth_type = password
        url = http://placement
        tenant_name = service
        user-name = ferrum
        ''')
    assert validation.warn_unknown(conf) == []


def test_json_rpc_auth_plugin_options_are_known(tmp_path):
    # The API's credentials for conductors under [json_rpc] auth_strategy
    # keystone: the password plugin's (in the sample) and any other's.
    conf, _path = _load(tmp_path, '''
        [json_rpc]
        auth_strategy = keystone
        auth_type = password
        auth_url = http://keystone/v3
        username = ferrum
        user_domain_name = Default
        system_scope = all
        ''')
    assert validation.warn_unknown(conf) == []
    conf, _path = _load(tmp_path, '''
        [json_rpc]
        auth_type = v3applicationcredential
        application_credential_id = abc
        application_credential_secret = s3cret
        ''')
    assert validation.warn_unknown(conf) == []
