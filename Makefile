# Flipbook — build, test, demo and benchmark. Works as root on a fresh Debian 12 machine: missing apt
# packages are installed first (nothing is fetched from anywhere but Debian's archive).

SHELL        := /bin/bash
SWIFT        ?= swift
BUILD_FLAGS  ?=
RELEASE_BIN  := .build/release/flipbook
DEBUG_BIN    := .build/debug/flipbook

# Build and run-time libraries, plus the tools the tests and benchmarks use as oracles and peers.
APT_PACKAGES := pkg-config libavformat-dev libavcodec-dev libswscale-dev libavutil-dev libgif-dev \
                libturbojpeg0-dev libjpeg62-turbo-dev libisal-dev ffmpeg python3 python3-pil python3-numpy libvips-tools hyperfine \
                ffmpegthumbnailer gifsicle time bc python3-venv chromium nginx-light wrk linux-perf \
                liblcms2-dev libwebp-dev libheif-dev libheif-examples libavif-bin libpng-dev \
                libdav1d-dev valgrind
# Ghostscript's ICC profiles: a second CMYK profile (SWOP) for the colour tests.
APT_PACKAGES += libgs-common
# `flipbook worker`'s tests and bench: a real PostgreSQL 15, started by the tests in a temporary folder.
APT_PACKAGES += postgresql-15
# The remote-source tests check with strace that a refused fetch never calls connect().
APT_PACKAGES += strace

# Python tools for tests and benchmarks (browser reference over CDP, SSIMULACRA2) live in a virtual
# environment: Debian's python3 refuses system-wide pip. It sees Debian's Pillow and numpy.
VENV         := .build/venv
PY           := $(VENV)/bin/python3
PIP_PACKAGES := websocket-client ssimulacra2 kubernetes-validate psycopg blurhash thumbhash-python opentelemetry-proto
# Object storage (issue 43): botocore is the independent SigV4 signer the signing tests compare against, and
# moto's server is the S3 and STS the storage tests talk to. An extra (`[server]`) counts as installed only
# when every package it pulls in is.
PIP_PACKAGES += boto3 moto[server]
# make bench-s3's peer: the shell loop a user writes around `aws s3 cp`.
PIP_PACKAGES += awscli

.PHONY: all deps venv build release test docs docs-check examples examples-check demo bench bench-stills bench-heif-decode samples clean serve bench-serve bench-gif bench-gif-frontier bench-start-cost bench-gif-large bench-ingest

all: build

# Installs only what is missing; `apt-get update` runs once, and only if something must be installed.
deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

# Exits 0 when the PyPI requirement argv[1] is installed, extras and all (`moto[server]`).
export PIP_HAS := import importlib.metadata as m, re, sys; name, _, extra = sys.argv[1].partition("["); extra = extra.rstrip("]"); m.version(name); [m.version(re.match(r"[A-Za-z0-9._-]+", r).group(0)) for r in (m.requires(name) or []) if extra and f"extra == \"{extra}\"" in r]
# Creates the venv and installs only the PyPI packages it lacks.
venv: deps
	@[ -x $(PY) ] || /usr/bin/python3 -m venv --system-site-packages $(VENV)
	@set -f; for p in $(PIP_PACKAGES); do $(PY) -c "$$PIP_HAS" "$$p" 2>/dev/null || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "pip installing:$$missing"; $(PY) -m pip install -q $$missing; fi

build: deps
	$(SWIFT) build $(BUILD_FLAGS)

# Static Swift runtime: fewer shared objects to load, which matters for one process per image. Function
# sections (every module, the dependencies' too) let lld put the code the one-shot commands run together
# at the start of .text (Package.swift, Sources/flipbook/startup.order): 1080p poster peak RSS 51 -> 48 MB.
# SwiftPM does not recompile when only -Xswiftc flags change, so a release folder built with other flags
# is removed first (the stamp records them).
RELEASE_FLAGS := -c release --static-swift-stdlib -Xswiftc -Xfrontend -Xswiftc -function-sections $(BUILD_FLAGS)
release: deps
	@stamp=.build/release-flags; if [ -d .build/release ] && [ "$$(cat $$stamp 2>/dev/null)" != "$(RELEASE_FLAGS)" ]; then \
	  echo "release flags changed: rebuilding $$(readlink -f .build/release)"; rm -rf "$$(readlink -f .build/release)"; fi; \
	mkdir -p .build && echo "$(RELEASE_FLAGS)" > $$stamp; \
	if [ Sources/flipbook/startup.order -nt $(RELEASE_BIN) ]; then rm -f $(RELEASE_BIN); fi  # SwiftPM does not track it
	$(SWIFT) build $(RELEASE_FLAGS)

# Every bench target depends on `release` and says so first: its figures are for that build.
BUILT_BY_RELEASE = @echo "== benchmark of $(RELEASE_BIN), built by make release ($(SWIFT) build $(RELEASE_FLAGS))"

# Swift Testing runs the suites; XCTest's half of `swift test` also prints "Executed 0 tests", so the
# last line restates Swift Testing's own per-test outcomes plainly, skipped tests apart from passed ones.
test: venv docs-check examples-check
	$(SWIFT) build --build-tests $(BUILD_FLAGS)
	@mkdir -p .build
	@set -o pipefail; FLIPBOOK_PYTHON=$(CURDIR)/$(PY) $(SWIFT) test --skip-build $(BUILD_FLAGS) 2>&1 | tee .build/test.log; \
	  status=$$?; scripts/test-summary.sh .build/test.log && exit $$status

# The DocC catalogs of Flipbook and FlipbookService (swift-docc-plugin) as a static site in .build/docs/<target>;
# warnings are errors, so a broken symbol link or article fails the build. `make test` checks the same (docs-check).
DOCC_TARGETS := Flipbook FlipbookCore FlipbookCodecs FlipbookService
docs: deps
	@mkdir -p .build/docs; for t in $(DOCC_TARGETS); do \
	  lower=$$(echo $$t | tr A-Z a-z); \
	  $(SWIFT) package --allow-writing-to-directory .build/docs generate-documentation --target $$t \
	    --warnings-as-errors --transform-for-static-hosting --hosting-base-path $$lower \
	    --output-path .build/docs/$$lower || exit 1; \
	done

# What `make test` checks of the DocC catalogs: the same four with warnings as errors, in one plugin run, without
# the static-hosting layout (measured no faster than four runs: the FlipbookService build dominates).
docs-check: deps
	$(SWIFT) package --allow-writing-to-directory .build/docs-check generate-documentation \
	  $(foreach t,$(DOCC_TARGETS),--target $(t)) --warnings-as-errors --output-path .build/docs-check

# The two example packages (Examples/), built as a user's would be: Flipbook by path, public API only. They
# share one scratch folder, so Flipbook's own targets compile once for both; the thumbnailer runs on samples/.
examples: examples-check
	$(SWIFT) build --package-path Examples/derivative-server --scratch-path .build-examples $(BUILD_FLAGS)

# What `make test` checks of the examples. The thumbnailer builds and runs as a package of its own (Flipbook's
# product by path, a minute: Flipbook's targets only). The server example's dependencies are NIO, Hummingbird and
# the rest, which a second root compiles again (five minutes cold), so its manifest is only loaded against
# Flipbook's products here and its source compiles as this package's `derivative-server-example` target
# (`packageAccess: false`: public API only) in the test build.
examples-check: deps
	$(SWIFT) build --package-path Examples/thumbnail-folder --scratch-path .build-examples $(BUILD_FLAGS)
	.build-examples/debug/thumbnail-folder samples .build-examples/thumbs
	$(SWIFT) package --package-path Examples/derivative-server --scratch-path .build-examples show-dependencies >/dev/null

# Remakes samples/ from scripts/make-samples.sh (committed with its output).
samples: deps
	scripts/make-samples.sh samples

demo: release
	@rm -rf out/demo && mkdir -p out/demo
	@echo "== probe"
	@$(RELEASE_BIN) probe samples/* || true
	@echo "== thumbnails of every still in samples/ (256 px, inside) -> out/demo/"
	@stills=$$(for f in samples/*; do $(RELEASE_BIN) probe --json "$$f" 2>/dev/null | grep -Eq '"type":"(jpeg|png|webp|bmp|tiff)"' && echo "$$f"; done); \
	  $(RELEASE_BIN) thumb $$stills -o out/demo/thumbs --size 256 && \
	  for f in out/demo/thumbs/*; do $(RELEASE_BIN) probe "$$f"; done
	@echo "== GIFs in samples/ -> looping silent MP4 in out/demo/video/"
	@$(RELEASE_BIN) convert samples -o out/demo/video --keep-smaller --report out/demo/convert.jsonl
	@/usr/bin/python3 scripts/savings.py out/demo/convert.jsonl
	@echo "== frames of the first sample GIF -> out/demo/frames/"
	@$(RELEASE_BIN) frames samples/testsrc-160x120-2s.gif -o out/demo/frames --every 5
	@echo "== poster, preview and storyboard of the sample video -> out/demo/"
	@$(RELEASE_BIN) poster samples/testsrc2-480x270-4s.mp4 -o out/demo/poster.jpg --stats
	@$(RELEASE_BIN) preview samples/testsrc2-480x270-4s.mp4 -o out/demo/preview.mp4 --segments 2 --size 240
	@$(RELEASE_BIN) preview samples/testsrc2-480x270-4s.mp4 -o out/demo/preview.webp --segments 2 --size 240
	@$(RELEASE_BIN) preview samples/testsrc2-480x270-4s.mp4 -o out/demo/preview.gif --segments 2 --size 240
	@$(RELEASE_BIN) storyboard samples/testsrc2-480x270-4s.mp4 -o out/demo/storyboard --interval 1s
	@echo "== ingestion: every sample's metadata, ThumbHash, BlurHash and default-recipe derivatives -> out/demo/ingest/"
	@$(RELEASE_BIN) ingest samples -o out/demo/ingest --manifest out/demo/ingest.jsonl && \
	  echo "$$(wc -l < out/demo/ingest.jsonl) results in out/demo/ingest.jsonl, $$(find out/demo/ingest -type f ! -name 'result.*' | wc -l) derivatives"

bench: release venv
	$(BUILT_BY_RELEASE)
	bench/run.sh

# Only the still-colour section of the benchmark (AVIF/HEIC, CMYK/XYB JPEG, huge WebP/PNG vs vipsthumbnail).
bench-stills: release
	$(BUILT_BY_RELEASE)
	scripts/make-still-bench.sh bench/work/stills >/dev/null
	/usr/bin/python3 bench/still_colour.py

# libheif (what Flipbook links) against libavif (avifdec) decoding the bench AVIF alone: time and peak RSS;
# then what loading libheif on first use saves a JPEG or PNG thumbnail.
bench-heif-decode: release
	$(BUILT_BY_RELEASE)
	scripts/make-still-bench.sh bench/work/stills >/dev/null
	/usr/bin/python3 bench/heif_decode.py

# `flipbook serve` on samples/ (loopback, port 8080; Ctrl-C stops it gracefully).
serve: build
	$(DEBUG_BIN) serve samples --port $${PORT:-8080}

# flipbook serve vs nginx-light (wrk, Range on a cached MP4), memory with a 32 MB cache, cold derivatives.
bench-serve: release
	$(BUILT_BY_RELEASE)
	bench/serve.sh

# Posters of the posters bench's videos and a 1 GB one served by nginx on loopback: ours by URL (ranges through
# the fetch guard) and from the file against ffmpegthumbnailer -i URL; wall, and bytes nginx sent (issue 44).
.PHONY: bench-remote
bench-remote: release
	$(BUILT_BY_RELEASE)
	/usr/bin/python3 bench/remote.py $(CURDIR)/$(RELEASE_BIN)

# Object storage (issue 43), moto on loopback behind a counting proxy: posters' bytes fetched and wall against the
# local file; convert bucket to bucket against aws s3 cp + ffmpeg + aws s3 cp under xargs -P 2.
.PHONY: bench-s3
bench-s3: release venv
	$(BUILT_BY_RELEASE)
	$(PY) bench/s3.py $(CURDIR)/$(RELEASE_BIN)

# The ingestion stage on a throwaway PostgreSQL 15: queue cost per job against local ingest, the default
# recipe on a day of uploads against a shell loop of ffmpeg and vipsthumbnail (with RSS every 100 jobs), and
# how many claims and completions per second one PostgreSQL carries (bench/ingest_worker.py).
bench-ingest: release venv
	$(BUILT_BY_RELEASE)
	nice -n 10 $(PY) bench/ingest_worker.py $(CURDIR)/$(RELEASE_BIN)

# Peak RSS of `flipbook ingest` of a 12 MP PNG (and a 12 MP and a small JPEG) with the default recipe against
# `flipbook thumb` of its largest derivative alone (target <= 1.2x, issue 43); BASELINE=path/to/flipbook adds
# another build measured in the same rounds (before/after).
.PHONY: bench-ingest-memory
bench-ingest-memory: release
	$(BUILT_BY_RELEASE)
	/usr/bin/python3 bench/ingest_memory.py $(CURDIR)/$(RELEASE_BIN) $(BASELINE)

clean:
	rm -rf .build out bench/work

.PHONY: fuzz sanitize

# libFuzzer targets (Tests/Fuzz), -sanitize=fuzzer,address, in .build-fuzz; FUZZ_SECONDS per target
# (default 60). Not part of `make test` or CI. See Tests/Fuzz/README.md.
FUZZ_SECONDS ?= 60
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh

# The test suite under AddressSanitizer (with LeakSanitizer) in .build-asan, then the concurrent parts
# (parallel convert and thumb in a ThreadSanitizer build of the CLI, .build-tsan). Not part of CI.
sanitize: venv
	scripts/sanitize.sh

# GIF to MP4 only (the table in the README's GIF to MP4 section): Flipbook against ffmpeg's -tune animation
# recipe, scored against headless Chromium's rendering (needs the venv for websocket-client and ssimulacra2).
bench-gif: release venv
	$(BUILT_BY_RELEASE)
	$(PY) bench/gif2mp4.py $(CURDIR)/$(RELEASE_BIN)
# Bytes at equal quality per x264 preset (bench/gif_frontier.py): for each preset the highest crf that keeps the
# peer's mean SSIM, mean SSIMULACRA2 and every GIF within 0.01 SSIM, then one alternating timing pass.
# FRONTIER_ARGS adds options (e.g. --peer-presets, --presets fast,medium).
bench-gif-frontier: release venv
	$(BUILT_BY_RELEASE)
	$(PY) bench/gif_frontier.py $(CURDIR)/$(RELEASE_BIN) $(FRONTIER_ARGS)
# What one process costs before any pixel: CPU time and page faults of flipbook --help, a tiny GIF's conversion
# (ours and the peer's) and dlopen of libx264 alone against libavutil+libswscale+libavcodec(+libavformat).
bench-start-cost: release
	$(BUILT_BY_RELEASE)
	bench/start_cost.sh $(CURDIR)/$(RELEASE_BIN)
# Whether a faster x264 preset pays on GIFs larger than the bench set's: three synthetic ones, bytes, CPU and
# ffmpeg's SSIM per preset (LARGE_PRESETS, default medium fast faster).
LARGE_PRESETS ?= medium fast faster
bench-gif-large: release
	$(BUILT_BY_RELEASE)
	bench/gif_large_presets.sh $(CURDIR)/$(RELEASE_BIN) $(LARGE_PRESETS)
# Deployment recipes (deploy/): Kubernetes manifests against the Kubernetes schemas (kubernetes-validate,
# offline), the systemd unit with systemd-analyze verify, the nginx config with nginx -t. `make test` runs
# the same script through DeployRecipeTests.
.PHONY: check-deploy
check-deploy: venv
	FLIPBOOK_PYTHON=$(CURDIR)/$(PY) scripts/check-deploy.sh

# The gallery in a real browser (Debian's chromium, headless, over the DevTools protocol) against a real
# `flipbook serve` on a folder of 2,000 links; `make test` runs it through ServedGalleryTests.
.PHONY: test-gallery
test-gallery: venv build
	$(PY) Tests/browser/gallery_browser.py --flipbook $(DEBUG_BIN)

# Two `flipbook serve` replicas sharing one --disk-cache behind a generated nginx (as the current user, on
# loopback); `make test` runs it through ServedGalleryTests.
.PHONY: test-replicas
test-replicas: venv build
	$(PY) Tests/replicas/replicas.py --flipbook $(DEBUG_BIN) --replicas 2

# The browser scenario on the release build, three runs: time from navigation to the first playing preview,
# JS heap and DOM size (reported, not asserted).
.PHONY: bench-gallery
bench-gallery: venv release
	$(BUILT_BY_RELEASE)
	bench/gallery.sh $(RELEASE_BIN) $(PY)
