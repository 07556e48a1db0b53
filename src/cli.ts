// npm run cli -- <command> [--flag value]: operator tasks against the configured database.
import { loadConfig } from "./config";
import { createAdminKey, keyToWire, listAdminKeys, revokeAdminKey } from "./keys/service";
import { ADMIN_SCOPES } from "./lib/scopes";
import { openRuntime } from "./runtime";
import { createUser } from "./users/service";

const USAGE = `usage: npm run cli -- <command>
  users:create --email E --password P [--role owner|editor|viewer]
  keys:create  --name N [--scopes a,b] [--projects id1,id2]
  keys:list
  keys:revoke  <id>`;

function flags(argv: string[]): { positional: string[]; opts: Record<string, string> } {
  const opts: Record<string, string> = {};
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith("--")) {
      const [k, v] = a.includes("=") ? a.slice(2).split(/=(.*)/s) : [a.slice(2), argv[++i] ?? ""];
      opts[k] = v;
    } else positional.push(a);
  }
  return { positional, opts };
}

export async function runCli(argv: string[], env: Record<string, string | undefined>, out: (s: string) => void): Promise<number> {
  const [command, ...rest] = argv;
  const { positional, opts } = flags(rest);
  if (!command || command === "help" || command === "--help") {
    out(USAGE);
    return command ? 0 : 2;
  }
  const deps = await openRuntime(loadConfig({ ...env, LOG_LEVEL: "silent" }));
  const now = new Date();
  try {
    switch (command) {
      case "users:create": {
        const role = (opts.role ?? "editor") as "owner" | "editor" | "viewer";
        if (!["owner", "editor", "viewer"].includes(role)) throw new Error("--role must be owner, editor or viewer");
        const u = await createUser(deps.db, { email: opts.email ?? "", password: opts.password ?? "", role }, now);
        out(JSON.stringify({ id: u.id, email: u.email, role: u.role }));
        return 0;
      }
      case "keys:create": {
        const scopes = opts.scopes ? opts.scopes.split(",").map((s) => s.trim()) : [...ADMIN_SCOPES];
        const projectIds = opts.projects ? opts.projects.split(",").map((s) => s.trim()) : null;
        const { key, plaintext } = await createAdminKey(deps.db, { name: opts.name ?? "cli", scopes, project_ids: projectIds }, null, now);
        out(JSON.stringify({ ...keyToWire(key), key: plaintext }));
        return 0;
      }
      case "keys:list":
        for (const k of await listAdminKeys(deps.db, null)) out(JSON.stringify(keyToWire(k)));
        return 0;
      case "keys:revoke":
        await revokeAdminKey(deps.db, positional[0] ?? "", null, now);
        out(JSON.stringify({ revoked: positional[0] }));
        return 0;
      default:
        out(USAGE);
        return 2;
    }
  } catch (err) {
    out(`error: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    await deps.dbHandle.close();
  }
}

if (import.meta.main) {
  process.exit(await runCli(process.argv.slice(2), process.env, (s) => console.log(s)));
}
