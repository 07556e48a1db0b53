#!/usr/bin/env bash
# Starts the service exactly as the README says (npm start, embedded database, demo project)
# on a free port in a temporary directory, and checks readiness, delivery, swagger and /mcp.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d)"
PORT="$(node -e 'const s=require("net").createServer().listen(0,()=>{console.log(s.address().port);s.close()})')"
LOG="$WORK/server.log"
# npm start runs the service as a grandchild: it gets a process group of its own (setsid), and the
# whole group is stopped on exit, so no server outlives the check.
# The group is waited for (at most 15 s) before its data directory goes: a service still shutting
# down writes there, and removing it under the service failed the run ("Directory not empty").
cleanup() {
  if [ -n "${PID:-}" ]; then
    kill -- "-$PID" 2>/dev/null || kill "$PID" 2>/dev/null || true
    for _ in $(seq 1 150); do kill -0 -- "-$PID" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -rf "$WORK" || true
}
trap cleanup EXIT

(cd "$ROOT" && exec setsid env -u DATABASE_URL PORT="$PORT" DATA_DIR="$WORK/data" npm start >"$LOG" 2>&1) &
PID=$!
for i in $(seq 1 120); do
  if curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$PID" 2>/dev/null; then cat "$LOG"; echo "server exited"; exit 1; fi
  sleep 0.5
done
curl -fsS "http://127.0.0.1:$PORT/readyz" | grep -q ready || { cat "$LOG"; echo "not ready"; exit 1; }
curl -fsS "http://127.0.0.1:$PORT/swagger/json" | grep -q '"openapi"' || { echo "no swagger"; exit 1; }
KEY="$(grep -o 'cms_ak_[a-z2-7]*' "$LOG" | head -1)"
[ -n "$KEY" ] || { cat "$LOG"; echo "no root key printed"; exit 1; }
curl -fsS -H "authorization: Bearer $KEY" "http://127.0.0.1:$PORT/admin/projects/demo" | grep -q '"slug":"demo"' || { echo "demo project missing"; exit 1; }
curl -fsS "http://127.0.0.1:$PORT/api/p/demo/nodes/by-path/home" | grep -q '"title":"Welcome"' || { echo "demo delivery missing"; exit 1; }
code="$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'content-type: application/json' "http://127.0.0.1:$PORT/mcp" -d '{}')"
[ "$code" = 401 ] || { echo "/mcp without a token answered $code, not 401"; exit 1; }
echo "smoke: ready, swagger, demo project, delivery, /mcp 401 OK on port $PORT"
