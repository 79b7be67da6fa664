#!/usr/bin/env bash
# Every pnpm the project tells somebody to run (the README's commands, CI, the image) is the
# one package.json's packageManager names. A different version makes pnpm try to switch to
# that one, which a registry serving pnpm without signatures refuses (managePackageManagerVersions
# is off in pnpm-workspace.yaml for that reason, but a version we name must still be the one
# that wrote the lockfile).
set -euo pipefail
cd "$(dirname "$0")/.."
want=$(node -p 'require("./package.json").packageManager')
case "$want" in pnpm@[0-9]*.[0-9]*.[0-9]*) ;; *) echo "package.json packageManager is '$want', not pnpm@<exact version>" >&2; exit 1 ;; esac
bad=0
for f in README.md .ci/run infra/Dockerfile; do
  [ -f "$f" ] || continue
  while IFS= read -r named; do
    if [ "$named" != "$want" ]; then
      echo "$f runs $named but package.json names $want" >&2
      bad=1
    fi
  done < <(grep -oE 'pnpm@[0-9][0-9A-Za-z.+-]*' "$f" | sort -u)
done
[ "$bad" = 0 ] && echo "pnpm version: every command names $want"
exit "$bad"
