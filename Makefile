# The two commands of the README: `make demo` and `make test`. Both create .venv when it is missing and
# install everything they need into it. torch==2.13.0 (CPU build) is installed first so that nothing
# pulls a CUDA build; the pin lives here and in CI only, never in the packages' own requirements.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
REPORTS := reports
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
# setuptools prints a notice for every editable install of a flat layout ("Editable installation. Please be
# careful with folders in your working directory with the same name as your package"): the checkout is meant
# to be imported, so the notice says nothing here and is silenced for the installs below.
QUIET_EDITABLE := PYTHONWARNINGS="ignore:Editable installation"

.PHONY: install test test-plan demo bench clean browser embedded-model embedded-claim claim-contrast claim-order meta-eval probe facts-dev dev-table wheels

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python requirements-dev.txt pyproject.toml runtime/pyproject.toml training/pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet torch==2.13.0
	# llama-cpp-python compiles llama.cpp; its multimodal library is not needed (about a third of the build)
	$(QUIET_EDITABLE) CMAKE_ARGS="-DLLAVA_BUILD=OFF" $(BIN)/python -m pip install --quiet -r requirements-dev.txt
	# tritonclient only for the ModelConfig schema the Triton config test checks against; without its
	# dependencies, whose pins (ml-dtypes<=0.5.4, protobuf<7) would downgrade what onnx needs.
	$(BIN)/python -m pip install --quiet --no-deps tritonclient==2.73.0
	touch $@

install: $(STAMP)

# Measured from a fresh clone on 2 shared cores: 27 min of setup (20 of them compiling llama.cpp) and 25 min of
# tests; a 3.1 GB venv. pip keeps the llama-cpp-python wheel it built, so a second setup takes minutes.
test: test-plan install browser
	$(BIN)/python -m ruff check .
	$(BIN)/python -m ruff format --check .
	$(BIN)/python -m mypy
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then skip=; else \
		skip="chromium and chromedriver are not installed, and make test cannot install them without root (run make browser as root)"; \
		echo "make test: the report's browser tests will be skipped: $$skip"; fi; \
	echo "$(BIN)/python -m pytest -q -n 2 --dist loadfile tests"; \
	NLGEVAL_BROWSER_SKIP="$$skip" $(BIN)/python -m pytest -q -n 2 --dist loadfile tests

test-plan:
	@if [ ! -f $(STAMP) ]; then \
		echo "make test: first sets up $(VENV): torch 2.13.0 (CPU build), the runtime, training and plugin packages with"; \
		echo "  their development extras, Ray, DSPy, Selenium, and llama-cpp-python, which PyPI has as source only, so pip"; \
		echo "  compiles llama.cpp. From a fresh clone on 2 cores: about 27 min of setup (20 of them the compile), a 3.1 GB"; \
		echo "  venv; then about 25 min of checks and tests. As root it also installs Debian's chromium, chromium-driver"; \
		echo "  and wordnet-base with apt-get."; \
	else echo "make test: $(VENV) is set up; ruff, mypy and the tests take about 25 min on 2 cores"; fi

# The demo needs the runtime and the plugin only (with the metric bank's light extra for the induced-metric
# example): no torch, Ray, DSPy or llama.cpp build. A fresh clone's `make demo`: 32-40 s of setup and 10-12 s of
# tests on 2 shared cores, packages from a nearby index (README).
DEMO_STAMP := $(VENV)/.demo-installed
$(DEMO_STAMP): $(BIN)/python pyproject.toml runtime/pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(QUIET_EDITABLE) $(BIN)/python -m pip install --quiet -e ./runtime -e ".[metrics]"
	touch $@

demo: $(DEMO_STAMP)
	mkdir -p $(REPORTS)
	$(BIN)/python -m pytest -q examples -p no:cacheprovider \
		--nlgeval-json $(REPORTS)/demo-results.json --nlgeval-report $(REPORTS)/demo-report.html
	@echo "report: $(REPORTS)/demo-report.html"

# System packages the tests use (Debian): headless Chromium and its driver for the HTML report's browser tests,
# WordNet 3.0 for METEOR. Installed with apt-get only as root; otherwise those tests are skipped, naming why.
browser:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] && [ -d /usr/share/wordnet ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "make browser: installing chromium, chromium-driver and wordnet-base with apt-get (about 120 Debian packages)"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver wordnet-base; \
	else \
		echo "make browser: chromium, chromium-driver or wordnet-base is missing and installing them needs root and apt-get;"; \
		echo "  the report's browser tests and METEOR's WordNet test will be skipped"; \
	fi

bench: install
	$(BIN)/python benchmarks/scoring.py
	$(BIN)/python benchmarks/mixed_lengths.py
	$(BIN)/python benchmarks/plugin.py
	$(BIN)/python benchmarks/evaluator_overhead.py
	$(BIN)/python benchmarks/trajectory.py
	$(BIN)/python benchmarks/pseudo_data.py --data $(NLGEVAL_DATA)

# Rebuild the embedded default model of the runtime from the shared data kit: intermediate tasks, then the
# pseudo data of the eight dimensions, export, held-out evaluation, model card (data: docs/data.md). Every phase is bounded by
# its number of examples (steps), so the same seed gives the same model; about 75 min on 2 CPU cores.
NLGEVAL_DATA ?= $(CURDIR)/data-kit  # the public data kit, docs/data.md
NLGEVAL_RUNS ?= $(CURDIR)/runs
export NLGEVAL_DATA NLGEVAL_RUNS
EMBEDDED := runtime/nlgeval_runtime/embedded
SUMMEVAL_DEV ?= $(NLGEVAL_DATA)/human/summeval_dev.jsonl.gz
# The claim-support head: the folder's own graph, which answers the fact dimensions (consistency, rag faithfulness
# and context recall). all-MiniLM-L6-v2 + a Yes/No head trained on human-labelled entailment pairs (MultiNLI,
# FEVER-NLI, SNLI), the targeted sets of evidence that are no near copy of their claim (contrastive and
# multi-sentence evidence, dialogue replies against their knowledge, rule-made two-sentence spans) and
# pseudo-labelled consistency claims, held out by premise across every set of the kit (training/configs/
# embedded-claim.toml); every held-out set and ANLI dev measure it (benchmarks/claim_support.py).
CLAIM_SETS = docnli_fever vitaminc begin faithdial_audit q2_dialogue dialfact_sample cad_snli breaking_nli scone med \
	negation_nli syntactic_aug
CONTRAST := $(NLGEVAL_RUNS)/claim-contrast
CONTRAST_SOURCES = $(foreach s,$(CLAIM_SETS),--source $(s):binary=$(NLGEVAL_DATA)/nli/$(s).jsonl.gz \
		--held-out-file $(s):binary=$(NLGEVAL_DATA)/nli/$(s)_heldout.jsonl.gz) \
	--source mnli:binary=$(NLGEVAL_DATA)/nli/mnli_binary.jsonl.gz \
	--source fever:binary=$(NLGEVAL_DATA)/nli/fever_nli_binary.jsonl.gz \
	--source snli:snli=$(NLGEVAL_DATA)/nli_snli.jsonl.gz --hold-out-from mnli fever \
	--passages article=$(NLGEVAL_DATA)/cnndm.jsonl.gz
embedded-claim: install
	$(BIN)/nlgeval-train claim-data $(CONTRAST_SOURCES) \
		--generate swap,negation,quantity,state,span --generate-per-kind 4000 \
		--out $(NLGEVAL_RUNS)/claim/human.jsonl.gz --held-out-out $(NLGEVAL_RUNS)/claim/held_out.jsonl.gz
	$(BIN)/nlgeval-train pseudo --config training/configs/embedded-claim.toml
	$(BIN)/nlgeval-train train --config training/configs/embedded-claim.toml
	rm -rf $(NLGEVAL_RUNS)/claim/export
	$(BIN)/nlgeval-train export $(NLGEVAL_RUNS)/claim/run/final $(NLGEVAL_RUNS)/claim/export --int8 --no-fp32
	$(BIN)/nlgeval-train swap-graph $(EMBEDDED) $(NLGEVAL_RUNS)/claim/export \
		--training $(NLGEVAL_RUNS)/claim/run/final/training.json
	$(BIN)/python benchmarks/claim_support.py --data $(NLGEVAL_DATA) --no-dimension
	$(BIN)/python benchmarks/facts_dev.py --data $(NLGEVAL_DATA)/human

# A contrast-trained claim-support head, measured and not shipped (docs/validity.md, "A head trained for word
# order and contrast"): four layers of all-MiniLM-L6-v2, two phases (training/configs/claim-contrast.toml, 7,980
# steps, 45 min; claim-contrast-2.toml, word order, 4,152 steps, 25 min) on every human-labelled entailment set
# of the kit, twelve targeted sets and rule-made pairs; exported to $(NLGEVAL_RUNS)/claim-contrast/folder, a
# copy of the embedded folder with this head as its graph (`--model` of any benchmark reads it).
claim-contrast: install
	$(BIN)/nlgeval-train claim-data $(CONTRAST_SOURCES) \
		--generate swap,negation,quantity,state,span --generate-per-kind 4000 \
		--out $(CONTRAST)/human.jsonl.gz --held-out-out $(CONTRAST)/held_out.jsonl.gz
	$(BIN)/nlgeval-train pseudo --config training/configs/claim-contrast.toml
	$(BIN)/nlgeval-train train --config training/configs/claim-contrast.toml
	# second phase: word order; the first phase's held-out pairs stay out
	$(BIN)/nlgeval-train claim-data $(CONTRAST_SOURCES) \
		--held-out-file first:binary=$(CONTRAST)/held_out.jsonl.gz \
		--generate swap,quantity,negation,state --generate-per-kind 60000 \
		--out $(CONTRAST)/order.jsonl.gz --held-out-out $(CONTRAST)/order_held_out.jsonl.gz
	$(BIN)/nlgeval-train train --config training/configs/claim-contrast-2.toml
	rm -rf $(CONTRAST)/export $(CONTRAST)/folder
	$(BIN)/nlgeval-train export $(CONTRAST)/run2/final $(CONTRAST)/export --int8 --no-fp32
	cp -r $(EMBEDDED) $(CONTRAST)/folder
	$(BIN)/nlgeval-train swap-graph $(CONTRAST)/folder $(CONTRAST)/export --training $(CONTRAST)/run2/final/training.json
	$(BIN)/python benchmarks/claim_support.py --data $(NLGEVAL_DATA) --model $(CONTRAST)/folder
	$(BIN)/python benchmarks/facts_dev.py --data $(NLGEVAL_DATA)/human --model $(CONTRAST)/folder

# A six-layer head that reads the claim segment beside the whole input (pooling = "claim"), measured and not
# shipped (docs/validity.md, "A six-layer head that reads the claim"): one pass over claim-contrast's first-phase
# data with a sixth of pseudo consistency windows, 3,312 steps, 43 min on 2 cores.
claim-order: install
	@if [ ! -f $(CONTRAST)/human.jsonl.gz ] || [ ! -f $(CONTRAST)/pseudo.jsonl.gz ]; then \
		$(BIN)/nlgeval-train claim-data $(CONTRAST_SOURCES) \
			--generate swap,negation,quantity,state,span --generate-per-kind 4000 \
			--out $(CONTRAST)/human.jsonl.gz --held-out-out $(CONTRAST)/held_out.jsonl.gz && \
		$(BIN)/nlgeval-train pseudo --config training/configs/claim-contrast.toml; fi
	$(BIN)/nlgeval-train train --config training/configs/claim-order.toml
	rm -rf $(NLGEVAL_RUNS)/claim-order/export $(NLGEVAL_RUNS)/claim-order/folder
	$(BIN)/nlgeval-train export $(NLGEVAL_RUNS)/claim-order/run/final $(NLGEVAL_RUNS)/claim-order/export --int8 --no-fp32
	cp -r $(EMBEDDED) $(NLGEVAL_RUNS)/claim-order/folder
	$(BIN)/nlgeval-train swap-graph $(NLGEVAL_RUNS)/claim-order/folder $(NLGEVAL_RUNS)/claim-order/export \
		--training $(NLGEVAL_RUNS)/claim-order/run/final/training.json
	$(BIN)/python benchmarks/claim_support.py --data $(NLGEVAL_DATA) --model $(NLGEVAL_RUNS)/claim-order/folder --no-dimension
	$(BIN)/python benchmarks/facts_dev.py --data $(NLGEVAL_DATA)/human --model $(NLGEVAL_RUNS)/claim-order/folder

embedded-model: install embedded-claim
	# The text model: the questions about short texts (fluency family, coherence of the summary alone,
	# relevance, dialogue coherence), served from the sub-folder text/ as the declaration says.
	$(BIN)/nlgeval-train pseudo --config training/configs/embedded-text.toml
	$(BIN)/nlgeval-train train --config training/configs/embedded-text.toml
	rm -rf $(NLGEVAL_RUNS)/embedded-text/export $(EMBEDDED)/text
	$(BIN)/nlgeval-train export $(NLGEVAL_RUNS)/embedded-text/run/final $(NLGEVAL_RUNS)/embedded-text/export --int8 --no-fp32
	mkdir -p $(EMBEDDED)/text
	cp $(NLGEVAL_RUNS)/embedded-text/export/model.int8.onnx $(NLGEVAL_RUNS)/embedded-text/export/tokenizer.json \
		$(NLGEVAL_RUNS)/embedded-text/export/nlgeval.json $(EMBEDDED)/text/
	# The sentence encoder of the rag relevances (all-MiniLM-L6-v2 as published, mean-pooled and normalised).
	rm -rf $(EMBEDDED)/embed
	$(BIN)/python -c "from nlgeval_training.export_embedding import export_sentence_encoder as e, minilm_folder as m; e(m(), '$(EMBEDDED)/embed')"
	$(BIN)/nlgeval-train declare $(EMBEDDED) training/configs/embedded-dimensions.json
	# Fitted on pseudo-labelled pairs, never on human scores: the relevances' cosine calibration (BoolQ
	# questions) and the fact dimensions' combination of head, lexical support and explicit checks (CNN/DM).
	$(BIN)/nlgeval-train calibrate-relevance $(EMBEDDED) --data $(NLGEVAL_DATA)/boolqa.jsonl.gz \
		--declaration training/configs/embedded-dimensions.json
	$(BIN)/nlgeval fact-checks $(EMBEDDED) --data $(NLGEVAL_DATA)/cnndm.jsonl.gz \
		--antonyms $(NLGEVAL_DATA)/antonyms_wordnet.jsonl.gz --articles 60 \
		--declaration training/configs/embedded-dimensions.json
	$(BIN)/nlgeval-train evaluate $(EMBEDDED)/text --data $(NLGEVAL_RUNS)/embedded-text/pseudo.jsonl.gz \
		--per-dimension 200 --json $(NLGEVAL_RUNS)/embedded-text/evaluation.json
	$(BIN)/nlgeval probe $(EMBEDDED) --json $(NLGEVAL_RUNS)/embedded/probe.json
	$(BIN)/nlgeval-train evaluate $(EMBEDDED) --data $(NLGEVAL_RUNS)/claim/pseudo.jsonl.gz \
		--per-dimension 200 --json $(NLGEVAL_RUNS)/embedded/evaluation.json
	$(MAKE) --no-print-directory -s meta-eval > $(NLGEVAL_RUNS)/embedded/human.md
	$(BIN)/nlgeval-train card $(EMBEDDED) --title "nlgeval embedded default evaluator" \
		--human $(NLGEVAL_RUNS)/embedded/human.md --human-command "make meta-eval" \
		--probe $(NLGEVAL_RUNS)/embedded/probe.json --probe-command "nlgeval probe default" \
		--text-evaluation $(NLGEVAL_RUNS)/embedded-text/evaluation.json \
		--evaluation $(NLGEVAL_RUNS)/embedded/evaluation.json \
		--training $(NLGEVAL_RUNS)/claim/run/final/training.json \
		--pseudo-stats $(NLGEVAL_RUNS)/claim/pseudo.jsonl.gz.stats.json \
		--command "nlgeval-train evaluate runtime/nlgeval_runtime/embedded --data \$$NLGEVAL_RUNS/claim/pseudo.jsonl.gz --per-dimension 200"

# Agreement of the default evaluator with human ratings on the development splits, with 95% bootstrap
# intervals: SummEval at summary level (ROUGE-2 over all references and the embedding cosine beside it),
# QAGS CNN/DM and XSum at sample level (ROUGE-2 against the article beside it).
QAGS_CNNDM_DEV ?= $(NLGEVAL_DATA)/human/qags_cnndm_dev.jsonl.gz
QAGS_XSUM_DEV ?= $(NLGEVAL_DATA)/human/qags_xsum_dev.jsonl.gz
META_MODEL ?= default
meta-eval: install
	$(BIN)/nlgeval meta-eval $(SUMMEVAL_DEV) --model $(META_MODEL) --source-windows auto \
		--metric rouge2:multi_ref=mean --metric embedding_cosine:against=input --wide --format markdown
	@echo
	$(BIN)/nlgeval meta-eval $(QAGS_CNNDM_DEV) --model $(META_MODEL) --source-windows auto --level sample \
		--metric rouge2 --metric embedding_cosine:against=input --format markdown
	@echo
	$(BIN)/nlgeval meta-eval $(QAGS_XSUM_DEV) --model $(META_MODEL) --source-windows auto --level sample \
		--metric rouge2 --metric embedding_cosine:against=input --format markdown

# Liveness of the default evaluator: the packaged probes, then the same probes built from development text.
TOPICALCHAT ?= $(NLGEVAL_DATA)/topicalchat.jsonl.gz
probe: install
	$(BIN)/nlgeval probe $(META_MODEL)
	$(BIN)/python benchmarks/liveness_dev.py --summeval $(SUMMEVAL_DEV) --topicalchat $(TOPICALCHAT) --model $(META_MODEL)

clean:
	rm -rf $(VENV) $(REPORTS) .pytest_cache

# The development table of the fact dimensions (docs/validity.md): consistency on SummEval, QAGS-CNN and
# QAGS-XSum dev against ROUGE-2 and unigram precision, with intervals, and the realistic pairs.
facts-dev: install
	$(BIN)/python benchmarks/facts_dev.py --data $(NLGEVAL_DATA)/human

# The development table of the summarization and data-to-text dimensions (docs/validity.md): SummEval dev
# (summary level), SFRES and SFHOT dev beside ROUGE-2, METEOR, BLEU and unigram precision, with intervals.
dev-table: install
	$(BIN)/python benchmarks/dev_table.py --data $(NLGEVAL_DATA)/human

# Wheels of the two distributions a project installs (`pip install dist/*.whl`, see the README).
wheels: $(BIN)/python
	$(BIN)/python -m pip wheel --quiet --no-deps -w dist ./runtime .
