#!/usr/bin/env bash
# Static check of the Dockerfiles (no Docker engine in CI): the dependency layer of each must copy
# every workspace package.json and the pnpm patches, or `pnpm install --frozen-lockfile` in the
# image would miss a package or a patched dependency.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=0
for dockerfile in infra/Dockerfile infra/agent/Dockerfile; do
  for manifest in apps/*/package.json packages/*/package.json bench/package.json; do
    if ! grep -qE "^COPY ${manifest} $(dirname "$manifest")/\$" "$dockerfile"; then
      echo "$dockerfile does not copy ${manifest}" >&2
      missing=1
    fi
  done
  if [ -d patches ] && ! grep -qE '^COPY patches \./patches$' "$dockerfile"; then
    echo "$dockerfile does not copy patches/ before pnpm install" >&2
    missing=1
  fi
  [ "$missing" = 0 ] && echo "$dockerfile: copies every workspace manifest and patches/"
done
exit "$missing"
