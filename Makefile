# ferrum: `make run` starts the all-in-one service, `make test` runs the suite.
# Both bootstrap .venv themselves; `make test` also installs the Debian
# packages the real-component tests need (ipmitool, postgresql).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
# The real Keystone for the tenancy tests and `make keystone`, in a
# virtualenv of its own: it brings eventlet, whose presence alone makes
# futurist warn on standard error in every ferrum process.
KEYSTONE_VENV := .venv-keystone
KEYSTONE_STAMP := $(KEYSTONE_VENV)/.installed
# The real ironic-python-agent for the agent tests (tests/agent), in a
# virtualenv of its own with the loop-disk hardware manager: its oslo stack
# must not meet ferrum's. The Debian tools after postgresql are what the
# agent runs on a disk, socat relays it across network namespaces, and
# genisoimage builds config drives on the conductor.
IPA_VENV := .venv-ipa
IPA_STAMP := $(IPA_VENV)/.installed
APT_PACKAGES := ipmitool postgresql qemu-utils parted gdisk fdisk udev lshw \
  psmisc bsdextrautils socat e2fsprogs util-linux genisoimage

.PHONY: run test genconfig bench bench-placement ab placement keystone states clean-venv system-packages

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): $(BIN)/python setup.cfg pyproject.toml
	$(BIN)/pip install -q -e .
	touch $@

$(TEST_STAMP): $(STAMP) tests/thirdparty_driver/setup.cfg client/setup.cfg \
    tests/agent_driver/setup.cfg
	$(BIN)/pip install -q -e '.[test]' -e tests/thirdparty_driver -e client \
	  -e tests/agent_driver
	touch $@

$(KEYSTONE_STAMP): tools/keystone-requirements.txt
	$(PYTHON) -m venv $(KEYSTONE_VENV)
	$(KEYSTONE_VENV)/bin/pip install -q --upgrade pip
	$(KEYSTONE_VENV)/bin/pip install -q -r tools/keystone-requirements.txt
	touch $@

$(IPA_STAMP): tools/ipa-requirements.txt tests/ipa_loopdisk/setup.cfg
	$(PYTHON) -m venv $(IPA_VENV)
	$(IPA_VENV)/bin/pip install -q --upgrade pip
	$(IPA_VENV)/bin/pip install -q -r tools/ipa-requirements.txt \
	  -e tests/ipa_loopdisk
	touch $@

run: $(STAMP)
	$(BIN)/ferrum

system-packages:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

# The tests not marked serial (tests/conftest.py) run on TEST_WORKERS
# pytest-xdist workers, then the serial ones alone (doc/testing.md,
# "Parallel and serial"). 3 on the 2-core machines: with the CLI in-process
# and the schemas copied, 2 workers kept the cores 63 % busy; 3 take the
# parallel part from 8 min to 6 (the serial part: 2.6 min).
# TEST_WORKERS=0 runs everything in one pytest process.
TEST_WORKERS ?= 3

test: $(TEST_STAMP) $(KEYSTONE_STAMP) $(IPA_STAMP) system-packages
ifeq ($(TEST_WORKERS),0)
	$(BIN)/python -m pytest -q --durations=25 tests
else
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) -m 'not serial' \
	  --durations=25 tests
	$(BIN)/python -m pytest -q -m serial --durations=10 tests
endif

genconfig: $(STAMP)
	$(BIN)/oslo-config-generator --namespace ferrum --namespace oslo.log \
	  --namespace oslo.policy --namespace keystonemiddleware.auth_token \
	  --output-file etc/ferrum/ferrum.conf.sample
	$(BIN)/oslopolicy-sample-generator --namespace ferrum \
	  --output-file etc/ferrum/policy.yaml.sample

# A local OpenStack Placement (noauth2, SQLite under .placement/) on
# 127.0.0.1:8778 for demos: see README.md, "Inventory in Placement".
placement: $(TEST_STAMP)
	$(BIN)/python tools/placement_server.py --dir .placement --port 8778

# A local Keystone (SQLite under .keystone/) on 127.0.0.1:5000 for demos;
# the admin's credentials are in .keystone/admin-openrc.
keystone: $(KEYSTONE_STAMP)
	$(KEYSTONE_VENV)/bin/python tools/keystone_server.py --dir .keystone --port 5000

states: $(STAMP)
	$(BIN)/python tools/states_to_dot.py --dot doc/states.dot --svg doc/states.svg

bench: $(STAMP)
	$(BIN)/python tools/bench/conductor_flow.py
	$(BIN)/python tools/bench/conductor_flow.py --idle-nodes 9000
	$(BIN)/python tools/bench/all_in_one_rss.py

bench-placement: $(TEST_STAMP)
	$(BIN)/python tools/bench/placement_sync.py --nodes 1000

# OLD against NEW (default: HEAD; . is this checkout as it is), each built
# in a worktree and venv of its own under ~/.cache/ferrum-ab; e.g.
# make ab OLD=511a7b6 AB_FLAGS='--backend postgresql --rounds 2'
ab:
	$(PYTHON) tools/bench/ab.py $(OLD) $(NEW) $(AB_FLAGS)

clean-venv:
	rm -rf $(VENV) $(KEYSTONE_VENV) $(IPA_VENV)
