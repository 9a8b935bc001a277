# SPDX-License-Identifier: Apache-2.0
"""The REST API: an Ironic v1-compatible WSGI application."""
