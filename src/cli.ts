// npm run cli -- <command> [--flag value]: operator tasks against the configured database.
import { join } from "node:path";
import { resealProviderKeys } from "./ai/service";
import { loadConfig } from "./config";
import { createAdminKey, keyToWire, listAdminKeys, revokeAdminKey } from "./keys/service";
import { ADMIN_SCOPES } from "./lib/scopes";
import { generateKeyEntry, loadKeyFile } from "./lib/seal";
import { openRuntime } from "./runtime";
import { createUser } from "./users/service";

const USAGE = `usage: npm run cli -- <command>
  users:create --email E [--password P] [--role owner|editor|viewer]   (password from stdin when omitted)
  keys:create  --name N [--scopes a,b] [--projects id1,id2]
  keys:list
  keys:revoke  <id>
  secrets:generate            print a new id:base64key entry for SECRET_KEYS
  secrets:rotate [--new-key]  re-seal every provider key under the current key
                              (--new-key first adds a new current key to DATA_DIR/secret.key;
                              with SECRET_KEYS, put the new entry first yourself)`;

function flags(argv: string[]): { positional: string[]; opts: Record<string, string> } {
  const opts: Record<string, string> = {};
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? "";
    if (a.startsWith("--")) {
      const [k = "", v = ""] = a.includes("=") ? a.slice(2).split(/=(.*)/s) : [a.slice(2), argv[++i] ?? ""];
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
  if (command === "secrets:generate") {
    out(generateKeyEntry());
    return 0;
  }
  const config = loadConfig({ ...env, LOG_LEVEL: "silent" });
  if (command === "secrets:rotate" && "new-key" in opts) {
    if (config.secretKeys || config.databaseUrl === "memory://") {
      out("error: --new-key works on the DATA_DIR key file; with SECRET_KEYS, put a new entry (secrets:generate) first and run secrets:rotate");
      return 2;
    }
    loadKeyFile(join(config.dataDir, "secret.key"), { prependNew: true });
  }
  const deps = await openRuntime(config);
  const now = new Date();
  try {
    switch (command) {
      case "users:create": {
        const role = (opts.role ?? "editor") as "owner" | "editor" | "viewer";
        if (!["owner", "editor", "viewer"].includes(role)) throw new Error("--role must be owner, editor or viewer");
        // Without --password the password is read from standard input, so it stays out of `ps` and shell history.
        const password = opts.password ?? (await Bun.stdin.text()).split(/\r?\n/)[0] ?? "";
        const u = await createUser(deps.db, { email: opts.email ?? "", password, role }, now);
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
      case "secrets:rotate": {
        const report = await resealProviderKeys(deps);
        out(JSON.stringify({ current_key: deps.keyRing.currentId, ...report }));
        return report.failed.length > 0 ? 1 : 0;
      }
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
