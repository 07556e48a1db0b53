// Applies our fix for porsager/postgres#1199 (and #1066, #1154) to the installed postgres.js.
// Run by `postinstall` (npm ci, bun install) and by the Dockerfile; idempotent; plain JS so that
// node and bun both run it. It refuses, loudly, any version but the one it was written for: when
// postgres.js moves, check whether upstream fixed the bug (then delete this file) or port it.
// Why: README.md, "Database faults".
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const FOR_VERSION = "3.4.9";
const MARK = "patched: porsager/postgres#1199";
/** The second round of edits (marked 2 below): a copy patched by the first takes only these. */
const MARK2 = "patched (2): porsager/postgres#1199";
const root = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "..", "node_modules", "postgres");

/** [file, exact text, replacement, round]; each text must occur exactly once (round 2 edits apply to round 1's output). */
const edits = [
  // A closed socket's buffered bytes are dropped, not left to block the reconnected one's startup.
  [
    "connection.js",
    "    clearImmediate(nextWriteTimer)\n    socket.removeListener('data', data)\n    socket.removeListener('connect', connected)\n    idleTimer.cancel()",
    `    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null // ${MARK}\n    socket.removeListener('data', data)\n    socket.removeListener('connect', connected)\n    idleTimer.cancel()`,
  ],
  // A closed connection forgets its query and that query's error: otherwise the error (say 57P01,
  // "terminating connection due to administrator command") fails the first query of its next life.
  [
    "connection.js",
    "    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))\n",
    "    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))\n    query = errorResponse = null\n",
  ],
  // ...and fails it, whatever `hadError` says. The socket's 'error' (ECONNRESET) fails what was
  // sent then, but the connection stays in the pool until 'close': a query (a transaction's BEGIN)
  // handed to it in between was written to the dead socket and, the close having an error, was
  // never answered: the request hung for good, the pool healthy around it.
  [
    "connection.js",
    "    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))\n    query = errorResponse = null\n",
    `    if (query || sent.length) // ${MARK2}\n      error(Errors.connection('CONNECTION_CLOSED', options, socket))\n    query = errorResponse = null\n`,
    2,
  ],
  // The array-type lookup every new connection makes is awaited by no one: when its backend is
  // terminated, the rejection is unhandled and ends the process. The error reaches the waiting
  // query through errored(); the lookup runs again on the next connection.
  ["connection.js", "        return fetchArrayTypes()\n", `        return fetchArrayTypes().catch(noop) // ${MARK}\n`],
  // A write scheduled before the socket closed must not throw from setImmediate (uncatchable).
  [
    "connection.js",
    "  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)",
    `  function nextWrite(fn) {\n    if (!socket) { // ${MARK}\n      nextWriteTimer !== null && clearImmediate(nextWriteTimer)\n      chunk = nextWriteTimer = null\n      return false\n    }\n    const x = socket.write(chunk, fn)`,
  ],
  // A connection whose socket is gone takes no query: it would wait forever for an answer.
  [
    "connection.js",
    "    if (terminated)\n      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))\n",
    `    if (terminated)\n      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))\n\n    if (!socket) // ${MARK}\n      return queryError(q, Errors.connection('CONNECTION_CLOSED', options))\n`,
  ],
  // A transaction whose connection closed sends nothing more (its ROLLBACK included) on that
  // connection object, which the pool may already be reconnecting for someone else.
  ["index.js", "        new Promise((_, reject) => connection.onclose = reject)", `        new Promise((_, reject) => connection.onclose = e => reject(closedError = e)) // ${MARK}`],
  ["index.js", "      , connection\n      , prepare = null\n", "      , connection\n      , prepare = null\n      , closedError = null\n"],
  [
    "index.js",
    "        q.catch(e => uncaughtError || (uncaughtError = e))\n        c.queue === full",
    "        q.catch(e => uncaughtError || (uncaughtError = e))\n        if (closedError)\n          return q.reject(closedError)\n        c.queue === full",
  ],
  // A reserved connection closed under its holder: its queries fail, and release() does not put
  // the dead connection back into the open pool (the #1199 report).
  [
    "index.js",
    "    sql.release = () => {\n      c.reserved = null\n      onopen(c)\n    }",
    `    sql.release = () => { // ${MARK}\n      const alive = c.reserved\n      c.reserved = null\n      alive && onopen(c)\n    }`,
  ],
  [
    "index.js",
    "    function handler(q) {\n      c.queue === full\n        ? queue.push(q)",
    "    function handler(q) {\n      if (!c.reserved)\n        return q.reject(Errors.connection('CONNECTION_CLOSED', options, options))\n      c.queue === full\n        ? queue.push(q)",
  ],
];

const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
if (version !== FOR_VERSION) {
  console.error(`db/patch-postgres.mjs: postgres ${version} installed, the patch is for ${FOR_VERSION}. See README.md "Database faults".`);
  process.exit(1);
}
// Bun loads src/, Node's require cjs/src/, workerd cf/src/: the same code, patched alike.
for (const dir of ["src", "cjs/src", "cf/src"]) {
  for (const name of ["connection.js", "index.js"]) {
    const file = join(root, dir, name);
    let text = readFileSync(file, "utf8");
    if (text.includes(MARK2)) continue;
    const round = text.includes(MARK) ? 2 : 1;
    for (const [target, from, to, since = 1] of edits) {
      if (target !== name || since < round) continue;
      const at = text.indexOf(from);
      if (at < 0 || text.indexOf(from, at + 1) >= 0) {
        console.error(`db/patch-postgres.mjs: ${dir}/${name} does not contain the expected text once:\n${from}`);
        process.exit(1);
      }
      text = text.slice(0, at) + to + text.slice(at + from.length);
    }
    writeFileSync(file, text);
  }
}
