#!/usr/bin/env bash
# The bad-input harnesses (docs/reliability.md), run longer than in the suite: every proptest property
# of the fuzz_* test targets gets CASES cases (default 5000; the suite runs 256, or 96 for model
# loading and 128 for the Gomocup brain). Targets: the shard reader, model loading (config.json,
# safetensors, TorchScript), the TOML run config, rules classify JSON lines and move notation,
# the Gomocup brain's command stream.
#
#   bash scripts/fuzz.sh              # 5000 cases per property
#   CASES=100000 bash scripts/fuzz.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
export PROPTEST_CASES="${CASES:-5000}"
echo "fuzz: $PROPTEST_CASES cases per property" >&2
cargo test --release -p renju-selfplay --test fuzz_shard
cargo test --release -p renju-trainer --test fuzz_model
cargo test --release -p renju-zero --test fuzz_config
cargo test --release -p renju-rules --test fuzz_inputs
cargo test --release -p renju-arena --test fuzz_gomocup
