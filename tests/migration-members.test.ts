// Issue 13: the upgrade from instance-wide roles, run on a database created by the previous
// schema (every migration before the project_members one), filled as that version would fill it.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { runMigrations } from "../db/migrate";
import { adminKeys, projectMembers, users } from "../db/schema";
import { authenticateMcpBearer } from "../src/auth";
import { hashToken } from "../src/lib/tokens";
import { BASE, harness, previousSchemaDatabase, seedProject } from "./helpers";

const OLD_SEVEN = ["projects:read", "projects:write", "content:read", "content:write", "ai:read", "ai:write", "keys:write"];

describe("migration to per-project roles", async () => {
  const fresh = await previousSchemaDatabase("_project_members");
  const db = fresh.handle.db;
  const { exec } = fresh;
  const ids = { p1: crypto.randomUUID(), p2: crypto.randomUUID(), owner: crypto.randomUUID(), editor: crypto.randomUUID(), viewer: crypto.randomUUID(), odd: crypto.randomUUID() };
  const keyIds = { root: crypto.randomUUID(), limited: crypto.randomUUID(), partial: crypto.randomUUID(), rootRevoked: crypto.randomUUID() };
  const editorToken = `cms_at_${crypto.randomUUID()}`;

  // What the previous version wrote: instance-wide roles, keys with the seven scopes, a live OAuth grant.
  for (const [id, slug] of [
    [ids.p1, "old-one"],
    [ids.p2, "old-two"],
  ]) {
    await exec(`insert into projects (id, slug, name, default_locale, locales) values ('${id}', '${slug}-${id!.slice(0, 6)}', '${slug}', 'en', '["en"]')`);
  }
  for (const [id, role] of [
    [ids.owner, "owner"],
    [ids.editor, "editor"],
    [ids.viewer, "viewer"],
    [ids.odd, "auditor"],
  ]) {
    await exec(`insert into users (id, email, password_hash, role) values ('${id}', '${role}-${id}@example.com', 'x', '${role}')`);
  }
  const seven = JSON.stringify(OLD_SEVEN);
  await exec(`insert into admin_keys (id, name, key_hash, key_hint, scopes, project_ids) values
    ('${keyIds.root}', 'root', 'h-root-${keyIds.root}', 'hint', '${seven}', null),
    ('${keyIds.rootRevoked}', 'old root', 'h-rev-${keyIds.rootRevoked}', 'hint', '${seven}', null),
    ('${keyIds.limited}', 'limited', 'h-lim-${keyIds.limited}', 'hint', '${seven}', '["${ids.p1}"]'),
    ('${keyIds.partial}', 'partial', 'h-part-${keyIds.partial}', 'hint', '["content:read","keys:write"]', null)`);
  await exec(`update admin_keys set revoked_at = now() where id = '${keyIds.rootRevoked}'`);
  const grant = crypto.randomUUID();
  await exec(
    `insert into oauth_clients (id, redirect_uris, token_endpoint_auth_method, grant_types, response_types) values ('old-client-${grant}', '["http://127.0.0.1/cb"]', 'none', '["authorization_code"]', '["code"]')`,
  );
  await exec(
    `insert into oauth_grants (id, client_id, user_id, project_id, scopes, resource) values ('${grant}', 'old-client-${grant}', '${ids.editor}', '${ids.p1}', '["content:read","content:write"]', '${BASE}/mcp')`,
  );
  await exec(`insert into oauth_tokens (id, token_hash, kind, grant_id, client_id, user_id, project_id, scopes, resource, expires_at)
    values ('${crypto.randomUUID()}', '${hashToken(editorToken)}', 'access', '${grant}', 'old-client-${grant}', '${ids.editor}', '${ids.p1}', '["content:read","content:write"]', '${BASE}/mcp', now() + interval '1 hour')`);

  const tokenScopes = async (): Promise<readonly string[] | null> => (await authenticateMcpBearer(db, `Bearer ${editorToken}`, `${BASE}/mcp`, new Date()))?.scopes ?? null;

  test("the previous schema has no memberships", async () => {
    const tables = await exec("select count(*)::int as n from information_schema.tables where table_name = 'project_members'");
    expect((tables as unknown as { rows?: { n: number }[] }).rows?.[0]?.n ?? (tables as unknown as { n: number }[])[0]!.n).toBe(0);
  });

  test("owners stay owners; editors and viewers keep that role in every project that existed; nothing else gains", async () => {
    await runMigrations(fresh.handle);
    const roles = Object.fromEntries((await db.select({ id: users.id, role: users.role }).from(users)).map((u) => [u.id, u.role]));
    expect(roles).toEqual({ [ids.owner]: "owner", [ids.editor]: "member", [ids.viewer]: "member", [ids.odd]: "member" });
    const members = (await db.select().from(projectMembers)).map((m) => `${m.userId}:${m.projectId}:${m.role}`).sort();
    expect(members).toEqual([`${ids.editor}:${ids.p1}:editor`, `${ids.editor}:${ids.p2}:editor`, `${ids.viewer}:${ids.p1}:viewer`, `${ids.viewer}:${ids.p2}:viewer`].sort());
  });

  test("root keys (every scope, no project limit) gain users:write; no other key changes", async () => {
    const keys = Object.fromEntries((await db.select().from(adminKeys)).map((k) => [k.id, k.scopes]));
    // model:write from 0004 and media:write from 0006, as root keys; content:publish from 0007 (issue 27), as every key
    // holding content:write; webhooks:write from 0008, as root keys
    expect(keys[keyIds.root]).toEqual([...OLD_SEVEN, "users:write", "model:write", "media:write", "content:publish", "webhooks:write"]);
    expect(keys[keyIds.rootRevoked]).toEqual([...OLD_SEVEN, "users:write", "model:write", "media:write", "content:publish", "webhooks:write"]);
    expect(keys[keyIds.limited]).toEqual([...OLD_SEVEN, "content:publish"]);
    expect(keys[keyIds.partial]).toEqual(["content:read", "keys:write"]);
  });

  test("an OAuth token issued before the upgrade keeps exactly what it had", async () => {
    expect(await tokenScopes()).toEqual(["content:read", "content:write", "content:publish"]); // content:publish from 0007, with content:write
  });

  test("the old roles are refused by the new constraints; a project created after the upgrade is not the migrated editor's", async () => {
    // Refused by the role checks themselves (not some other error: a missing row, a foreign key).
    const refusal = (q: string) =>
      exec(q).then(
        () => null,
        (e: { cause?: { code?: string; message?: string } }) => [e.cause?.code, e.cause?.message],
      );
    expect(await refusal(`update users set role = 'editor' where id = '${ids.editor}'`)).toEqual(["23514", expect.stringContaining('check constraint "users_role_check"')]);
    expect(await refusal(`insert into project_members (project_id, user_id, role) values ('${ids.p1}', '${ids.odd}', 'owner')`)).toEqual([
      "23514",
      expect.stringContaining('check constraint "project_members_role_check"'),
    ]);
    const h = await harness({}, { db, dbHandle: fresh.handle });
    const later = await seedProject(h);
    const rows = await db.select().from(projectMembers).where(sql`${projectMembers.projectId} = ${later.id}`);
    expect(rows).toHaveLength(0);
  });
});
