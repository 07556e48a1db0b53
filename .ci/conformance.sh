#!/usr/bin/env bash
# The official MCP conformance suite against a running instance, for both revisions /mcp speaks
# (2026-07-28 and 2025-11-25). Starts the service on the embedded database with the demo project,
# mints an MCP token, and puts a loopback proxy in front that adds the bearer (the suite cannot
# send one). Fails on any failed check except the few that need the suite's own fixture tools
# (listed in .ci/conformance-check.ts and in docs/mcp-oauth.md). Needs bun and the npm registry.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="$ROOT/node_modules/.bin:$PATH"
SUITE="@modelcontextprotocol/conformance@0.2.0-alpha.12"
SCENARIOS_2026="server-stateless caching http-header-validation sep-2164-resource-not-found tools-list resources-list prompts-list completion-complete dns-rebinding-protection"
SCENARIOS_2025="server-initialize ping tools-list resources-list logging-set-level prompts-list completion-complete dns-rebinding-protection"

WORK="$(mktemp -d)"
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
cleanup() {
  [ -n "${PROXY_PID:-}" ] && kill "$PROXY_PID" 2>/dev/null || true
  if [ -n "${PID:-}" ]; then
    kill "$PID" 2>/dev/null || true
    # Waited for (at most 15 s): a service still shutting down writes to its data directory.
    for _ in $(seq 1 150); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -rf "$WORK" || true
}
trap cleanup EXIT

PORT="$(free_port)"
PROXY_PORT="$(free_port)"
# The suite's DNS-rebinding probe sends the Origin of the URL it was given (the proxy): allow exactly that one.
# exec: $! is the service itself, so the trap stops it (not only a subshell).
(cd "$ROOT" && exec env -u DATABASE_URL PORT="$PORT" DATA_DIR="$WORK/data" SEED_DEMO=true MCP_ALLOWED_ORIGINS="http://127.0.0.1:$PROXY_PORT" \
  bun src/main.ts >"$WORK/server.log" 2>&1) &
PID=$!
for _ in $(seq 1 120); do
  curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break
  kill -0 "$PID" 2>/dev/null || { cat "$WORK/server.log"; echo "server exited"; exit 1; }
  sleep 0.5
done
KEY="$(grep -o 'cms_ak_[a-z2-7]*' "$WORK/server.log" | head -1)"
[ -n "$KEY" ] || { cat "$WORK/server.log"; echo "no root key printed"; exit 1; }
TOKEN="$(curl -fsS -X POST -H "authorization: Bearer $KEY" -H 'content-type: application/json' \
  "http://127.0.0.1:$PORT/admin/p/demo/ai/mcp/tokens" -d '{"name":"conformance"}' | grep -o '"token":"cms_mcp_[a-z2-7]*' | grep -o 'cms_mcp_[a-z2-7]*')"
[ "${#TOKEN}" -gt 20 ] || { echo "could not mint an MCP token"; exit 1; }

UPSTREAM="http://127.0.0.1:$PORT" MCP_TOKEN="$TOKEN" LISTEN_PORT="$PROXY_PORT" bun "$ROOT/.ci/mcp-auth-proxy.ts" >"$WORK/proxy.log" 2>&1 &
PROXY_PID=$!
for _ in $(seq 1 40); do [ -s "$WORK/proxy.log" ] && break; sleep 0.25; done
URL="http://127.0.0.1:$PROXY_PORT/mcp"

run() { # version scenario
  local out="$WORK/results/$1/$2"
  mkdir -p "$out"
  # The suite's exit code is not the verdict (fixture-only checks fail everywhere): the checks are.
  bunx --bun "$SUITE" server --url "$URL" --spec-version "$1" --scenario "$2" -o "$out" >"$out/stdout.txt" 2>&1 || true
}
for s in $SCENARIOS_2026; do run 2026-07-28 "$s"; done
for s in $SCENARIOS_2025; do run 2025-11-25 "$s"; done
bun "$ROOT/.ci/conformance-check.ts" "$WORK/results"
