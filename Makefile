# hitless: make targets are verbs. Variables choose the target and the topology.
#   P4C=     P4 compiler   (default: p4c-bm2-ss if on PATH, else p4sim-compile; p4sim/target.py)
#   SWITCH=  P4 switch     (default: simple_switch_grpc if on PATH, else p4sim-switch)
#   TOPO=    fattree | leafspine | ucd4        K= fat-tree arity (even, >= 4)
#   MODE=    static | ecmp | spray             OCS=1 attaches the emulated OCS
#   CMD=     a Mininet CLI command or script for run-topo (default: open the CLI)
#   TOPO_FILE= a topology JSON instead of TOPO/K;  RUN_ARGS= more `hitless run-topo` options
#   SERVERS=a,b  run-topo over these servers (Mininet's cluster edition; localhost is this machine)
#   VIEW=1   serve the live view on 127.0.0.1:VIEW_PORT (8765);  VIEW_CONTROL=1 lets the page reconfigure
# Every target runs the `hitless` command (.venv/bin/hitless, installed by `make setup`).

SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV    := .venv
PY      := $(CURDIR)/$(VENV)/bin/python
HITLESS  = $(dir $(PY))hitless
BUILD   := build
TOPOS   := fattree leafspine ucd4
MODES   := static ecmp spray

TOPO ?= fattree
K    ?= 4
MODE ?= ecmp
OCS  ?= 0
CMD  ?=
VIEW ?= 0
VIEW_PORT ?= 8765
VIEW_CONTROL ?= 0

# Empty means "choose at run time" (the real tools once `make setup` has installed them). The Python
# entry points read them from the environment, so no value is pasted into a shell command.
P4C    ?=
SWITCH ?=
export P4C SWITCH

# Values a user types (a file name, a command, options) reach the recipes only through the
# environment: a recipe says "$$CMD", which the shell expands to one word and never parses again, so
# backticks, quotes or ';' in a value stay characters of that value. RUN_ARGS is split into words
# (globbing off) but not parsed either. Never write $(CMD) and the like inside a recipe.
RUN_ARGS ?=
SERVERS ?=
export TOPO TOPO_FILE K MODE OCS CMD RUN_ARGS BUILD VIEW_PORT SERVERS

ifeq ($(filter $(TOPO),$(TOPOS)),)
$(error TOPO=$(TOPO) is not a topology; valid values: $(TOPOS))
endif
ifeq ($(filter $(MODE),$(MODES)),)
$(error MODE=$(MODE) is not a forwarding mode; valid values: $(MODES))
endif

.PHONY: help setup test pytest lint p4-build tofino-check run-topo ptf ptf-all demo bench clean clean-net FORCE

help:
	@echo "make setup     install system packages and the Python environment (.venv)"
	@echo "make run-topo  TOPO=$$TOPO K=$$K MODE=$$MODE [OCS=1] [CMD=pingall] [VIEW=1]: run a topology in Mininet"
	@echo "make test      lint, unit and integration tests, PTF packet tests on every compiler x switch pairing"
	@echo "make ptf       PTF packet tests of the P4 programs with P4C on SWITCH"
	@echo "make p4-build  compile p4src/ with P4C into $$BUILD/"
	@echo "make tofino-check  check p4src/tna/ for Tofino 1 and 2 (bf-p4c if installed, else p4c's front end)"
	@echo "make demo      short versions of the experiments, results in results/demo/"
	@echo "make bench     benchmarks (compiler, switch, tablegen, controller)"
	@echo "make lint      ruff"
	@echo "make clean     remove build outputs;  make clean-net: remove leftovers of a killed run"

setup:
	@echo "== setup"
	@bash scripts/setup.sh

$(VENV)/.pip-stamp: pyproject.toml
	@bash scripts/setup.sh

lint: $(VENV)/.pip-stamp
	@echo "== lint (ruff)"
	@$(VENV)/bin/ruff check .
	@"$(PY)" -m scripts.tools.testreport record lint passed "ruff: no findings"

pytest: $(VENV)/.pip-stamp
	@echo "== pytest"
	@$(VENV)/bin/pytest

# Every step runs (-k), each records what it tested and skipped, and the summary ends the output: a
# check whose tool this machine lacks is a skip with its reason; HITLESS_STRICT=1 (.ci/run) fails it.
test: setup
	@report="$$(realpath -m -- "$$BUILD")/test-report"; rm -rf -- "$$report"; \
	  HITLESS_TEST_REPORT="$$report" $(MAKE) --no-print-directory -k lint tofino-check pytest ptf-all; rc=$$?; \
	  "$(PY)" -m scripts.tools.testreport "$$report" || rc=1; exit $$rc

# One staleness rule, Python's too (p4sim/target.py stale_programs, for `python -m emulation run`
# without make): an output is stale when it is missing, or older than a source under p4src/ or than
# $(BUILD)/.compiler. That file records the chosen compiler (P4C, else the default) and is rewritten
# only when the choice changes, so a new P4C recompiles and an unchanged one never does.
P4_PROGRAMS := fabric ocs
P4_SOURCES  := $(shell find p4src -name '*.p4')
P4_OUTPUTS  := $(foreach p,$(P4_PROGRAMS),$(BUILD)/$(p).json $(BUILD)/$(p).p4info.txtpb)

p4-build: $(P4_OUTPUTS)

$(BUILD)/.compiler: FORCE | $(VENV)/.pip-stamp
	@"$(HITLESS)" build --build "$$BUILD" --record-compiler

$(P4_OUTPUTS) &: $(P4_SOURCES) $(BUILD)/.compiler
	@echo "== p4-build"
	@"$(HITLESS)" build --build "$$BUILD" --p4src p4src

# The TNA programs on tna and t2na: bf-p4c with a resource summary where it is installed, else
# p4c's front end against ../shared/toolchain/tofino-p4include (fails when that folder is missing).
tofino-check: $(VENV)/.pip-stamp
	@echo "== tofino-check"
	@"$(HITLESS)" tofino-check --build "$$BUILD/tofino"

run-topo: $(VENV)/.pip-stamp
	@echo "== run-topo $(if $(TOPO_FILE),TOPO_FILE,TOPO=$$TOPO K=$$K) MODE=$$MODE OCS=$$OCS"
	@set -f; "$(HITLESS)" run-topo $(if $(TOPO_FILE),--topo-file "$$TOPO_FILE",--topo "$$TOPO" --k "$$K") \
	  --mode "$$MODE" --ocs "$$OCS" --build "$$BUILD" --p4src p4src $(if $(CMD),--cmd "$$CMD") \
	  $(if $(SERVERS),--servers "$$SERVERS") \
	  $(if $(filter 1,$(VIEW)),--view --view-port "$$VIEW_PORT") $(if $(filter 1,$(VIEW_CONTROL)),--view-control) $$RUN_ARGS

ptf: p4-build
	@echo "== ptf"
	@"$(PY)" ptf-tests/ptf_runner.py --build "$$BUILD"

ptf-all: $(VENV)/.pip-stamp
	@echo "== ptf on every compiler x switch pairing installed"
	@"$(PY)" ptf-tests/ptf_runner.py --all-pairings --build "$$BUILD"

demo: $(VENV)/.pip-stamp
	@echo "== demo: short experiments 1 (bbm, mbb-timed, mbb on ucd4) and 5 (static, ecmp, spray on a k=4 fat-tree)"
	@"$(HITLESS)" experiment demo --out results/demo

bench: $(VENV)/.pip-stamp
	@echo "== bench"
	@"$(HITLESS)" bench

clean:
	@echo "== clean"
	rm -rf -- "$$BUILD" results/tmp .pytest_cache .ruff_cache

clean-net:
	@echo "== clean-net"
	@"$(HITLESS)" clean-net
