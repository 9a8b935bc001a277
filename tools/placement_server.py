# SPDX-License-Identifier: Apache-2.0
"""A local OpenStack Placement (openstack-placement from PyPI) on loopback,
for demos (``make placement``), end-to-end tests and benchmarks.

    python tools/placement_server.py --dir DIR [--port 8778] [--db-url URL]

Placement 16.0.0 ships no ``placement-api`` script, so its WSGI callable
runs under gunicorn, which reads the configuration only from
``$OS_PLACEMENT_CONFIG_DIR/placement.conf``: this writes that file into
DIR (noauth2, so clients send ``X-Auth-Token: admin``; the schema created
with ``placement-manage db sync``) and then becomes gunicorn. On SQLite it
runs exactly one worker with one thread: with more, concurrent writes
fail with "database is locked". ``--db-url`` takes a
``postgresql+psycopg2://`` URL instead.
"""

import argparse
import os
import subprocess
import sys

CONFIG = '''[DEFAULT]
debug = false
[api]
auth_strategy = noauth2
[placement_database]
connection = {url}
[oslo_policy]
policy_file = {policy}
'''

#: noauth2 gives the "admin" token the admin role alone, and Placement lets
#: only the service role call POST /reshaper; with Keystone, ferrum's
#: service user has that role, as nova's does. Granting it to admin here
#: lets the local Placement serve ferrum's batched pushes.
POLICY = '''"placement:reshaper:reshape": "role:admin or role:service"
'''


def command(directory: str, port: int, db_url: str | None = None,
            host: str = '127.0.0.1', workers: int = 1
            ) -> tuple[list[str], dict[str, str]]:
    """The gunicorn command line and environment, once the configuration
    is written and the schema created (by one process: workers that each
    sync it on start-up race on PostgreSQL)."""
    os.makedirs(directory, exist_ok=True)
    url = db_url or 'sqlite:///%s' % os.path.join(
        os.path.abspath(directory), 'placement.sqlite')
    policy = os.path.join(os.path.abspath(directory), 'policy.yaml')
    with open(policy, 'w') as rules:
        rules.write(POLICY)
    with open(os.path.join(directory, 'placement.conf'), 'w') as conf:
        conf.write(CONFIG.format(url=url, policy=policy))
    if url.startswith('sqlite'):
        workers = 1
    bindir = os.path.dirname(sys.executable)
    env = dict(os.environ, OS_PLACEMENT_CONFIG_DIR=os.path.abspath(directory))
    subprocess.run([os.path.join(bindir, 'placement-manage'), '--config-dir',
                    os.path.abspath(directory), 'db', 'sync'],
                   env=env, check=True, capture_output=True)
    gunicorn = os.path.join(bindir, 'gunicorn')
    argv = [gunicorn, '--no-control-socket', '--workers', str(workers),
            '--threads', '1', '--bind', '%s:%d' % (host, port),
            '--log-level', 'warning', 'placement.wsgi.api:application']
    return argv, env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--dir', default='.placement',
                        help='Directory for placement.conf and the SQLite '
                             'database.')
    parser.add_argument('--port', type=int, default=8778)
    parser.add_argument('--db-url', help='Database URL instead of SQLite.')
    parser.add_argument('--workers', type=int, default=1,
                        help='gunicorn workers (PostgreSQL only).')
    args = parser.parse_args()
    argv, env = command(args.dir, args.port, args.db_url,
                        workers=args.workers)
    print('Placement on http://127.0.0.1:%d (noauth2, token "admin")'
          % args.port, flush=True)
    os.execve(argv[0], argv, env)


if __name__ == '__main__':
    main()
