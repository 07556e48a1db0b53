// Issue 25: the CLI's member writes are in the project's activity log (as the system's, the
// operator's), like the same writes through the admin API. On the embedded database (a DATA_DIR)
// or, when the run has DATABASE_URL, on a PostgreSQL database of its own, as an operator runs it.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { activity, projects } from "../db/schema";
import { runCli } from "../src/cli";
import { loadConfig } from "../src/config";
import { createProject } from "../src/projects/service";
import { openRuntime } from "../src/runtime";
import { freshDatabase } from "./helpers";

/** The environment the CLI and the checks run with, and how to drop what it made. */
async function cliEnvironment(dir: string): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  const env = { DATA_DIR: dir, SEED_DEMO: "false", LOG_LEVEL: "silent" };
  if (!process.env.DATABASE_URL?.startsWith("postgres")) return { env, drop: async () => {} };
  const fresh = await freshDatabase();
  await fresh.handle.close(); // the CLI opens its own connections
  return { env: { ...env, DATABASE_URL: fresh.url! }, drop: () => fresh.drop() };
}

describe("CLI writes and the activity log", () => {
  test("members:set and members:remove each leave an entry (operation, system actor, the member)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cms-cli-activity-"));
    const { env, drop } = await cliEnvironment(dir);
    try {
      const setup = await openRuntime(loadConfig({ ...env }));
      await createProject(setup.db, { slug: "demo", name: "Demo" }, { kind: "admin_key", keyId: "setup", scopes: [], projectIds: null }, new Date());
      await setup.dbHandle.close();
      const out: string[] = [];
      expect(await runCli(["users:create", "--email", "member@example.com", "--role", "member", "--password", "a-long-password-1"], env, (s) => out.push(s))).toBe(0);
      expect(await runCli(["members:set", "demo", "member@example.com", "--role", "editor"], env, (s) => out.push(s))).toBe(0);
      expect(await runCli(["members:remove", "demo", "member@example.com"], env, (s) => out.push(s))).toBe(0);
      const userId = JSON.parse(out[0]!).id as string;
      const deps = await openRuntime(loadConfig({ ...env }));
      try {
        const [demo] = await deps.db.select().from(projects).where(eq(projects.slug, "demo"));
        const entries = await deps.db.select().from(activity).where(eq(activity.projectId, demo!.id));
        const members = entries.filter((e) => e.operation.endsWith("_member")).map((e) => [e.operation, e.actor.kind, e.target.id]);
        expect(members.sort()).toEqual([
          ["remove_member", "system", userId],
          ["set_member", "system", userId],
        ]);
      } finally {
        await deps.dbHandle.close();
      }
    } finally {
      await drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
