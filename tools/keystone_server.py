# SPDX-License-Identifier: Apache-2.0
"""A local OpenStack Keystone (keystone from PyPI) on loopback, for demos
(``make keystone``), end-to-end tests and benchmarks.

    python tools/keystone_server.py --dir DIR [--port 5000] [--db-url URL]

This writes ``DIR/keystone.conf``, runs Keystone's own set-up steps
(``keystone-manage`` ``db_sync``, ``fernet_setup``, ``credential_setup``
and ``bootstrap``, all idempotent, so a second run keeps the database, the
keys and the users) and then becomes gunicorn serving
``keystone.wsgi.api`` on 127.0.0.1. The bootstrap admin (user ``admin``,
admin of project ``admin`` and of the system) gets the password in
``$OS_BOOTSTRAP_PASSWORD``, else the one an earlier run left in
``DIR/admin-openrc``, else a new random one; ``DIR/admin-openrc`` (mode
0600) sets the ``OS_*`` variables for the ``openstack`` and ``baremetal``
clients. The catalog's identity endpoint is the same URL for the public,
internal and admin interfaces: keystonemiddleware looks for the internal
one by default.

On SQLite (the default, ``DIR/keystone.sqlite``) gunicorn runs one worker
with one thread, as Keystone's SQLite backend cannot take concurrent
writes; ``--db-url`` takes a ``postgresql+psycopg2://`` URL instead.
Settings meant for loopback only: passwords are hashed with bcrypt's
minimum cost (4 rounds, not 12: each token issued checks a password, and
12 rounds cost 0.2 s of CPU on the project machines) and SQLite commits
without fsync.
"""

import argparse
import grp
import os
import pwd
import secrets
import shlex
import sys
from collections.abc import Callable
from typing import Any

HOST = '127.0.0.1'
ADMIN = 'admin'
REGION = 'RegionOne'

CONFIG = '''[DEFAULT]
debug = false
[database]
connection = {url}
sqlite_synchronous = false
[fernet_tokens]
key_repository = {dir}/fernet-keys
# The same repository as the tokens' keeps fernet_setup from creating
# /etc/keystone/fernet-keys for the receipts.
[fernet_receipts]
key_repository = {dir}/fernet-keys
[credential]
key_repository = {dir}/credential-keys
[identity]
password_hash_rounds = 4
# Keystone's own cache, in the process (see write_config).
[cache]
enabled = {cache}
backend = dogpile.cache.memory
'''

OPENRC = '''export OS_AUTH_URL={auth_url}
export OS_IDENTITY_API_VERSION=3
export OS_USERNAME={user}
export OS_PASSWORD={password}
export OS_USER_DOMAIN_NAME=Default
export OS_SYSTEM_SCOPE=all
'''


def auth_url(port: int, host: str = HOST) -> str:
    """The identity endpoint clients authenticate against."""
    return 'http://%s:%d/v3' % (host, port)


def worker_count(db_url: str | None, workers: int) -> int:
    """``workers``, or 1 on SQLite: Keystone's SQLite backend cannot take
    concurrent writes."""
    return workers if db_url and not db_url.startswith('sqlite') else 1


def write_config(directory: str, db_url: str | None = None,
                 workers: int = 1) -> str:
    """Write ``directory/keystone.conf`` and return the directory's
    absolute path.

    Keystone's cache is in the process's memory, which makes a token
    validation about twice as cheap; Keystone invalidates it on changes
    (a role granted, a token revoked) only in the process that made them,
    so it is on only with one worker.
    """
    directory = os.path.abspath(directory)
    os.makedirs(directory, exist_ok=True)
    url = db_url or 'sqlite:///%s' % os.path.join(directory,
                                                  'keystone.sqlite')
    with open(os.path.join(directory, 'keystone.conf'), 'w') as conf:
        conf.write(CONFIG.format(url=url, dir=directory,
                                 cache=str(workers == 1).lower()))
    return directory


def admin_password(directory: str) -> str:
    """``$OS_BOOTSTRAP_PASSWORD``, else the password of an earlier run,
    else a new one."""
    given = os.environ.get('OS_BOOTSTRAP_PASSWORD')
    if given:
        return given
    try:
        with open(os.path.join(directory, 'admin-openrc')) as openrc:
            for line in openrc:
                if line.startswith('export OS_PASSWORD='):
                    return shlex.split(line.split('=', 1)[1])[0]
    except OSError:
        pass
    return secrets.token_urlsafe(16)


def write_openrc(directory: str, port: int, password: str) -> str:
    path = os.path.join(directory, 'admin-openrc')
    # Created 0600 from the start: the file holds the admin's password.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, 'w') as openrc:
        openrc.write(OPENRC.format(auth_url=auth_url(port), user=ADMIN,
                                   password=shlex.quote(password)))
    return path


def manage_steps(directory: str, port: int, password: str
                 ) -> list[list[str]]:
    """The ``keystone-manage`` command lines that set Keystone up."""
    # As root, the key set-up refuses to guess who owns the keys; naming
    # the current user and group works for any user.
    owner = ['--keystone-user', pwd.getpwuid(os.getuid()).pw_name,
             '--keystone-group', grp.getgrgid(os.getgid()).gr_name]
    url = auth_url(port)
    base = ['keystone-manage', '--config-file',
            os.path.join(directory, 'keystone.conf')]
    return [base + ['db_sync'],
            base + ['fernet_setup'] + owner,
            base + ['credential_setup'] + owner,
            # --option=value: a random password may begin with '-', which
            # argparse would take for an option ("expected one argument").
            base + ['bootstrap', '--bootstrap-username', ADMIN,
                    '--bootstrap-password=%s' % password,
                    '--bootstrap-public-url', url,
                    '--bootstrap-internal-url', url,
                    '--bootstrap-admin-url', url,
                    '--bootstrap-region-id', REGION]]


def setup(directory: str, port: int, db_url: str | None = None,
          workers: int = 1) -> str:
    """Configure and set up Keystone in ``directory``, in this process;
    returns the path of the admin's openrc."""
    directory = write_config(directory, db_url, workers)
    password = admin_password(directory)
    from keystone.cmd import cli  # the server's own code, imported late

    # One process for the four steps: importing Keystone costs seconds,
    # four keystone-manage processes would pay it four times. Each step
    # parses its own command line into Keystone's global configuration,
    # which clear() makes ready for the next.
    for argv in manage_steps(directory, port, password):
        cli.main(argv=argv)
        cli.CONF.clear()
    return write_openrc(directory, port, password)


def wsgi_application() -> Callable[..., Any]:
    """Keystone's WSGI application, for gunicorn in each worker.

    Keystone parses ``sys.argv`` with oslo.config when its WSGI module is
    imported, and under gunicorn that is gunicorn's command line: every
    worker would die on ``unrecognized arguments`` and be restarted
    forever while the master holds the port. The configuration comes
    from ``$OS_KEYSTONE_CONFIG_DIR`` instead.
    """
    del sys.argv[1:]
    from keystone.wsgi import api

    app: Callable[..., Any] = api.application
    return app


def command(directory: str, port: int, db_url: str | None = None,
            workers: int = 1, python: str = sys.executable
            ) -> tuple[list[str], dict[str, str]]:
    """The gunicorn command line and environment serving the Keystone
    set up in ``directory``, from the environment of ``python`` (the one
    Keystone is installed in)."""
    directory = os.path.abspath(directory)
    workers = worker_count(db_url, workers)
    bindir = os.path.dirname(python)
    env = dict(os.environ, OS_KEYSTONE_CONFIG_DIR=directory)
    env.pop('OS_BOOTSTRAP_PASSWORD', None)  # set up: the server needs none
    argv = [os.path.join(bindir, 'gunicorn'), '--no-control-socket',
            '--workers', str(workers), '--threads', '1',
            '--bind', '%s:%d' % (HOST, port),
            # A worker reports to the master only once Keystone is
            # imported, which takes far longer than gunicorn's default
            # 30 s on a loaded machine: it would be killed in a loop.
            '--timeout', '300',
            '--log-level', 'warning',
            '--pythonpath', os.path.dirname(os.path.abspath(__file__)),
            'keystone_server:wsgi_application()']
    return argv, env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--dir', default='.keystone',
                        help='Directory for keystone.conf, the keys, the '
                             'SQLite database and admin-openrc.')
    parser.add_argument('--port', type=int, default=5000)
    parser.add_argument('--db-url', help='Database URL instead of SQLite.')
    parser.add_argument('--workers', type=int, default=1,
                        help='gunicorn workers (PostgreSQL only).')
    args = parser.parse_args()
    workers = worker_count(args.db_url, args.workers)
    openrc = setup(args.dir, args.port, args.db_url, workers)
    argv, env = command(args.dir, args.port, args.db_url, workers)
    print('Keystone on %s (admin credentials: source %s)'
          % (auth_url(args.port), openrc), flush=True)
    os.execve(argv[0], argv, env)


if __name__ == '__main__':
    main()
