#!/usr/bin/env bash
# db/schema and db/migrations agree: `drizzle-kit generate`, run on a scratch copy of the drizzle
# config and db/, must find nothing to do. It diffs db/schema against the last snapshot in
# db/migrations/meta; a schema change without its migration (or a hand-written migration without
# its snapshot) makes it write files, and the next person's migration would carry that change too.
# Fails if generate wrote, changed or removed any file in the copy (the generated SQL is shown), or
# did not say it had nothing to do: drizzle-kit exits 0 even when it fails (a schema that does not
# load, or a rename it would have to ask about and cannot without a terminal).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
KIT="$ROOT/node_modules/.bin/drizzle-kit"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

cp "$ROOT/drizzle.config.ts" "$ROOT/package.json" "$WORK/"
cp -R "$ROOT/db" "$WORK/db"
ln -s "$ROOT/node_modules" "$WORK/node_modules"
listing() { (cd "$WORK" && find db -type f -print0 | sort -z | xargs -0 sha256sum); }
listing > "$WORK/.before"

# No standard input: a prompt must not wait (the timeout is a backstop; without a TTY drizzle-kit
# prints an error instead of asking).
status=0
(cd "$WORK" && timeout 120 "$KIT" generate --name drizzle_check < /dev/null > "$WORK/.out" 2>&1) || status=$?
listing > "$WORK/.after"
if ! diff "$WORK/.before" "$WORK/.after" > "$WORK/.diff"; then
  tail -n 3 "$WORK/.out"
  echo "--- files drizzle-kit generate wrote or changed:"
  grep -E '^[<>]' "$WORK/.diff" | sed -E 's/^([<>]) [0-9a-f]+  /\1 /'
  for f in "$WORK"/db/migrations/*drizzle_check*.sql; do
    [ -e "$f" ] && { echo "--- ${f#"$WORK/"}:"; cat "$f"; echo; }
  done
  echo "drizzle check: db/schema differs from the last snapshot in db/migrations/meta." >&2
  echo "Run \`npx drizzle-kit generate\` and commit the migration and its snapshot (a hand-written migration needs its snapshot too)." >&2
  exit 1
fi
if [ "$status" -ne 0 ] || ! grep -q "No schema changes, nothing to migrate" "$WORK/.out"; then
  cat "$WORK/.out"
  echo "drizzle check: drizzle-kit generate failed (exit $status) or did not say it had nothing to do (above): a schema that does not load, or a change it would have to ask about (a rename?)" >&2
  exit 1
fi
echo "drizzle check: db/schema matches db/migrations (drizzle-kit generate: nothing to do)"
