#!/usr/bin/env bash
# Builds every image without a Docker daemon: buildah with chroot isolation on overlay storage, or vfs where overlay cannot be mounted (no
# privileges beyond what a CI container has), from infra/Dockerfile and infra/agent/Dockerfile,
# on the base image infra/images/base.sh makes from Debian packages (no registry is reachable
# in CI). Where a registry is reachable, SVC_BASE_IMAGE=node:20-bookworm-slim skips base.sh.
#
#   bash infra/images/build.sh [target ...]     default: every target
#
# Images: localhost/svc-<target>:local (svc-svc is the `svc` command / all-in-one), and
# localhost/svc-agent:v2ray (the agent with the test engine; the Xray target downloads Xray
# from GitHub and is built only when asked: `bash infra/images/build.sh agent`).
# Stages shared by the targets are built once (--layers); the pnpm store is a build cache.
set -euo pipefail
cd "$(dirname "$0")/../.."

source infra/images/storage.sh
if [ -z "${SVC_BASE_IMAGE:-}" ] || [ "${SVC_BASE_IMAGE}" = localhost/svc-node-base:20-bookworm ]; then
  BASE=$(bash infra/images/base.sh | tail -1)
else
  BASE=$SVC_BASE_IMAGE
fi

targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=(admin-api portal-api worker control-plane svc agent-v2ray)

for target in "${targets[@]}"; do
  case "$target" in
    agent | agent-v2ray) file=infra/agent/Dockerfile; tag=localhost/svc-agent:$([ "$target" = agent ] && echo local || echo v2ray) ;;
    admin-api | portal-api | worker | control-plane | svc) file=infra/Dockerfile; tag=localhost/svc-$target:local ;;
    *) echo "build.sh: unknown target $target" >&2; exit 1 ;;
  esac
  start=$(date +%s)
  # --format docker keeps HEALTHCHECK (the OCI image format has no such field);
  # --network host: the build's package installs reach the registry as the host does.
  buildah "${STORAGE[@]}" bud --quiet --layers --isolation chroot --network host --format docker \
    --build-arg "BASE_IMAGE=$BASE" --target "$target" -f "$file" -t "$tag" . >/dev/null
  echo "built $tag in $(($(date +%s) - start)) s"
done
