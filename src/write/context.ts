// The write context: what the write path needs to know of the operation a write runs under. The
// operation unit (src/core/operation.ts, runOperation) builds one per call and hands it to the
// operation's `run`, which passes it to the services that write, which pass it to contentWrite.
// A write the service makes itself (the scheduler) or one made outside any operation (the demo
// seed, the CLI, scripts) builds its own with serviceWrite or systemWrite.
import type { Actor } from "../../db/schema";
import type { AdminCaller, McpCaller } from "../lib/caller";

/** What a dry run answers for each node the write would change: its revision before and after, and a field-level diff. */
export interface NodeChange {
  readonly node_id: string;
  readonly operation: string;
  readonly revision_before: number | null;
  readonly revision_after: number | null;
  readonly deleted?: true;
  /** The write published the node: the diff is between its published version before and the one published. */
  readonly published?: true;
  readonly diff: ReadonlyArray<{ readonly path: string; readonly before?: unknown; readonly after?: unknown }>;
}

export interface WriteContext {
  /** The operation's name; null outside one, where a change is named after what the service reported. */
  readonly operation: string | null;
  /** Who writes, as revisions, activity entries, schedules and approvals record it. */
  readonly actor: Actor;
  /** The revision the caller last read of the node the operation writes (expected_revision, If-Match), checked once by the write path. */
  readonly expected: { readonly nodeId: string; readonly revision: number } | null;
  /** Set by the write path: the expectation was checked (a second write of the same operation is not held to it), an activity entry was written. */
  readonly state: { checked: boolean; recorded: boolean };
  /** A dry run: the write path reports each node's change here; the operation unit rolls everything back. */
  readonly dryRun: { readonly changes: NodeChange[] } | null;
}

const STUDIO_CLIENT = { id: "studio", name: "studio" } as const;
const SYSTEM: Actor = { kind: "system", id: null, name: null };

/** A caller's operation: built by the operation unit. */
export function operationWrite(operation: string, caller: AdminCaller | McpCaller, expected: WriteContext["expected"], dryRun: boolean): WriteContext {
  return { operation, actor: actorOf(caller), expected, state: { checked: false, recorded: false }, dryRun: dryRun ? { changes: [] } : null };
}

/** A write the service makes on its own (the scheduler): named `operation`, recorded as `actor`. */
export const serviceWrite = (operation: string, actor: Actor): WriteContext => ({ operation, actor, expected: null, state: { checked: false, recorded: false }, dryRun: null });

/** A write outside any operation (the demo seed, the CLI, scripts): the system's, named after what it changed. */
export const systemWrite = (): WriteContext => ({ operation: null, actor: SYSTEM, expected: null, state: { checked: false, recorded: false }, dryRun: null });

/** The actor a caller's writes are recorded under, with the names the credential lookup read (src/auth.ts). */
export function actorOf(caller: AdminCaller | McpCaller): Actor {
  if (caller.kind === "admin_key") return { kind: "admin_key", id: caller.keyId, name: caller.keyName ?? null };
  // A person in the studio: a user, the client named `studio` (history tells a person from an agent).
  if (caller.kind === "studio") return { kind: "user", id: caller.userId, name: caller.userEmail, user: { id: caller.userId, email: caller.userEmail }, client: STUDIO_CLIENT };
  if (caller.kind === "mcp_token") return { kind: "mcp_token", id: caller.credentialId, name: caller.credentialName ?? null };
  return {
    kind: "oauth",
    // The user: stable across token refreshes (the access token's id is not).
    id: caller.userId ?? caller.credentialId,
    name: caller.userEmail ?? null,
    user: caller.userId ? { id: caller.userId, email: caller.userEmail ?? null } : null,
    client: caller.clientId ? { id: caller.clientId, name: caller.clientName ?? null } : null,
  };
}
