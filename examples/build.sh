#!/usr/bin/env bash
# Builds itersnap's published artifacts into a throwaway local repository, then builds and tests the example
# project against them. Extra arguments go to the example's build (e.g. -Dcustomers.sequenceBy=loaded_at).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(mktemp -d)
trap 'rm -rf "$repo"' EXIT
mvn -B -q install -Dmaven.test.skip=true -Dmaven.repo.local="$repo" -pl bom,testing -am
mvn -B -f examples/customers-model/pom.xml verify -Dmaven.repo.local="$repo" "$@"
