// npm run cli -- <command> [--flag value]: operator tasks against the configured database.

import type { Db } from "../db/client";
import type { Project } from "../db/schema";
import { resealProviderKeys } from "./ai/service";
import { type Config, loadConfig } from "./config";
import type { AppDeps } from "./core/deps";
import { activityOf, type Operation } from "./core/operation";
import { createAdminKey, keyToWire, listAdminKeys, revokeAdminKey } from "./keys/service";
import { ADMIN_SCOPES } from "./lib/scopes";
import { generateKeyEntry } from "./lib/seal";
import { explainStartupError } from "./lib/startup-errors";
import { compiledModel } from "./model/cache";
import { modelTypeScript } from "./model/types";
import { OPERATIONS } from "./operations";
import { stdinText } from "./platform/files";
import { isEntry } from "./platform/runtime";
import { findProject } from "./projects/service";
import { openRuntime } from "./runtime";
import { reindexProject } from "./search/reindex";
import { listMembers, removeMember, setMember } from "./users/membership";
import { addUser, deleteUser, findUserByEmail, listUsers, updateUser } from "./users/service";
import { recordOperationActivity } from "./write/activity";
import { systemWrite } from "./write/context";

const USAGE = `usage: npm run cli -- <command>
  users:create --email E [--password P] [--role owner|member]   (password from stdin when omitted)
  users:list
  users:update <id|email> [--email E] [--role owner|member] [--password P | --password-stdin]
  users:delete <id|email>
  members:list   <project id|slug>
  members:set    <project id|slug> <user id|email> --role viewer|editor|admin
  members:remove <project id|slug> <user id|email>
  keys:create  --name N [--scopes a,b] [--projects id1,id2]
  keys:list
  keys:revoke  <id>
  model:types --project <id|slug>   print the TypeScript types of the project's delivery answers
  search:reindex --project <id|slug>   rebuild the project's search index (after an upgrade)
  secrets:generate            print a new id:base64key entry for SECRET_KEYS
  secrets:rotate [--new-key]  re-seal every provider key under the current key
                              (--new-key first adds a new current key to DATA_DIR/secret.key;
                              with SECRET_KEYS, put the new entry first yourself)`;

/** Flags that take no value: the next word stays an argument of its own. */
const SWITCHES = new Set(["new-key", "password-stdin"]);

interface Flags {
  positional: string[];
  opts: Record<string, string>;
}

function flags(argv: string[]): Flags {
  const opts: Record<string, string> = {};
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? "";
    const [, k, eq, v] = /^--([^=]*)(=?)(.*)$/s.exec(a) ?? [];
    if (k === undefined) positional.push(a);
    else opts[k] = eq ? (v ?? "") : SWITCHES.has(k) ? "" : (argv[++i] ?? "");
  }
  return { positional, opts };
}

// Users by id or email, projects by id or slug: the operator's words, resolved before the service call.
async function userIdOf(db: Db, ref: string | undefined): Promise<string> {
  if (ref?.includes("@")) return (await findUserByEmail(db, ref))?.id ?? "unknown";
  return ref ?? "";
}

function operation(name: string): Operation {
  const op = OPERATIONS.find((o) => o.name === name);
  if (!op) throw new Error(`no operation ${name}`);
  return op;
}

async function projectOf(db: Db, ref: string | undefined): Promise<Project> {
  const p = await findProject(db, ref ?? "");
  if (!p) throw new Error("project not found");
  return p;
}

export async function runCli(argv: string[], env: Record<string, string | undefined>, out: (s: string) => void): Promise<number> {
  const [command, ...rest] = argv;
  const args = flags(rest);
  if (!command || command === "help" || command === "--help") {
    out(USAGE);
    return command ? 0 : 2;
  }
  if (command === "secrets:generate") {
    out(generateKeyEntry());
    return 0;
  }
  const config = loadConfig({ ...env, LOG_LEVEL: "silent" });
  const newKey = command === "secrets:rotate" && "new-key" in args.opts;
  if (newKey && (config.secretKeys || config.databaseUrl === "memory://")) {
    out("error: --new-key works on the DATA_DIR key file; with SECRET_KEYS, put a new entry (secrets:generate) first and run secrets:rotate");
    return 2;
  }
  const deps = await openForCommand(config, command, newKey, out);
  if (!deps) return 2;
  try {
    return await runCommand(deps, command, args, out);
  } catch (err) {
    out(`error: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    await deps.dbHandle.close();
  }
}

/** The configured database, opened and migrated; null (the reason told) when it cannot be. */
async function openForCommand(config: Config, command: string, newKey: boolean, out: (s: string) => void): Promise<AppDeps | null> {
  try {
    // Embedded database: the CLI takes the DATA_DIR lock like the service, so it refuses to run
    // (and never writes) while a service holds the directory. The new key, too, only under the lock.
    return await openRuntime(config, {}, { holder: `the CLI (${command})`, prependNewKey: newKey });
  } catch (err) {
    const line = explainStartupError(err, { databaseUrl: config.databaseUrl, who: "cli" });
    if (!line) throw err;
    out(`error: ${line}`);
    return null;
  }
}

/** Runs one command; its answer is printed as JSON lines, its exit code returned. */
async function runCommand(deps: AppDeps, command: string, { positional, opts }: Flags, out: (s: string) => void): Promise<number> {
  const now = new Date();
  const print = (...values: unknown[]): number => {
    for (const v of values) out(JSON.stringify(v));
    return 0;
  };
  switch (command) {
    case "users:create": {
      // Without --password the password is read from standard input, so it stays out of `ps` and shell history.
      const password = opts.password ?? (await stdinText()).split(/\r?\n/)[0] ?? "";
      return print(await addUser(deps.db, { email: opts.email ?? "", password, role: (opts.role ?? "member") as "owner" | "member" }, null, now));
    }
    case "users:list":
      return print(...(await listUsers(deps.db, null)));
    case "users:update": {
      const password = "password-stdin" in opts ? (await stdinText()).split(/\r?\n/)[0] : opts.password;
      const role = opts.role as "owner" | "member" | undefined;
      return print(await updateUser(deps.db, await userIdOf(deps.db, positional[0]), { email: opts.email, role, password }, null));
    }
    case "users:delete": {
      const id = await userIdOf(deps.db, positional[0]);
      await deleteUser(deps.db, id, null);
      return print({ deleted: id });
    }
    case "members:list":
      return print(...(await listMembers(deps.db, await projectOf(deps.db, positional[0]))));
    // Member writes are in the project's activity log as the system's (the operator's) writes.
    case "members:set": {
      const project = await projectOf(deps.db, positional[0]);
      const input = { user_id: await userIdOf(deps.db, positional[1]), role: opts.role ?? "" };
      const member = await setMember(deps.db, project, input.user_id, input.role, null, now);
      await recordOperationActivity(deps.db, systemWrite(), activityOf(operation("set_member")), project.id, input, member);
      return print(member);
    }
    case "members:remove": {
      const project = await projectOf(deps.db, positional[0]);
      const userId = await userIdOf(deps.db, positional[1]);
      await removeMember(deps.db, project, userId);
      await recordOperationActivity(deps.db, systemWrite(), activityOf(operation("remove_member")), project.id, { user_id: userId }, {});
      return print({ removed: userId });
    }
    case "keys:create": {
      const scopes = opts.scopes ? opts.scopes.split(",").map((s) => s.trim()) : [...ADMIN_SCOPES];
      const projectIds = opts.projects ? opts.projects.split(",").map((s) => s.trim()) : null;
      const { key, plaintext } = await createAdminKey(deps.db, { name: opts.name ?? "cli", scopes, project_ids: projectIds }, null, now);
      return print({ ...keyToWire(key), key: plaintext });
    }
    case "keys:list":
      return print(...(await listAdminKeys(deps.db, null)).map(keyToWire));
    case "keys:revoke":
      await revokeAdminKey(deps.db, positional[0] ?? "", null, now);
      return print({ revoked: positional[0] });
    case "model:types": {
      const project = await projectOf(deps.db, opts.project ?? positional[0]);
      const model = await compiledModel(deps.db, project.id, project.modelVersion);
      out(modelTypeScript(model.definition, { project: project.slug, version: model.version }));
      return 0;
    }
    case "search:reindex": {
      const project = await projectOf(deps.db, opts.project ?? positional[0]);
      return print({ project: project.slug, rows: await reindexProject(deps.db, project.id) });
    }
    case "secrets:rotate": {
      const report = await resealProviderKeys(deps);
      print({ current_key: deps.keyRing.currentId, ...report });
      return report.failed.length > 0 ? 1 : 0;
    }
    default:
      out(USAGE);
      return 2;
  }
}

if (isEntry(import.meta)) {
  process.exit(await runCli(process.argv.slice(2), process.env, (s) => console.log(s)));
}
