#!/usr/bin/env bash
# Static check of infra/Dockerfile (no Docker engine in CI): its dependency layer must copy
# every workspace package.json and the pnpm patches, or `pnpm install --frozen-lockfile`
# in the image would miss a package or a patched dependency.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=0
for manifest in apps/*/package.json packages/*/package.json bench/package.json; do
  if ! grep -qE "^COPY ${manifest} $(dirname "$manifest")/\$" infra/Dockerfile; then
    echo "infra/Dockerfile does not copy ${manifest}" >&2
    missing=1
  fi
done
if [ -d patches ] && ! grep -qE '^COPY patches \./patches$' infra/Dockerfile; then
  echo "infra/Dockerfile does not copy patches/ before pnpm install" >&2
  missing=1
fi
[ "$missing" = 0 ] && echo "infra/Dockerfile: copies every workspace manifest and patches/"
exit "$missing"
