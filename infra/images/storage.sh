# Sourced by base.sh, build.sh and smoke.sh: the containers/storage driver podman and buildah use.
# overlay where the kernel lets this user mount it (fast: layers share files), else vfs (works
# anywhere without privileges, but copies the whole filesystem for every layer). SVC_STORAGE_DRIVER
# overrides; every script must use the same one.
# Use the same flags by hand: podman $(bash -c 'source infra/images/storage.sh; echo "${STORAGE[@]}"') images
if [ -z "${SVC_STORAGE_DRIVER:-}" ]; then
  SVC_STORAGE_DRIVER=vfs
  if [ "$(id -u)" = 0 ] && grep -qw overlay /proc/filesystems; then
    probe=$(mktemp -d)
    mkdir -p "$probe/l" "$probe/u" "$probe/w" "$probe/m"
    if mount -t overlay overlay -o "lowerdir=$probe/l,upperdir=$probe/u,workdir=$probe/w" "$probe/m" 2>/dev/null; then
      umount "$probe/m"
      SVC_STORAGE_DRIVER=overlay
    fi
    rm -rf "$probe"
  fi
fi
export SVC_STORAGE_DRIVER
# A store of the project's own (SVC_IMAGE_STORE): the machine's default store may already be
# set up with another driver, and these images stay apart from anything else on the machine.
SVC_IMAGE_STORE=${SVC_IMAGE_STORE:-/var/lib/containers/svc-$SVC_STORAGE_DRIVER}
export SVC_IMAGE_STORE
STORAGE=(--storage-driver "$SVC_STORAGE_DRIVER" --root "$SVC_IMAGE_STORE/root" --runroot "$SVC_IMAGE_STORE/run")
CONTAINERS_CONF=${CONTAINERS_CONF:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/containers.conf}
export CONTAINERS_CONF
