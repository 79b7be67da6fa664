#!/usr/bin/env bash
# buf breaking (spec 9.3: fields are only added; removal reserves the number): the contract in
# the working tree against main. On main itself, against main's previous commit and against the
# first commit of the contract, so neither one step nor the sum of steps breaks an agent.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUF=packages/proto/node_modules/.bin/buf
if ! git rev-parse --git-dir >/dev/null 2>&1; then echo "buf breaking: not a git checkout, skipped"; exit 0; fi
if [ "$(git rev-parse --is-shallow-repository)" = true ]; then git fetch -q --unshallow || true; fi
FILE=proto/svc/controlplane/v1/controlplane.proto
refs=()
if [ "$(git rev-parse --abbrev-ref HEAD)" != main ] && git rev-parse -q --verify main >/dev/null; then refs+=(main); fi
if git rev-parse -q --verify HEAD~1 >/dev/null; then refs+=("$(git rev-parse HEAD~1)"); fi
first=$(git log --diff-filter=A --format=%H -- "$FILE" | tail -1)
if [ -n "$first" ]; then refs+=("$first"); fi
for ref in "${refs[@]}"; do
  # A ref from before the contract existed has nothing to break.
  git cat-file -e "$ref:$FILE" 2>/dev/null || continue
  # Only our contract's module (svc/): proto/engine is the engine's, and a ref from before it
  # was a module of the workspace would not compare (2 images against 1). From inside proto/,
  # `--path svc` names the same directory on both sides.
  (cd proto && "../$BUF" breaking . --path svc --against "../.git#ref=$ref,subdir=proto")
  echo "buf breaking: proto/ is compatible with $(git rev-parse --short "$ref")"
done
