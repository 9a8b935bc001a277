# SPDX-License-Identifier: Apache-2.0
"""sushy-tools' emulator, unmodified, with processors and memory added.

The emulator's fake driver reports no processors and no memory (its
``ProcessorSummary`` and ``MemorySummary`` carry only a Status, and no
``Processors`` link). This program serves the emulator's own Flask app,
``sushy_tools.emulator.main:app``, behind a WSGI middleware that adds them
to every System, from ``FERRUM_INVENTORY`` in the emulator's config file
(``sockets``, ``threads_per_socket``, ``memory_gib``, ``model``,
``bios_version``):

* the System gets ``ProcessorSummary`` ``Count``/``LogicalProcessorCount``/
  ``Model``, ``MemorySummary.TotalSystemMemoryGiB`` and a ``Processors``
  link;
* the System's ``BiosVersion`` (the fake driver gives none) is
  ``bios_version``, when set;
* ``Systems/<id>/Processors`` and ``Processors/CPU<n>`` are rendered from
  the emulator's own templates (``ProcessorArchitecture`` ``x86``,
  ``InstructionSet`` ``x86-64``).

Everything else (auth, unknown Systems, power, storage from the
emulator's ``SUSHY_EMULATOR_STORAGE``/``_DRIVES`` options) is the
emulator's: a Processors read is first asked of the emulator as a read of
its System, and only a 200 is replaced. With ``FERRUM_CRASH_ON`` set, the
process exits at once when asked for a path ending with it: a BMC that
dies in the middle of a conversation.

Run as ``python inventory_emulator.py --config FILE`` (a file path, so it
imports nothing of the tests); tests/functional/redfish/emulator.py does.
"""

import argparse
import json
import os
import re
import ssl
import sys

from werkzeug import wrappers

_PATHS = re.compile(
    r'^/redfish/v1/Systems/([^/]+)(/Processors(?:/([^/]+))?)?$')


class AddInventory:
    """The WSGI middleware; ``app`` is the emulator's Flask app."""

    def __init__(self, app, inventory, crash_on=None):
        self.app = app
        self.inner = app.wsgi_app
        self.inventory = inventory
        self.crash_on = crash_on

    def _cpus(self):
        inv = self.inventory
        return [{'id': 'CPU%d' % n, 'Id': 'CPU%d' % n, 'socket': 'CPU %d' % n,
                 'vendor': 'Intel(R) Corporation', 'model': inv['model'],
                 'cores': inv['threads_per_socket'] // 2,
                 'threads': inv['threads_per_socket']}
                for n in range(inv['sockets'])]

    def _system(self, identity, document):
        inv = self.inventory
        document.setdefault('ProcessorSummary', {}).update(
            Count=inv['sockets'], Model=inv['model'],
            LogicalProcessorCount=inv['sockets'] * inv['threads_per_socket'])
        document.setdefault('MemorySummary', {}).update(
            TotalSystemMemoryGiB=inv['memory_gib'])
        document['Processors'] = {
            '@odata.id': '/redfish/v1/Systems/%s/Processors' % identity}
        if inv.get('bios_version'):
            document['BiosVersion'] = inv['bios_version']
        return document

    def _render(self, identity, cpu):
        processors = self._cpus()
        with self.app.app_context():
            if cpu is None:
                return json.loads(self.app.render_template(
                    'processors_collection.json', identity=identity,
                    processors=processors))
            for processor in processors:
                if processor['id'] == cpu:
                    return json.loads(self.app.render_template(
                        'processor.json', identity=identity,
                        processor=processor))
        return None

    def __call__(self, environ, start_response):
        path = environ.get('PATH_INFO', '').rstrip('/')
        if self.crash_on and path.endswith(self.crash_on):
            os._exit(3)
        match = _PATHS.match(path)
        if not match or environ.get('REQUEST_METHOD') != 'GET':
            return self.inner(environ, start_response)
        identity, processors, cpu = match.groups()
        # The emulator decides auth and whether the System exists.
        system = wrappers.Response.from_app(self.inner, dict(
            environ, PATH_INFO='/redfish/v1/Systems/%s' % identity))
        if system.status_code != 200:
            return system(environ, start_response)
        if processors:
            document = self._render(identity, cpu)
        else:
            document = self._system(identity, json.loads(system.get_data()))
        if document is None:
            system.status_code = 404
            document = {'error': {'message': 'No processor %s' % cpu}}
        system.set_data(json.dumps(document))
        return system(environ, start_response)


def main():
    parser = argparse.ArgumentParser('inventory-emulator')
    parser.add_argument('--config', required=True)
    args = parser.parse_args()
    # The emulator's app configures itself from this when imported.
    os.environ['SUSHY_EMULATOR_CONFIG'] = os.path.abspath(args.config)
    from sushy_tools.emulator import main as emulator

    app = emulator.app
    app.wsgi_app = AddInventory(app, app.config['FERRUM_INVENTORY'],
                                app.config.get('FERRUM_CRASH_ON'))
    context = None
    if app.config.get('SUSHY_EMULATOR_SSL_CERT'):
        # The emulator's own certificate options, as sushy-emulator.
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(app.config['SUSHY_EMULATOR_SSL_CERT'],
                                app.config['SUSHY_EMULATOR_SSL_KEY'])
    app.run(host=app.config['SUSHY_EMULATOR_LISTEN_IP'],
            port=app.config['SUSHY_EMULATOR_LISTEN_PORT'],
            ssl_context=context)
    return 0


if __name__ == '__main__':
    sys.exit(main())
