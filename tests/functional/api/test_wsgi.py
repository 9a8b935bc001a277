# SPDX-License-Identifier: Apache-2.0
"""``ferrum.api.wsgi:application`` under an arbitrary WSGI server."""

import concurrent.futures
import logging
from unittest import mock

import pytest
from werkzeug import test as werkzeug_test

from ferrum import conf as ferrum_conf
from ferrum.api import local
from ferrum.api import microversion
from ferrum.api import wsgi
from ferrum.common import exception
from ferrum.db import api as db_api
from ferrum.db import migration
from ferrum.objects import conductor as conductor_obj
from tests.functional import server

MIN_VERSION = microversion.as_string(microversion.MIN_VERSION)


@pytest.fixture(autouse=True)
def restore_logging():
    """Undo the oslo.log set-up the application does on its first call."""
    loggers = [logging.root] + [
        logger for logger in logging.Logger.manager.loggerDict.values()
        if isinstance(logger, logging.Logger)]
    saved = [(logger, logger.level, logger.handlers[:], logger.propagate)
             for logger in loggers]
    yield
    for logger, level, handlers, propagate in saved:
        logger.setLevel(level)
        logger.propagate = propagate
        for handler in logger.handlers[:]:
            if handler not in handlers:
                logger.removeHandler(handler)


@pytest.fixture
def config_file(tmp_path, monkeypatch):
    # [api] is unused: the WSGI server in front binds, not ferrum.
    path = server.write_config(tmp_path, 0, {'DEFAULT': {
        'host': 'wsgi-conductor'}})
    monkeypatch.setenv(wsgi.CONFIG_FILE_ENV, str(path))
    return path


@pytest.fixture
def database(config_file):
    conf = ferrum_conf.new_conf(['--config-file', str(config_file)])
    database = db_api.Database(conf)
    yield database
    database.dispose()


@pytest.fixture
def application():
    app = wsgi.LazyApplication()
    yield app
    app.close()


def test_module_application_serves_the_api(database):
    migration.upgrade(database.engine)
    try:
        client = werkzeug_test.Client(wsgi.application)
        response = client.get('/v1')
        assert response.status_code == 200
        assert (response.headers['X-OpenStack-Ironic-API-Version']
                == MIN_VERSION)
        assert client.get('/v1/nodes').json == {'nodes': []}
        assert conductor_obj.get(database, 'wsgi-conductor').online
    finally:
        wsgi.application.close()
    assert not conductor_obj.get(database, 'wsgi-conductor').online


def test_concurrent_first_requests_build_one_application(database,
                                                        application):
    migration.upgrade(database.engine)
    client = werkzeug_test.Client(application)
    with mock.patch.object(local.LocalAPI, 'start', autospec=True,
                           side_effect=local.LocalAPI.start) as start:
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            codes = list(pool.map(lambda _: client.get('/v1').status_code,
                                  range(8)))
    assert codes == [200] * 8
    assert start.call_count == 1


def test_outdated_schema_fails_and_is_retried(database, application):
    client = werkzeug_test.Client(application)
    with pytest.raises(exception.SchemaOutOfDate):
        client.get('/v1')
    migration.upgrade(database.engine)
    assert client.get('/v1').status_code == 200


def test_json_rpc_transport_runs_no_conductor(database, application,
                                              config_file):
    migration.upgrade(database.engine)
    server.write_config(config_file.parent, 0, {'DEFAULT': {
        'host': 'wsgi-conductor', 'rpc_transport': 'json-rpc'}})
    client = werkzeug_test.Client(application)
    assert client.get('/v1/nodes').json == {'nodes': []}
    # No conductor answers: enrolling is refused as for an unknown driver.
    assert client.post('/v1/nodes', json={
        'driver': 'fake-hardware'}).status_code == 400
    assert conductor_obj.list_all(database) == []
