#!/usr/bin/env bash
# Runs the split system from the images infra/images/build.sh made, with podman on the host's
# network, against a PostgreSQL and a Redis that already run (default: this machine's, database
# images_smoke created and dropped here, Redis database 7 under a prefix of its own), then:
#   - `svc migrate` and `svc admin create` from the svc image (one-shot containers);
#   - admin-api, portal-api, worker and two control-plane replicas, each with --read-only
#     (writable: a /data volume and /tmp), as uid 1000, until `podman healthcheck run` passes;
#   - admin API: sign in, create a node, list nodes, issue its enrollment token;
#   - portal: GET /sub/{unknown} is 404 application/problem+json; worker: /readyz;
#   - both gateway replicas complete a TLS handshake whose certificate names SVC_GRPC_PUBLIC_HOSTS;
#   - the agent image (Debian's v2ray as the engine) enrolls with that token through replica 1
#     and keeps its Sync stream; the admin API then shows the node online, its revision applied;
#   - /metrics on the admin API's and replica 1's metrics ports (the stream counted there).
# Every container and the database are removed at the end, whatever happened.
#
#   bash infra/images/smoke.sh
# Env: SMOKE_PG (postgres://postgres@127.0.0.1:5432), SMOKE_REDIS (redis://127.0.0.1:6379/7),
#      SMOKE_PORT_BASE (18180: +0 admin, +1 portal, +2 worker; gateway replicas +263, +264).
set -euo pipefail
cd "$(dirname "$0")/../.."
source infra/images/storage.sh
P=(podman "${STORAGE[@]}")
# podman logs an error for every container with a HEALTHCHECK when no systemd runs to time the
# checks ("unable to get systemd connection to add healthchecks"); this script runs them itself.
podman() { command podman "$@" 2> >(grep -v 'unable to get systemd connection' >&2); }

PG=${SMOKE_PG:-postgres://postgres@127.0.0.1:5432}
DB=images_smoke
REDIS=${SMOKE_REDIS:-redis://127.0.0.1:6379/7}
BASE=${SMOKE_PORT_BASE:-18180}
ADMIN=$BASE PORTAL=$((BASE + 1)) WORKER=$((BASE + 2)) CP1=$((BASE + 263)) CP2=$((BASE + 264))
ADMIN_METRICS=$((BASE + 10)) CP1_METRICS=$((BASE + 11))
RUN_ID=smoke-$$
work=$(mktemp -d)
names=()

say() { echo "smoke: $*"; }
die() {
  echo "smoke: FAILED: $*" >&2
  for n in "${names[@]}"; do echo "--- logs of $n" >&2; "${P[@]}" logs --tail 40 "$n" >&2 || true; done
  exit 1
}
cleanup() {
  for n in "${names[@]}"; do "${P[@]}" rm -f -t 5 "$n" >/dev/null 2>&1 || true; done
  "${P[@]}" volume rm -f "$RUN_ID-data" "$RUN_ID-agent" >/dev/null 2>&1 || true
  psql -q "$PG/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

for port in $ADMIN $PORTAL $WORKER $CP1 $CP2 $ADMIN_METRICS $CP1_METRICS; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then die "port $port is taken (set SMOKE_PORT_BASE)"; fi
done
psql -q "$PG/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB" >/dev/null

cat >"$work/env" <<EOF
DATABASE_URL=$PG/$DB
REDIS_URL=$REDIS
SVC_REDIS_KEY_PREFIX=svc-$RUN_ID:
SVC_INSTALLATION_KEY=$(head -c 32 /dev/urandom | base64)
SVC_PUBLIC_BASE_URL=http://127.0.0.1:$PORTAL
SVC_GRPC_PUBLIC_HOSTS=localhost,127.0.0.1
SVC_GRPC_PUBLIC_ENDPOINT=127.0.0.1:$CP1
SVC_HTTP_HOST=127.0.0.1
SVC_GRPC_HOST=127.0.0.1
SVC_LOG_LEVEL=info
EOF
"${P[@]}" volume create "$RUN_ID-data" >/dev/null
# As compose runs them: host network, read-only root, /data the only writable path besides
# /tmp (podman mounts tmpfs on /tmp, /var/tmp and /run with --read-only), no capabilities.
app=(--network host --read-only --cap-drop all --security-opt no-new-privileges --env-file "$work/env" -v "$RUN_ID-data:/data")

say "svc migrate"
"${P[@]}" run --rm "${app[@]}" localhost/svc-svc:local migrate || die "svc migrate"
say "svc admin create"
echo 'smoke-password-0123' | "${P[@]}" run --rm -i "${app[@]}" localhost/svc-svc:local admin create --email admin@example.com --role owner --password-stdin ||
  die "svc admin create"

start() { # name image port-env...
  local name=$RUN_ID-$1 image=$2
  shift 2
  names+=("$name")
  "${P[@]}" run -d --name "$name" "${app[@]}" "$@" "$image" >/dev/null || die "podman run $name"
}
start admin-api localhost/svc-admin-api:local -e SVC_HTTP_PORT=$ADMIN -e SVC_METRICS_PORT=$ADMIN_METRICS
start portal-api localhost/svc-portal-api:local -e SVC_HTTP_PORT=$PORTAL
start worker localhost/svc-worker:local -e SVC_HTTP_PORT=$WORKER
start control-plane-1 localhost/svc-control-plane:local -e SVC_GRPC_PORT=$CP1 -e SVC_METRICS_PORT=$CP1_METRICS
start control-plane-2 localhost/svc-control-plane:local -e SVC_GRPC_PORT=$CP2

for n in "${names[@]}"; do
  for i in $(seq 1 60); do
    "${P[@]}" healthcheck run "$n" >/dev/null 2>&1 && break
    [ "$("${P[@]}" inspect -f '{{.State.Running}}' "$n")" = true ] || die "$n exited"
    [ "$i" = 60 ] && die "$n not healthy after 60 tries"
    sleep 1
  done
  say "$n healthy ($("${P[@]}" inspect -f '{{.Config.User}}' "$n" | sed 's/^$/root/') user, read-only root: $("${P[@]}" inspect -f '{{.HostConfig.ReadonlyRootfs}}' "$n"))"
done

api=http://127.0.0.1:$ADMIN/api/v1
token=$(curl -sf -X POST "$api/auth/login" -H 'content-type: application/json' \
  -d '{"email":"admin@example.com","password":"smoke-password-0123"}' | jq -er .access_token) || die "admin login"
auth=(-H "authorization: Bearer $token")
node_id=$(curl -sf -X POST "$api/nodes" "${auth[@]}" -H 'content-type: application/json' \
  -d '{"name":"smoke-node","address":"127.0.0.1"}' | jq -er .id) || die "create node"
listed=$(curl -sf "$api/nodes" "${auth[@]}" | jq -er '[(.items // .data // .)[] | select(.id == "'"$node_id"'")] | length') || die "list nodes"
[ "$listed" = 1 ] || die "the new node is not in GET /nodes"
say "admin API: signed in, created node $node_id, GET /nodes lists it"

sub=$(curl -s -o "$work/sub" -w '%{http_code} %{content_type}' "http://127.0.0.1:$PORTAL/sub/not-a-token")
[ "$sub" = "404 application/problem+json" ] || die "portal GET /sub/not-a-token answered $sub"
jq -e '.status == 404' "$work/sub" >/dev/null || die "portal problem body: $(cat "$work/sub")"
say "portal: GET /sub/not-a-token -> $sub"
curl -sf "http://127.0.0.1:$WORKER/readyz" >/dev/null || die "worker /readyz"
say "worker: /readyz 200"

for port in $CP1 $CP2; do
  subject=$(openssl s_client -connect "127.0.0.1:$port" -alpn h2 </dev/null 2>/dev/null | openssl x509 -noout -ext subjectAltName 2>/dev/null | tail -1)
  case "$subject" in *"IP Address:127.0.0.1"*) ;; *) die "gateway :$port TLS handshake / certificate names: '$subject'" ;; esac
  say "gateway :$port: TLS handshake, certificate for $subject"
done

enroll=$(curl -sf -X POST "$api/nodes/$node_id/enroll-token" "${auth[@]}") || die "enroll token"
"${P[@]}" volume create "$RUN_ID-agent" >/dev/null
agent=(--network host --read-only --cap-drop all --cap-add NET_ADMIN --cap-add NET_BIND_SERVICE -v "$RUN_ID-agent:/var/lib/svc-agent")
"${P[@]}" run --rm "${agent[@]}" localhost/svc-agent:v2ray enroll \
  --server "$(jq -r .grpc_endpoint <<<"$enroll")" --token "$(jq -r .token <<<"$enroll")" --ca-sha256 "$(jq -r .ca_cert_sha256 <<<"$enroll")" ||
  die "agent enroll"
names+=("$RUN_ID-agent")
"${P[@]}" run -d --name "$RUN_ID-agent" "${agent[@]}" localhost/svc-agent:v2ray run >/dev/null || die "podman run agent"
for i in $(seq 1 60); do
  status=$(curl -sf "$api/nodes/$node_id" "${auth[@]}" | jq -r '"\(.connectivity) applied \(.applied_revision) of \(.desired_revision)"')
  case "$status" in "online applied "*) read -r _ _ applied _ desired <<<"$status"; [ "$applied" = "$desired" ] && break ;; esac
  [ "$i" = 60 ] && die "node still '$status' after its agent ran 60 s"
  sleep 1
done
"${P[@]}" healthcheck run "$RUN_ID-agent" >/dev/null || die "agent healthcheck (engine not running)"
say "agent (v2ray engine): enrolled, Sync stream open, node $node_id $status, engine running"
# The metrics ports (issue 18.2) from the images: the admin API's request histogram, and the
# replica the agent dialled counting its stream.
curl -sf "http://127.0.0.1:$ADMIN_METRICS/metrics" | grep -q '^svc_http_request_duration_seconds_count{' || die "admin-api /metrics"
streams=$(curl -sf "http://127.0.0.1:$CP1_METRICS/metrics" | awk '$1 ~ /^svc_gateway_streams_open/ { print $2 }')
[ "$streams" = 1 ] || die "control-plane-1 svc_gateway_streams_open is '$streams', not 1"
say "metrics: admin-api serves its request histogram; control-plane-1 has svc_gateway_streams_open 1"
say "OK"
