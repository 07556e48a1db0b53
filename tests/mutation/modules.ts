/**
 * What `npm run mutate -- <module>` mutates, and the test files that guard it. The test files are
 * the ones whose names say they exercise the module; a mutant that survives them survives the suite
 * as far as this module's promises go (a wider set only costs time: pass `--tests` to try one).
 * Fastest first: `--bail` stops at the first failure, so most mutants cost one short file.
 */
export interface MutationModule {
  /** Source files mutated, relative to the repository root. */
  readonly files: readonly string[];
  /** Test files run against each mutant. */
  readonly tests: readonly string[];
  /**
   * Mutants no test can tell apart from the original, keyed "file:line kind" (as reported), or
   * "file:line:column kind" when the line has another mutant of that kind that is not equivalent;
   * with the reason: not run.
   */
  readonly equivalent?: Readonly<Record<string, string>>;
}

export const MODULES: Record<string, MutationModule> = {
  write: {
    files: ["src/write/unit.ts", "src/write/context.ts", "src/write/record.ts", "src/write/activity.ts", "src/write/outbox.ts", "src/write/conflict.ts", "src/write/dry-run.ts"],
    tests: [
      "tests/transactions.test.ts",
      "tests/conflicts-rest.test.ts",
      "tests/activity.test.ts",
      "tests/history-mcp.test.ts",
      "tests/content.test.ts",
      "tests/conflicts-mcp.test.ts",
      "tests/dry-run.test.ts",
      "tests/delete-race.test.ts",
      "tests/history-rest.test.ts",
      "tests/webhooks.test.ts",
      // Added after the first run (tests/MUTATION.md): the model check's message, conflicts after pruned history, two writes in one operation.
      "tests/write-path-rules.test.ts",
      // Issue 37: the working copies' changed flags and published revisions (record.ts, unit.ts).
      "tests/drafts.test.ts",
    ],
    equivalent: {
      "src/write/context.ts:56 condition → true": "an OAuth caller always has its user (src/auth.ts reads user_id from the token row, not null)",
      "src/write/dry-run.ts:47 > → >=": "a deletion's revision is at least 2 (a node's first revision is its creation): number - 1 is never 0",
      "src/write/unit.ts:199 statement removed": "a deleted node's number is only answered to an operation answering that node, and delete_node answers nothing ({})",
      // The run of 29 November 2026, stop 35 (tests/MUTATION.md).
      "src/write/context.ts:45:117 false → true":
        "systemWrite's `checked`: a system write has no expected revision (expected: null), and checkExpectedRevision returns on that before it reads `checked`",
      "src/write/context.ts:54 ?? → ||": "caller.userId is a user's uuid or null/undefined, never an empty string: || and ?? pick the same",
      "src/write/unit.ts:150 > → >=":
        "full snapshots instead of summaries when nothing was published (no model check, no dry run): their only reader is then enqueueWriteEvents, which reads path, type, status and the translations' locales, all in the summary too",
      "src/write/unit.ts:187 ?? → ||": "a change's operation is a non-empty operation name or undefined: || and ?? pick the same",
      "src/write/unit.ts:215:60 || → &&":
        "an answer with a `status` but no `state` is a translation row (nodeId, not node_id): its key is then the translation's own id, in neither set (node ids, node/locale keys); no answer has a `state` without a `status`",
      "src/write/unit.ts:216:116 condition → true": "`out.id` used as the key when it is not a string: undefined, in neither set (they hold strings), the same as null's return",
      "src/write/activity.ts:34 ?? → ||": "ctx.operation is an operation name (non-empty) or null: || and ?? pick the same",
      "src/write/activity.ts:56 statement removed":
        "recordOperationActivity is the last step of an operation (withActivity, src/operations.ts) and each runOperation builds its own WriteContext: no one reads `recorded` after it",
      "src/write/outbox.ts:65 condition → false":
        "an empty list: the statement inserts no row, and its NOTIFY is in the select list over the outbox rows inserted (none), so it is not sent: the same outcome, one statement more",
      "src/write/outbox.ts:149 condition → true": "a recorded snapshot's translations are always an array (both snapshot forms coalesce them to [])",
      "src/write/conflict.ts:44 ?? → ||": "a revision's actor always has a non-empty kind (admin_key, mcp_token, oauth, system…): || and ?? pick the same",
    },
  },
  auth: {
    files: ["src/auth.ts", "src/lib/scopes.ts", "src/oauth/session.ts"],
    tests: [
      "tests/project-read-scope.test.ts",
      "tests/mcp-tokens.test.ts",
      "tests/admin-auth.test.ts",
      "tests/keys.test.ts",
      "tests/oauth-projects.test.ts",
      "tests/isolation.test.ts",
      "tests/tenancy-oauth.test.ts",
      "tests/oauth.test.ts",
      "tests/users.test.ts",
      // Added after the first run (tests/MUTATION.md): expiry instants, last_used_at, the longest bearer.
      "tests/auth-rules.test.ts",
    ],
    equivalent: {
      "src/auth.ts:25 && → ||": "every insufficient_scope error names a known scope or none (an array, undefined): no caller hands it another string",
      "src/auth.ts:14 ?? → ||": 'authorization ?? "": a missing header and "" both give "", and the match group (\\S+) is never empty',
      "src/auth.ts:101 condition → true": "a bearer of another prefix is then looked up as an access token by its hash and not found: null either way",
      "src/auth.ts:70 condition → true": "the UPDATE's own WHERE (last_used_at older than a minute) keeps it to once a minute anyway",
      "src/auth.ts:70 > → >=": "at exactly 60 s the UPDATE's WHERE (last_used_at < now - 60 s) still matches no row",
      "src/auth.ts:70 - → +": "always true then: the UPDATE's WHERE keeps last_used_at to once a minute",
      "src/auth.ts:74 - → +": "the JavaScript check before it already holds last_used_at to once a minute; the WHERE only guards concurrent requests",
      "src/auth.ts:76 ?? → ||": "project_ids is null or a non-empty array (creation refuses []): || and ?? agree",
      "src/lib/scopes.ts:54 ?? → ||": "a member role is a non-empty string, or null or undefined: || and ?? agree",
      "src/oauth/session.ts:89 ?? → ||": "the regex match is an array or null, and sig is a string: || and ?? agree",
      "src/oauth/session.ts:60 > → >=": "i = 0 means a cookie part with an empty name, and no cookie we read has an empty name",
      "src/oauth/session.ts:25 condition → true": "the key is re-read from system_state each time: the same key (the insert does nothing once the row exists)",
      "src/oauth/session.ts:27 statement removed": "the key is then read from system_state on every use: the same key, one more query",
    },
  },
  cache: {
    files: ["src/delivery/cache.ts"],
    tests: [
      "tests/delivery-stale-outage.test.ts",
      "tests/delivery-fast.test.ts",
      "tests/commit-announce.test.ts",
      "tests/delivery.test.ts",
      "tests/delivery-expiry.test.ts",
      "tests/delivery-visibility.test.ts",
      "tests/delivery-cache.test.ts",
      "tests/delivery-outage.test.ts",
      // Added after the first run (tests/MUTATION.md): the media links of a project, the byte counts, the outage hold.
      "tests/media-delivery.test.ts",
      "tests/delivery-inputs.test.ts",
      "tests/delivery-cache-rules.test.ts",
    ],
    equivalent: {
      "src/delivery/cache.ts:309 ?? → ||": "the map holds project objects (never falsy) or nothing",
      "src/delivery/cache.ts:318 ?? → ||": "versions start at 1; version 0 and no version both give 0",
      "src/delivery/cache.ts:471 ?? → ||": "size 0 and no stale store both give 0",
      "src/delivery/cache.ts:266 condition → false":
        "timing only: the versions left unannounced are reckoned anyway when an outage needs the last good answers (lastGood → reckon), with the same outcome",
      "src/delivery/cache.ts:272 condition → false": "memory only: a version at or below `settled` left in `heard` is never looked up again (versions above `settled` are)",
      "src/delivery/cache.ts:446 condition → false": "a second grow sets the same gzip size again (set, not added): the byte counts stay; only the entry's LRU recency is touched",
      "src/delivery/cache.ts:266 > → >=": "the memory bound of announced versions: told apart only by exactly 1,025 announcements pending behind a lost one",
    },
  },
  dispatcher: {
    files: ["src/webhooks/dispatcher.ts"],
    tests: [
      "tests/webhooks-process.test.ts",
      "tests/media-webhooks.test.ts",
      "tests/webhooks.test.ts",
      "tests/webhooks-lease.test.ts",
      // Added after the first run (tests/MUTATION.md): retries, stop(), the wake by NOTIFY, places, turns and send windows.
      "tests/webhooks-delivery-rules.test.ts",
    ],
    equivalent: {
      "src/webhooks/dispatcher.ts:150 ?? → ||": 'a batch is a group of claimed rows (never empty) and its project id a uuid: `?? ""` is never reached',
      "src/webhooks/dispatcher.ts:241 ?? → ||": "retryAfterMs is a finite number >= 0 or null (src/webhooks/send.ts): 0 and null both give 0, the same under Math.max with a delay >= 0",
    },
  },
};
