#!/usr/bin/env bash
# make data: fetch the Debian packages the stand-in corpora and image sets come from (without
# installing them or their dependencies) and prepare everything under $ECPI_HOME/data.
# Idempotent: packages already downloaded and data already prepared are left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

packages=(dict-foldoc linux-doc-6.1 r-cran-janeaustenr sword-text-web r-cran-tidytext r-cran-tokenizers dataset-fashion-mnist)
debs="$ECPI_HOME/debs"
mkdir -p "$debs"

missing=()
for p in "${packages[@]}"; do
  compgen -G "$debs/${p}_*.deb" >/dev/null || missing+=("$p")
done
if ((${#missing[@]})); then
  # A fresh container has no package lists; apt-get download needs them.
  if ! compgen -G "/var/lib/apt/lists/*_Packages*" >/dev/null; then
    echo "apt-get update (no package lists yet)"
    apt-get update -qq
  fi
  echo "apt-get download ${missing[*]}"
  (cd "$debs" && apt-get download "${missing[@]}")
fi

# Prepare every corpus and offline image set with the ecpi command (the same code as `ecpi data prepare`);
# go run, not bin/ecpi, because `make data` does not depend on `make build` and bin/ecpi may be stale.
go run ./cmd/ecpi data prepare all
