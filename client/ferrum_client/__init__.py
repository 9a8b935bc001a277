# SPDX-License-Identifier: Apache-2.0
"""Client and CLI plugin for ferrum's lease API."""
