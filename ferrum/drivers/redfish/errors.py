# SPDX-License-Identifier: Apache-2.0
"""What a failed Redfish call becomes: ferrum exceptions with a status.

:mod:`ferrum.drivers.redfish.client` turns every failure of sushy into one
of these (nothing of sushy's reaches the rest of the package). Each class's
``code`` is the HTTP status a client gets when the API waits for the call,
as for the oneview driver: 400 means the node's ``driver_info`` must change,
503 that the BMC may answer later, 409 that it refused in its current state.
Importing this module needs no sushy.
"""

from ferrum.common import exception


class RedfishError(exception.DriverError):
    """The BMC refused or failed an operation; the message says which."""

    msg_fmt = 'Redfish %(action)s on BMC %(address)s failed: %(reason)s'
    code = 409


class RedfishUnreachable(RedfishError):
    """503: the BMC did not answer, or answered 5xx: an outage of this BMC.

    The power sync keeps the node's last known power state and tries again
    at its next run; the message promises no retry, since a deploy step or
    an API call that meets it does not retry."""

    code = 503
    msg_fmt = ('BMC %(address)s did not answer Redfish %(action)s: '
               '%(reason)s. Check driver_info redfish_address and that the '
               'BMC is up.')


class RedfishServerError(RedfishUnreachable):
    """503: the BMC answered with a 5xx status (after sushy's retries): an
    outage of this BMC as well, but one that says what the BMC answered.

    :ivar status: the HTTP status the BMC answered.
    """

    msg_fmt = ('BMC %(address)s answered Redfish %(action)s with HTTP '
               '%(status)s: %(reason)s. The BMC reports a failure of its '
               'own.')


class RedfishAuthError(RedfishError):
    code = 400
    msg_fmt = ('BMC %(address)s refused the credentials during Redfish '
               '%(action)s: %(reason)s. Check driver_info redfish_username '
               'and redfish_password.')


class RedfishTLSError(RedfishError):
    code = 400
    msg_fmt = ('The TLS certificate of BMC %(address)s was refused during '
               'Redfish %(action)s: %(reason)s. Set driver_info '
               'redfish_verify_ca to the CA bundle that signed the BMC\'s '
               'certificate (or false to skip the check).')


class RedfishSystemNotFound(RedfishError):
    code = 400
    msg_fmt = ('BMC %(address)s has no System %(system)s. Set driver_info '
               'redfish_system_id to one of the Systems it has: %(known)s.')


class RedfishSystemAmbiguous(RedfishError):
    code = 400
    msg_fmt = ('BMC %(address)s has %(count)d Systems: set driver_info '
               'redfish_system_id to one of %(known)s.')


class RedfishUnsupported(RedfishError):
    """400: the BMC does not have what was asked (501, a missing action)."""

    code = 400
    msg_fmt = ('BMC %(address)s does not support %(action)s: %(reason)s')


class RedfishMediaError(RedfishError):
    """400: the BMC could not insert an image into its virtual media.

    A BMC downloads the image itself when it is inserted, so its error
    answer is about the image (a wrong URL, a server it cannot reach), not
    an outage of the BMC."""

    code = 400
    msg_fmt = ('BMC %(address)s could not insert the image %(image)s into '
               'its virtual media: %(reason)s. Check %(source)s: the URL '
               'must be right and its server reachable from the BMC.')
