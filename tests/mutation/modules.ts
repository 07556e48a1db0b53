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
    ],
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
    ],
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
    ],
  },
  dispatcher: {
    files: ["src/webhooks/dispatcher.ts"],
    tests: ["tests/webhooks-process.test.ts", "tests/media-webhooks.test.ts", "tests/webhooks.test.ts", "tests/webhooks-lease.test.ts"],
  },
};
