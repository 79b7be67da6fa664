#!/usr/bin/env bash
# Static check of the Dockerfiles (CI does not build images by default: infra/images/build.sh does,
# docs/deploy.md): the dependency layer of each must copy every workspace package.json and the pnpm
# patches, or `pnpm install --frozen-lockfile` in the image would miss a package or a patched
# dependency; every deployable has a target that runs its precompiled bundle as a non-root user
# with a HEALTHCHECK, on the BASE_IMAGE argument (a local base where no registry is reachable).
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

# One target per deployable (the cli's is `svc`), each running dist/main.js with a HEALTHCHECK;
# the agent's runs its one file (dist-one/svc-agent-<version>.mjs, infra/bundle-app.mjs
# --self-contained) as /opt/svc-agent/current.mjs, with no node_modules (no `pnpm deploy`).
target_of() { case "$1" in cli) echo svc ;; agent) echo agent ;; *) echo "$1" ;; esac; }
stage() { awk -v t="$2" '$1 == "FROM" { inside = ($NF == t) } inside' "$1"; }
for dir in apps/*/; do
  app=$(basename "$dir")
  # Web apps are static files served by admin-api and svc (SVC_ADMIN_WEB_DIR), not deployables.
  [ -f "$dir/vite.config.ts" ] && continue
  file=infra/Dockerfile
  [ "$app" = agent ] && file=infra/agent/Dockerfile
  t=$(target_of "$app")
  body=$(stage "$file" "$t")
  if [ -z "$body" ]; then echo "$file has no target $t for apps/$app" >&2; missing=1; continue; fi
  if [ "$app" = agent ]; then body=$(stage "$file" agent-base; echo "$body"); fi
  grep -q '^HEALTHCHECK ' <<<"$body" || { echo "$file target $t has no HEALTHCHECK" >&2; missing=1; }
  if [ "$app" = agent ]; then
    grep -qxF 'ENTRYPOINT ["node", "/opt/svc-agent/current.mjs"]' <<<"$body" || { echo "$file target $t does not run /opt/svc-agent/current.mjs" >&2; missing=1; }
    grep -q -- '--self-contained' "apps/$app/package.json" || { echo "apps/$app does not build its one file (--self-contained)" >&2; missing=1; }
    if grep -qE '(pnpm|--filter).* deploy ' "$file"; then echo "$file: the agent image takes its one file, not pnpm deploy's node_modules" >&2; missing=1; fi
  else
    grep -qE '^(CMD|ENTRYPOINT) .*dist/main\.js' <<<"$body" || { echo "$file target $t does not run dist/main.js" >&2; missing=1; }
  fi
  grep -q '"build": "node ../../infra/bundle-app.mjs' "apps/$app/package.json" || { echo "apps/$app has no bundle build script" >&2; missing=1; }
done
grep -q '^USER node$' <(stage infra/Dockerfile runtime) || { echo "infra/Dockerfile: the runtime stage does not switch to USER node" >&2; missing=1; }
for dockerfile in infra/Dockerfile infra/agent/Dockerfile; do
  grep -q '^ARG BASE_IMAGE=node:20-bookworm-slim$' "$dockerfile" || { echo "$dockerfile: no ARG BASE_IMAGE=node:20-bookworm-slim" >&2; missing=1; }
  if grep -E '^FROM ' "$dockerfile" | grep -vqE '^FROM (\$\{BASE_IMAGE\}|[a-z-]+) AS '; then
    echo "$dockerfile: a FROM neither on BASE_IMAGE nor on an earlier stage" >&2; missing=1
  fi
done
[ "$missing" = 0 ] && echo "every deployable has an image target running its bundle with a HEALTHCHECK"
exit "$missing"
