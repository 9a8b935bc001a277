# ferrum: `make run` starts the all-in-one service, `make test` runs the suite.
# Both bootstrap .venv themselves; `make test` also installs the Debian
# packages the real-component tests need (ipmitool, postgresql).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
APT_PACKAGES := ipmitool postgresql

.PHONY: run test genconfig bench bench-placement placement keystone states clean-venv system-packages

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): $(BIN)/python setup.cfg pyproject.toml
	$(BIN)/pip install -q -e .
	touch $@

$(TEST_STAMP): $(STAMP) tests/thirdparty_driver/setup.cfg client/setup.cfg
	$(BIN)/pip install -q -e '.[test]' -e tests/thirdparty_driver -e client
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

test: $(TEST_STAMP) system-packages
	$(BIN)/python -m pytest -q tests

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
keystone: $(TEST_STAMP)
	$(BIN)/python tools/keystone_server.py --dir .keystone --port 5000

states: $(STAMP)
	$(BIN)/python tools/states_to_dot.py --dot doc/states.dot --svg doc/states.svg

bench: $(STAMP)
	$(BIN)/python tools/bench/conductor_flow.py
	$(BIN)/python tools/bench/conductor_flow.py --idle-nodes 9000
	$(BIN)/python tools/bench/all_in_one_rss.py

bench-placement: $(TEST_STAMP)
	$(BIN)/python tools/bench/placement_sync.py --nodes 1000

clean-venv:
	rm -rf $(VENV)
