#!/bin/sh
# svc node installer: turns this Linux server into a node of the control plane that served it.
#
#   curl -fsSL <control plane>/agent/install.sh | sh -s -- --token T --ca-sha256 H
#
# The control plane fills in its own address, the agent release it serves and that release's
# SHA-256 when it serves this script (GET /agent/install.sh). The script
#   - downloads the one-file agent from the same control plane and refuses it unless its SHA-256
#     is the one written here;
#   - installs the engine: Xray from its release archive, checked against the SHA-256 pinned here
#     (or --engine-bin for an engine already on the server, e.g. Debian's v2ray with
#     --engine-api v2ray);
#   - creates the user svc-agent, the state directory /var/lib/svc-agent (0700), the systemd unit
#     svc-agent.service (that user; CAP_NET_ADMIN to end removed users' connections,
#     CAP_NET_BIND_SERVICE for ports below 1024; nothing else);
#   - enrolls with the one-time token and the pinned CA hash (arguments, never part of a URL);
#   - starts and enables the service, and prints what it did.
# Run again, it upgrades in place: the node's identity, applied state and usage journal stay, the
# engine keeps serving while the agent restarts. --uninstall removes all but the state directory;
# --purge removes that too. Needs: root, systemd, curl or wget, sha256sum, and Node.js 20 or newer
# (without one it installs Node.js from its release archive, checked against a pinned SHA-256).
set -eu

BASE_URL=@@BASE_URL@@
AGENT_VERSION=@@AGENT_VERSION@@
AGENT_FILE=@@AGENT_FILE@@
AGENT_SHA256=@@AGENT_SHA256@@
GRPC_ENDPOINT=@@GRPC_ENDPOINT@@

# Xray-core's release archives (https://github.com/XTLS/Xray-core/releases), pinned.
XRAY_VERSION=26.7.11
XRAY_SHA256_X64=aa11c3685c71da0ffc71e511db50404609e7e963bb914b048f59a6a00af8930e
XRAY_SHA256_ARM64=89cfe01674d7c9f6847b7dd9389537be9acb3b9dc3c6cb9fdeba87a3e4e57fc1
# Node.js for a server without Node.js 20+ (https://nodejs.org/dist/), pinned.
NODE_VERSION=20.19.5
NODE_SHA256_X64=315046739a513a70e03a4a55a8afda8cf979f30852e576075c340084e3f8ac0f
NODE_SHA256_ARM64=d462267863ae8ee556039ebdf559055a8ec562c633889ef1403f3adb449ba1dd
NODE_MAJOR_MIN=20
SERVICE=svc-agent
USER_NAME=svc-agent

usage() {
  cat <<EOF
usage: install.sh [options]

  --token T            one-time enrollment token (POST /api/v1/nodes/{id}/enroll-token);
                       needed on the first install only (a node already enrolled keeps its identity)
  --ca-sha256 H        SHA-256 of the control plane's CA (the same answer), pinned before anything is sent
  --server HOST:PORT   the agent gateway (default: $GRPC_ENDPOINT)
  --engine-bin PATH    use this engine instead of installing Xray $XRAY_VERSION
  --engine-api API     xray (default) or v2ray (Debian's v2ray 4.x: --engine-bin /usr/bin/v2ray --engine-api v2ray)
  --xray-archive-url URL --xray-sha256 H
                       install Xray from a mirror of its release archive (both, or neither)
  --reenroll           enroll again with --token, replacing this node's identity
  --no-start           install the agent, the engine and the unit, but neither enroll nor start
                       (a server image baked ahead; run the line with --token later to finish)
  --node PATH          the Node.js 20+ to run the agent with (default: node on PATH; without one,
                       Node.js $NODE_VERSION from nodejs.org, checked against its pinned SHA-256,
                       goes to /opt/svc-agent-node)
  --node-archive-url URL --node-sha256 H
                       that Node.js from a mirror of its linux tar.xz archive (both, or neither)
  --prefix DIR         install under DIR instead of / (tests, image builds)
  --uninstall          stop and remove the service, the agent and the engine this script installed;
                       the state directory (identity, applied state, usage journal) stays
  --purge              --uninstall, and the state directory too
  -h, --help           this text

Environment: SVC_SYSTEMCTL (default systemctl).
EOF
}

say() { printf 'svc-agent install: %s\n' "$*"; }
die() {
  printf 'svc-agent install: error: %s\n' "$*" >&2
  exit 1
}

token=''
ca_sha256=''
server=$GRPC_ENDPOINT
engine_bin=''
engine_api=''
xray_url=''
xray_sha256=''
node_url=''
node_sha256=''
reenroll=0
no_start=0
node_bin=''
prefix=''
action=install

need() { [ $# -ge 2 ] || die "$1 needs a value"; }
while [ $# -gt 0 ]; do
  case $1 in
  --token) need "$@"; token=$2; shift 2 ;;
  --token=*) token=${1#*=}; shift ;;
  --ca-sha256) need "$@"; ca_sha256=$2; shift 2 ;;
  --ca-sha256=*) ca_sha256=${1#*=}; shift ;;
  --server) need "$@"; server=$2; shift 2 ;;
  --server=*) server=${1#*=}; shift ;;
  --engine-bin) need "$@"; engine_bin=$2; shift 2 ;;
  --engine-bin=*) engine_bin=${1#*=}; shift ;;
  --engine-api) need "$@"; engine_api=$2; shift 2 ;;
  --engine-api=*) engine_api=${1#*=}; shift ;;
  --xray-archive-url) need "$@"; xray_url=$2; shift 2 ;;
  --xray-archive-url=*) xray_url=${1#*=}; shift ;;
  --xray-sha256) need "$@"; xray_sha256=$2; shift 2 ;;
  --xray-sha256=*) xray_sha256=${1#*=}; shift ;;
  --node) need "$@"; node_bin=$2; shift 2 ;;
  --node-archive-url) need "$@"; node_url=$2; shift 2 ;;
  --node-archive-url=*) node_url=${1#*=}; shift ;;
  --node-sha256) need "$@"; node_sha256=$2; shift 2 ;;
  --node-sha256=*) node_sha256=${1#*=}; shift ;;
  --node=*) node_bin=${1#*=}; shift ;;
  --prefix) need "$@"; prefix=$2; shift 2 ;;
  --prefix=*) prefix=${1#*=}; shift ;;
  --reenroll) reenroll=1; shift ;;
  --no-start) no_start=1; shift ;;
  --uninstall) action=uninstall; shift ;;
  --purge) action=purge; shift ;;
  -h | --help) usage; exit 0 ;;
  *) die "unknown option: $1 (--help lists them)" ;;
  esac
done

case $prefix in '' | /*) prefix=${prefix%/} ;; *) die "--prefix must be an absolute path" ;; esac
SYSTEMCTL=${SVC_SYSTEMCTL:-systemctl}
OPT_DIR=$prefix/opt/svc-agent
STATE_DIR=$prefix/var/lib/svc-agent
CONF_DIR=$prefix/etc/svc-agent
ENV_FILE=$CONF_DIR/agent.env
UNIT_FILE=$prefix/etc/systemd/system/$SERVICE.service
XRAY_BIN=$prefix/usr/local/bin/xray
XRAY_SHARE=$prefix/usr/local/share/xray
XRAY_MARK=$CONF_DIR/xray-installed
NODE_DIR=$prefix/opt/svc-agent-node
NODE_MARK=$CONF_DIR/node-installed

[ "$(uname -s)" = Linux ] || die "a node runs Linux (this is $(uname -s))"
[ "$(id -u)" = 0 ] || die "run as root (sudo sh -s -- ...): the script creates a user, a service and /opt/svc-agent"
command -v "$SYSTEMCTL" >/dev/null 2>&1 || die "$SYSTEMCTL not found: the agent runs as a systemd service (the container image infra/agent is the other way)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# The service's main process (the agent), or nothing.
main_pid() {
  pid=$("$SYSTEMCTL" show --property MainPID --value "$SERVICE.service" 2>/dev/null || true)
  case $pid in '' | 0 | *[!0-9]*) return 1 ;; *) printf '%s\n' "$pid" ;; esac
}

uninstall() {
  if "$SYSTEMCTL" is-active --quiet "$SERVICE.service" 2>/dev/null; then
    # Only the agent is signalled (KillMode=process): it stops the engine itself, after reading
    # its traffic counters into the journal.
    "$SYSTEMCTL" stop "$SERVICE.service"
    say "stopped $SERVICE.service (the agent stopped the engine)"
  fi
  "$SYSTEMCTL" disable "$SERVICE.service" >/dev/null 2>&1 || true
  rm -f "$UNIT_FILE"
  "$SYSTEMCTL" daemon-reload || true
  rm -rf "$OPT_DIR"
  if [ -f "$XRAY_MARK" ]; then
    rm -f "$XRAY_BIN"
    rm -rf "$XRAY_SHARE"
    say "removed Xray ($XRAY_BIN, $XRAY_SHARE)"
  fi
  if [ -f "$NODE_MARK" ]; then
    rm -rf "$NODE_DIR"
    say "removed the agent's Node.js ($NODE_DIR)"
  fi
  rm -rf "$CONF_DIR"
  say "removed $UNIT_FILE, $OPT_DIR, $CONF_DIR"
  if [ "$action" = purge ]; then
    rm -rf "$STATE_DIR"
    if [ -z "$prefix" ] && id -u "$USER_NAME" >/dev/null 2>&1; then
      userdel "$USER_NAME" 2>/dev/null || deluser "$USER_NAME" 2>/dev/null || true
    fi
    say "purged $STATE_DIR (this node's identity is gone: delete the node in the panel, or enroll it again)"
  else
    say "kept $STATE_DIR (identity, applied state, usage journal): install again to resume, --purge to remove it"
  fi
}

if [ "$action" != install ]; then
  uninstall
  exit 0
fi

# ---- checks before anything changes --------------------------------------------------------

case $AGENT_SHA256 in *[!0-9a-f]* | '') die "this script carries no agent checksum: fetch it again from the control plane" ;; esac
[ ${#AGENT_SHA256} -eq 64 ] || die "this script's agent checksum is not a SHA-256"
[ -n "$server" ] || die "--server HOST:PORT is required"
case $engine_api in '' | xray | v2ray) ;; *) die "--engine-api is xray or v2ray, not $engine_api" ;; esac
if [ -n "$xray_url" ] || [ -n "$xray_sha256" ]; then
  if [ -z "$xray_url" ] || [ -z "$xray_sha256" ]; then die "--xray-archive-url and --xray-sha256 go together"; fi
fi

if [ -n "$node_url" ] || [ -n "$node_sha256" ]; then
  if [ -z "$node_url" ] || [ -z "$node_sha256" ]; then die "--node-archive-url and --node-sha256 go together"; fi
fi
# The Node.js that runs the agent: --node, else node on PATH when it is 20 or newer, else (or
# when an archive is named) Node.js from its release archive into $NODE_DIR, below.
node_ok() { "$1" -e "process.exit(Number(process.versions.node.split('.')[0]) >= $NODE_MAJOR_MIN ? 0 : 1)" 2>/dev/null; }
private_node=0
if [ -n "$node_bin" ]; then
  [ -x "$node_bin" ] || die "--node $node_bin is not an executable file"
  case $node_bin in /*) ;; *) node_bin=$(cd "$(dirname "$node_bin")" && pwd)/$(basename "$node_bin") ;; esac
  node_ok "$node_bin" || die "$node_bin is Node.js $("$node_bin" --version), the agent needs $NODE_MAJOR_MIN or newer"
elif [ -n "$node_url" ]; then
  private_node=1
else
  node_bin=$(command -v node 2>/dev/null || true)
  if [ -z "$node_bin" ] || ! node_ok "$node_bin"; then private_node=1; fi
fi

if command -v curl >/dev/null 2>&1; then
  fetch() { curl -fsSL --retry 3 --connect-timeout 15 -o "$2" "$1"; }
elif command -v wget >/dev/null 2>&1; then
  fetch() { wget -q -T 30 -t 3 -O "$2" "$1"; }
else
  die "curl or wget is needed"
fi
if command -v sha256sum >/dev/null 2>&1; then
  sha256_of() { sha256sum "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null 2>&1; then
  sha256_of() { shasum -a 256 "$1" | cut -d' ' -f1; }
else
  die "sha256sum is needed (coreutils)"
fi
# fetch_verified WHAT URL FILE SHA256: the download, refused unless its SHA-256 is the pinned one.
fetch_verified() {
  fetch "$2" "$3" || die "could not download $2"
  got=$(sha256_of "$3")
  [ "$got" = "$4" ] || die "the $1 from $2 does not match its pinned SHA-256 (expected $4, got $got): refused, nothing was changed"
}

# Settings of an earlier install are kept unless given again.
previous() { if [ -f "$ENV_FILE" ]; then sed -n "s/^$1=//p" "$ENV_FILE" | head -n 1; fi; }
if [ -z "$engine_bin" ] && [ -z "$engine_api" ] && [ -f "$ENV_FILE" ] && [ ! -f "$XRAY_MARK" ]; then
  engine_bin=$(previous SVC_AGENT_ENGINE_BIN)
  engine_api=$(previous SVC_AGENT_ENGINE_API)
fi
[ -n "$engine_api" ] || engine_api=xray
if [ -n "$engine_bin" ]; then
  [ -x "$engine_bin" ] || die "--engine-bin $engine_bin is not an executable file"
fi

identity=$STATE_DIR/identity.json
enroll=0
if [ "$no_start" = 1 ]; then
  :
elif [ ! -f "$identity" ] || [ "$reenroll" = 1 ]; then
  [ -n "$token" ] || die "--token is required: this server is not enrolled yet (issue one in the panel: Nodes, the node, Enroll)"
  case $ca_sha256 in *[!0-9a-fA-F]* | '') die "--ca-sha256 (64 hex digits, the same answer as the token) is required" ;; esac
  enroll=1
fi

# ---- Node.js, when the server has no 20+ -----------------------------------------------------

if [ "$private_node" = 1 ]; then
  case $(uname -m) in
  x86_64 | amd64) node_arch=x64 node_pinned=$NODE_SHA256_X64 ;;
  aarch64 | arm64) node_arch=arm64 node_pinned=$NODE_SHA256_ARM64 ;;
  *) die "no Node.js $NODE_MAJOR_MIN+ here and none pinned for $(uname -m): install one and pass --node PATH" ;;
  esac
  [ -n "$node_url" ] || node_url=https://nodejs.org/dist/v$NODE_VERSION/node-v$NODE_VERSION-linux-$node_arch.tar.xz
  [ -n "$node_sha256" ] || node_sha256=$node_pinned
  if [ -x "$NODE_DIR/bin/node" ] && [ -f "$NODE_MARK" ] && [ "$(cat "$NODE_MARK")" = "$node_sha256" ]; then
    node_bin=$NODE_DIR/bin/node
    say "Node.js from the archive $node_sha256 is already installed at $NODE_DIR"
  else
    command -v xz >/dev/null 2>&1 || die "xz is needed to unpack Node.js (apt-get install xz-utils), or install Node.js $NODE_MAJOR_MIN+ and pass --node PATH"
    say "no Node.js $NODE_MAJOR_MIN+ to run the agent: downloading Node.js from $node_url"
    fetch_verified "Node.js archive" "$node_url" "$tmp/node.tar.xz" "$node_sha256"
    mkdir -p "$tmp/node"
    tar -xJf "$tmp/node.tar.xz" -C "$tmp/node" --strip-components=1
    node_ok "$tmp/node/bin/node" || die "the Node.js from $node_url does not run here, or is older than $NODE_MAJOR_MIN"
    node_bin=$tmp/node/bin/node
    node_fresh=1
  fi
fi

# ---- the agent: downloaded, verified, installed ---------------------------------------------

url=$BASE_URL/agent/$AGENT_VERSION/$AGENT_FILE
say "downloading svc-agent $AGENT_VERSION from $url"
fetch_verified agent "$url" "$tmp/$AGENT_FILE" "$AGENT_SHA256"
say "verified SHA-256 $AGENT_SHA256"
got_version=$("$node_bin" "$tmp/$AGENT_FILE" version) || die "the downloaded agent does not run under $node_bin"
[ "$got_version" = "$AGENT_VERSION" ] || die "the downloaded agent says it is $got_version, not $AGENT_VERSION"

# ---- the engine -----------------------------------------------------------------------------

if [ -z "$engine_bin" ]; then
  case $(uname -m) in
  x86_64 | amd64) archive=Xray-linux-64.zip pinned=$XRAY_SHA256_X64 ;;
  aarch64 | arm64) archive=Xray-linux-arm64-v8a.zip pinned=$XRAY_SHA256_ARM64 ;;
  *) die "no pinned Xray for $(uname -m): install an engine yourself and pass --engine-bin PATH" ;;
  esac
  [ -n "$xray_url" ] || xray_url=https://github.com/XTLS/Xray-core/releases/download/v$XRAY_VERSION/$archive
  [ -n "$xray_sha256" ] || xray_sha256=$pinned
  if [ -x "$XRAY_BIN" ] && [ -f "$XRAY_MARK" ] && [ "$(cat "$XRAY_MARK")" = "$xray_sha256" ]; then
    say "Xray from the archive $xray_sha256 is already installed at $XRAY_BIN"
  else
    command -v unzip >/dev/null 2>&1 || die "unzip is needed to install Xray (apt-get install unzip), or pass --engine-bin PATH"
    say "downloading Xray from $xray_url"
    fetch_verified "Xray archive" "$xray_url" "$tmp/xray.zip" "$xray_sha256"
    mkdir -p "$tmp/xray"
    unzip -q -o "$tmp/xray.zip" -d "$tmp/xray"
    [ -f "$tmp/xray/xray" ] || die "the Xray archive holds no xray binary"
    xray_fresh=1
  fi
  engine_bin=$XRAY_BIN
  engine_api=xray
fi

# ---- every download verified: from here on the server changes --------------------------------

if [ "${node_fresh:-0}" = 1 ]; then
  mkdir -p "$(dirname "$NODE_DIR")" "$CONF_DIR"
  rm -rf "$NODE_DIR.new"
  cp -R "$tmp/node" "$NODE_DIR.new"
  chown -R 0:0 "$NODE_DIR.new"
  rm -rf "$NODE_DIR"
  mv "$NODE_DIR.new" "$NODE_DIR"
  printf '%s\n' "$node_sha256" >"$NODE_MARK"
  node_bin=$NODE_DIR/bin/node
  say "installed Node.js $("$node_bin" --version) at $NODE_DIR (archive SHA-256 verified)"
fi
if [ "${xray_fresh:-0}" = 1 ]; then
  mkdir -p "$(dirname "$XRAY_BIN")" "$XRAY_SHARE" "$CONF_DIR"
  install -m 0755 "$tmp/xray/xray" "$XRAY_BIN.new" && mv -f "$XRAY_BIN.new" "$XRAY_BIN"
  for dat in geoip.dat geosite.dat; do
    if [ -f "$tmp/xray/$dat" ]; then install -m 0644 "$tmp/xray/$dat" "$XRAY_SHARE/$dat"; fi
  done
  printf '%s\n' "$xray_sha256" >"$XRAY_MARK"
  say "installed Xray $XRAY_VERSION at $XRAY_BIN (archive SHA-256 verified)"
fi

# ---- user, directories, files ---------------------------------------------------------------

if ! id -u "$USER_NAME" >/dev/null 2>&1; then
  nologin=$(command -v nologin 2>/dev/null || echo /usr/sbin/nologin)
  if command -v useradd >/dev/null 2>&1; then
    useradd --system --user-group --no-create-home --home-dir /var/lib/svc-agent --shell "$nologin" "$USER_NAME" || true
  else
    adduser -S -D -H -h /var/lib/svc-agent -s "$nologin" "$USER_NAME" || true
  fi
  # (Another run may have created it meanwhile.)
  id -u "$USER_NAME" >/dev/null 2>&1 || die "could not create the system user $USER_NAME"
  say "created the system user $USER_NAME"
fi
group=$(id -gn "$USER_NAME")

mkdir -p "$OPT_DIR" "$CONF_DIR" "$(dirname "$UNIT_FILE")"
mkdir -p "$STATE_DIR"
chown "$USER_NAME:$group" "$STATE_DIR"
chmod 0700 "$STATE_DIR"
# The agent replaces its own file when the panel asks it to upgrade: the directory is its own.
chown "$USER_NAME:$group" "$OPT_DIR"
chmod 0755 "$OPT_DIR"
install -m 0644 -o "$USER_NAME" -g "$group" "$tmp/$AGENT_FILE" "$OPT_DIR/$AGENT_FILE.new"
mv -f "$OPT_DIR/$AGENT_FILE.new" "$OPT_DIR/$AGENT_FILE"
printf '%s  %s\n' "$AGENT_SHA256" "$AGENT_FILE" >"$OPT_DIR/$AGENT_FILE.sha256"
# current.mjs names the release the service runs; replaced in one rename.
previous=$(readlink "$OPT_DIR/current.mjs" 2>/dev/null || true)
ln -s "$AGENT_FILE" "$OPT_DIR/.current.mjs.$$"
mv -f "$OPT_DIR/.current.mjs.$$" "$OPT_DIR/current.mjs"
chown -h "$USER_NAME:$group" "$OPT_DIR/current.mjs"
# Releases other than this one and the one it replaces go.
for f in "$OPT_DIR"/svc-agent-*.mjs; do
  [ -e "$f" ] || continue
  name=$(basename "$f")
  if [ "$name" != "$AGENT_FILE" ] && [ "$name" != "$previous" ]; then rm -f "$f" "$f.sha256"; fi
done

cat >"$ENV_FILE" <<EOF
# Written by install.sh (svc-agent $AGENT_VERSION); read by $SERVICE.service.
SVC_AGENT_STATE_DIR=$STATE_DIR
SVC_AGENT_RELEASE_DIR=$OPT_DIR
SVC_AGENT_ENGINE_BIN=$engine_bin
SVC_AGENT_ENGINE_API=$engine_api
XRAY_LOCATION_ASSET=$XRAY_SHARE
EOF
chmod 0644 "$ENV_FILE"

cat >"$UNIT_FILE" <<EOF
# Written by install.sh (svc-agent $AGENT_VERSION) from $BASE_URL; run it again to upgrade.
[Unit]
Description=svc node agent (engine supervisor and control-plane stream)
Wants=network-online.target
After=network-online.target
# Never given up on: an agent that exits is started again however often (an upgrade and its
# rollback are a few quick restarts), its backoff toward the control plane is its own.
StartLimitIntervalSec=0

[Service]
Type=simple
User=$USER_NAME
Group=$group
EnvironmentFile=$ENV_FILE
ExecStart=$node_bin $OPT_DIR/current.mjs run
Restart=always
RestartSec=2
# Only the agent is signalled on stop and on a crash: it stops the engine itself on a clean stop
# (after reading its traffic counters); after a crash or an upgrade the next agent adopts the
# engine that kept serving (users keep their connections, no counted byte is lost).
KillMode=process
TimeoutStopSec=30
# NET_ADMIN: end a removed user's open connections (ss -K); NET_BIND_SERVICE: ports below 1024.
AmbientCapabilities=CAP_NET_ADMIN CAP_NET_BIND_SERVICE
CapabilityBoundingSet=CAP_NET_ADMIN CAP_NET_BIND_SERVICE
NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes
ReadWritePaths=$STATE_DIR $OPT_DIR
LimitNOFILE=1048576

[Install]
WantedBy=multi-user.target
EOF
chmod 0644 "$UNIT_FILE"
say "wrote $UNIT_FILE (user $USER_NAME; engine $engine_bin, API $engine_api)"

if [ "$no_start" = 1 ]; then
  say "installed svc-agent $AGENT_VERSION without enrolling or starting it (--no-start): run the install command with --token and --ca-sha256 to finish"
  exit 0
fi

# ---- enrollment -----------------------------------------------------------------------------

as_agent() {
  if command -v runuser >/dev/null 2>&1; then
    runuser -u "$USER_NAME" -- "$@"
  else
    setpriv --reuid "$USER_NAME" --regid "$group" --init-groups -- "$@"
  fi
}
if [ "$enroll" = 1 ]; then
  force=''
  [ "$reenroll" = 1 ] && force=--force
  # The token is an argument of the agent, never part of a URL.
  as_agent env SVC_AGENT_STATE_DIR="$STATE_DIR" "$node_bin" "$OPT_DIR/current.mjs" enroll \
    --server "$server" --token "$token" --ca-sha256 "$ca_sha256" $force ||
    die "enrollment failed (see above); nothing runs yet: fix it and run the same command again"
  say "enrolled with $server"
else
  say "already enrolled: the identity in $STATE_DIR is kept (--reenroll --token T replaces it)"
fi

# ---- the service ----------------------------------------------------------------------------

"$SYSTEMCTL" daemon-reload
"$SYSTEMCTL" enable "$SERVICE.service" >/dev/null 2>&1 || "$SYSTEMCTL" enable "$SERVICE.service"
if pid=$(main_pid) && "$SYSTEMCTL" is-active --quiet "$SERVICE.service"; then
  # An upgrade in place: the running agent hands the engine over and exits (SIGUSR2); systemd
  # starts the new release, which adopts the engine. Users keep their connections.
  kill -USR2 "$pid"
  say "asked the running agent (pid $pid) to hand over to $AGENT_VERSION; the engine keeps serving"
  i=0
  while kill -0 "$pid" 2>/dev/null && [ $i -lt 60 ]; do
    sleep 0.5
    i=$((i + 1))
  done
else
  "$SYSTEMCTL" start "$SERVICE.service"
fi
i=0
until "$SYSTEMCTL" is-active --quiet "$SERVICE.service"; do
  i=$((i + 1))
  [ $i -lt 60 ] || die "$SERVICE.service did not start: journalctl -u $SERVICE"
  sleep 0.5
done
say "svc-agent $AGENT_VERSION runs as $SERVICE.service (enabled at boot); logs: journalctl -u $SERVICE -f"
say "the node shows online in the panel within seconds"
