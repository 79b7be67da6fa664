#!/usr/bin/env bash
# A local stand-in for node:20-bookworm-slim, for machines that reach Debian's mirrors but no
# container registry (this project's CI): Debian bookworm (mmdebstrap, minbase + libstdc++,
# CA certificates, apt) with this machine's Node 20 (/usr/bin/node, npm and corepack, the
# nodesource build the CI machine runs) and the same `node` user (uid/gid 1000) as the
# official image, imported as $SVC_BASE_IMAGE (default localhost/svc-node-base:20-bookworm).
#
# The rootfs tarball is cached (SVC_IMAGE_CACHE, default /var/cache/svc-images) by the
# Debian snapshot date and the Node version: a second build imports it without mmdebstrap.
#
#   bash infra/images/base.sh            # prints the image name on its last line
set -euo pipefail

IMAGE=${SVC_BASE_IMAGE:-localhost/svc-node-base:20-bookworm}
CACHE=${SVC_IMAGE_CACHE:-/var/cache/svc-images}
source "$(dirname "$0")/storage.sh"
NODE_BIN=$(command -v node)
NODE_VERSION=$("$NODE_BIN" --version)
case "$NODE_VERSION" in v20.*) ;; *) echo "base.sh: node on PATH is $NODE_VERSION, the images need Node 20" >&2; exit 1 ;; esac
for tool in mmdebstrap podman; do
  command -v "$tool" >/dev/null || { echo "base.sh: $tool is missing (apt-get install mmdebstrap podman buildah)" >&2; exit 1; }
done

# The mirror this machine's apt uses (a snapshot date pins the package versions when present).
MIRROR=${SVC_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SNAPSHOT=$(grep -rhoE 'snapshot\.debian\.org/archive/debian/[0-9TZ]+' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | head -1 | sed 's#.*/##' || true)
mkdir -p "$CACHE"
# CA certificates this machine adds to Debian's (a TLS-inspecting proxy's, a private registry's)
# go into the base too: pnpm and apt inside the build reach the network through the same proxy.
EXTRA_CAS=$(ls /usr/local/share/ca-certificates/*.crt 2>/dev/null || true)
cas_hash=$(cat /dev/null $EXTRA_CAS | sha256sum | cut -c1-12)
tarball="$CACHE/rootfs-bookworm-${SNAPSHOT:-latest}-node-${NODE_VERSION}-ca-${cas_hash}.tar"

if [ ! -s "$tarball" ]; then
  nodefiles=$(mktemp)
  trap 'rm -f "$nodefiles" "$tarball.part"' EXIT
  # Node itself plus its bundled npm and corepack (corepack provides pnpm in the build stage).
  tar -C / -cf "$nodefiles" usr/bin/node usr/lib/node_modules/npm usr/lib/node_modules/corepack ${EXTRA_CAS//\/usr/usr}
  # The official image's layout: npm/npx/corepack on PATH, user node 1000:1000 with a home.
  mmdebstrap --quiet --format=tar --variant=minbase --include=libstdc++6,ca-certificates \
    --customize-hook="tar -C \"\$1\" -xf '$nodefiles'" \
    --customize-hook='ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/bin/npm"' \
    --customize-hook='ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/bin/npx"' \
    --customize-hook='ln -sf ../lib/node_modules/corepack/dist/corepack.js "$1/usr/bin/corepack"' \
    --customize-hook='chroot "$1" update-ca-certificates --fresh >/dev/null' \
    --customize-hook='chroot "$1" groupadd --gid 1000 node' \
    --customize-hook='chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node' \
    --customize-hook='rm -rf "$1"/usr/share/doc/* "$1"/usr/share/man/* "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/*' \
    bookworm "$tarball.part" "$MIRROR"
  mv "$tarball.part" "$tarball"
fi

podman "${STORAGE[@]}" import --quiet \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=${NODE_VERSION#v}" \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  --change 'CMD ["node"]' \
  "$tarball" "$IMAGE" >/dev/null
echo "$IMAGE"
