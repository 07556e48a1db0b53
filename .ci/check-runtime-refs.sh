#!/bin/sh
# Runtime specifics live in src/platform/ and src/server/ (and the DATA_DIR lock in db/lock.ts): fails on a Bun or
# Deno API reference (`Bun.`, `bun:`, `Deno.`, an import from "bun") anywhere else in src/ or db/.
cd "$(dirname "$0")/.." || exit 2
found=$(grep -rnE '\bBun\.|["'"'"']bun:|\bDeno\.|from "bun"' src db --include='*.ts' --include='*.mts' --include='*.js' --include='*.mjs' | grep -vE '^(src/platform/|src/server/|db/lock\.ts:)')
if [ -n "$found" ]; then
  echo "runtime-specific references outside src/platform/ and src/server/ (move them into a platform module):"
  echo "$found"
  exit 1
fi
echo "runtime refs: none outside src/platform/, src/server/ and db/lock.ts"
