# SPDX-License-Identifier: Apache-2.0
"""OneView's resources as ferrum uses them, and the conductor's client.

:class:`Client` is a :class:`ferrum.drivers.oneview.session.Session` (the
one module that talks to OneView, whose rules apply) with one method per
thing the driver does to server hardware, profile templates and profiles;
they take and return plain dicts and raise
:mod:`ferrum.drivers.oneview.errors`. :func:`get_client` keeps one logged-in
client per set of ``[oneview]`` options for the life of the conductor.
"""

import functools
import threading
from typing import Any

from oslo_config import cfg

from ferrum.drivers.oneview import errors
from ferrum.drivers.oneview import session as session_mod
from ferrum.drivers.oneview import settings as settings_mod

_HARDWARE_COLLECTION = '/rest/server-hardware'


def _get(uri: str, session: Any) -> Any:
    return session.connection.get(uri)


class Client(session_mod.Session):
    """A logged-in session with one appliance and the calls ferrum makes on
    it; safe to share by threads (see
    :class:`ferrum.drivers.oneview.session.Session`)."""

    # ---- server hardware --------------------------------------------------

    def get_server_hardware(self, uri: str) -> dict[str, Any]:
        data = self.call('reading server hardware %s' % uri,
                         lambda c: c.server_hardware.get_by_uri(uri).data,
                         not_found=('Server hardware', uri))
        return dict(data)

    def list_server_hardware(self, page_size: int) -> list[dict[str, Any]]:
        """Every server hardware, ``page_size`` per request.

        Pages are followed through ``nextPageUri`` so that an appliance
        answering with smaller pages still yields everything.
        """
        members: list[dict[str, Any]] = []
        uri: str | None = '%s?start=0&count=%d' % (_HARDWARE_COLLECTION,
                                                   page_size)
        seen: set[str] = set()
        while uri and uri not in seen:
            seen.add(uri)
            page = self.call('listing server hardware',
                             functools.partial(_get, uri))
            if not isinstance(page, dict):
                raise errors.OneViewError(action='listing server hardware',
                                          reason='unexpected answer %r'
                                          % (str(page)[:200],))
            batch = page.get('members') or []
            members.extend(dict(item) for item in batch)
            following = page.get('nextPageUri')
            uri = str(following) if following and batch else None
        return members

    def set_power_state(self, uri: str, body: dict[str, str]) -> None:
        """PUT ``body`` to the hardware's powerState and wait for the task."""
        wait = self.settings.wait

        def run(c: Any) -> None:
            hardware = c.server_hardware.new(c.connection, {'uri': uri})
            hardware.update_power_state(body, timeout=wait)
        self.call('setting the power of %s to %s' % (
            uri, '/'.join(str(v) for v in body.values())), run,
            not_found=('Server hardware', uri))

    # ---- templates and profiles -------------------------------------------

    def get_template(self, uri: str) -> dict[str, Any]:
        data = self.call(
            'reading server profile template %s' % uri,
            lambda c: c.server_profile_templates.get_by_uri(uri).data,
            not_found=('Server profile template', uri))
        return dict(data)

    def create_profile(self, template_uri: str, hardware_uri: str,
                       name: str, first_boot_device: str | None = None
                       ) -> str:
        """Apply a new profile from the template; return the profile URI.

        :param first_boot_device: a OneView boot device (PXE, HardDisk...)
            to put first in the template's boot order.
        """
        wait = self.settings.wait

        def run(c: Any) -> str:
            template = c.server_profile_templates.get_by_uri(template_uri)
            profile = dict(template.get_new_profile())
            profile['name'] = name
            profile['serverHardwareUri'] = hardware_uri
            # Unlinked from the template, as upstream: a template change
            # must not touch a running node's profile.
            profile['serverProfileTemplateUri'] = ''
            if first_boot_device:
                boot = dict(profile.get('boot') or {})
                order = [str(d) for d in boot.get('order') or []]
                boot['order'] = [first_boot_device] + [
                    d for d in order if d != first_boot_device]
                boot['manageBoot'] = True
                profile['boot'] = boot
            created = c.server_profiles.create(profile, timeout=wait)
            return str(created.data['uri'])
        return self.call('applying a profile from %s to %s' % (
            template_uri, hardware_uri), run,
            not_found=('Server profile template', template_uri))

    def get_profile(self, uri: str) -> dict[str, Any]:
        data = self.call('reading server profile %s' % uri,
                         lambda c: c.server_profiles.get_by_uri(uri).data,
                         not_found=('Server profile', uri))
        return dict(data)

    def set_first_boot_device(self, uri: str, device: str) -> None:
        """Move ``device`` (a OneView name: PXE, HardDisk...) to the front
        of the profile's boot order; nothing is written if it already is."""
        wait = self.settings.wait

        def run(c: Any) -> None:
            profile = c.server_profiles.get_by_uri(uri)
            boot = dict(profile.data.get('boot') or {})
            order = [str(d) for d in boot.get('order') or []]
            if order[:1] == [device] and boot.get('manageBoot'):
                return
            boot['order'] = [device] + [d for d in order if d != device]
            boot['manageBoot'] = True
            profile.update({'boot': boot}, timeout=wait)
        self.call('setting %s first in the boot order of profile %s'
                  % (device, uri), run, not_found=('Server profile', uri))

    def delete_profile(self, uri: str) -> bool:
        """Remove a profile; False if it was already gone."""
        wait = self.settings.wait

        def run(c: Any) -> None:
            c.server_profiles.get_by_uri(uri).delete(timeout=wait)
        try:
            self.call('removing server profile %s' % uri, run,
                      not_found=('Server profile', uri))
        except errors.OneViewNotFound:
            return False
        return True


_CLIENTS: dict[settings_mod.Settings, Client] = {}
#: Settings whose login was already tried at a conductor's start.
_VERIFIED: set[settings_mod.Settings] = set()
_CLIENTS_LOCK = threading.Lock()


def check_configuration(conf: cfg.ConfigOpts) -> None:
    """Check the [oneview] options; verify the login in the background.

    Called when the conductor starts. Missing or unreadable options, and a
    CA file without a certificate, raise (the conductor does not start);
    wrong credentials or an appliance that is down are only logged, since
    the appliance may come back.

    :raises OneViewConfigError: naming the option to fix.
    """
    client = get_client(conf)
    ca_file = client.settings.ca_file
    if ca_file is not None:
        settings_mod.check_ca_file(ca_file)
    with _CLIENTS_LOCK:
        if client.settings in _VERIFIED:
            return  # each oneview interface calls this; one login will do
        _VERIFIED.add(client.settings)
    thread = threading.Thread(target=client.verify_login, daemon=True,
                              name='oneview-login-check')
    thread.start()


def get_client(conf: cfg.ConfigOpts) -> Client:
    """The conductor's client for the configured appliance.

    Options are read at each call, so a changed configuration gets its own
    client (and login) while the session of the old one is left to expire.

    :raises OneViewConfigError: the [oneview] options are incomplete.
    """
    settings = settings_mod.settings_from(conf)
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(settings)
        if client is None:
            session_mod.quieten_hponeview()
            client = _CLIENTS[settings] = Client(settings)
        return client

