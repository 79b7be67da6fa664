#!/usr/bin/env bash
# Runs the README's start line (given as $1, exactly as the README has it) the way a new user
# would, on the embedded default with no services, and passes once the system answers: the
# admin API reports bootstrap mode and the log carries the one-time setup token. Ports and the
# data directory are the only things set from outside (environment), so CI never collides
# with a running installation.
set -euo pipefail
line=$1
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
work=$(mktemp -d)
http_port=$(free_port)
grpc_port=$(free_port)
log="$work/start.log"
SVC_DATA_DIR="$work/data" SVC_HTTP_PORT=$http_port SVC_GRPC_PORT=$grpc_port \
  setsid env -u DATABASE_URL -u REDIS_URL bash -c "$line" >"$log" 2>&1 &
pid=$!
stop() { kill -TERM -- "-$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
trap stop EXIT
for _ in $(seq 1 300); do
  if answer=$(curl -sf "http://127.0.0.1:$http_port/api/v1/auth/methods" 2>/dev/null); then
    if grep -q '"setup_required":true' <<<"$answer" && grep -q 'setup_token' "$log"; then
      # The address the line names ends at the admin panel (/ redirects to /admin/), whose page
      # and first script are served.
      landing=$(curl -sfL -o "$work/page.html" -w '%{url_effective}' "http://127.0.0.1:$http_port/" || true)
      if [ "${landing##*/admin/}" != "" ] || ! grep -q '<div id="root">' "$work/page.html"; then
        echo "the start line's address does not end at the admin panel: GET / led to '$landing'" >&2
        exit 1
      fi
      script=$(grep -o 'src="\./assets/[^"]*\.js"' "$work/page.html" | head -1 | sed 's/^src="\.\///; s/"$//')
      if [ -z "$script" ] || ! curl -sf -o /dev/null "http://127.0.0.1:$http_port/admin/$script"; then
        echo "the admin panel's script ($script) is not served" >&2
        exit 1
      fi
      echo "the start line serves on :$http_port (gRPC :$grpc_port), the panel at /admin/: $answer"
      exit 0
    fi
  fi
  if ! kill -0 "$pid" 2>/dev/null; then break; fi
  sleep 1
done
echo "the README's start line did not come up; its output:" >&2
tail -50 "$log" >&2
exit 1
