// Requests in words: who asked (an agent: an MCP token, or an OAuth client acting for a person),
// what it asked, and what approving it does.
import type { Actor } from "../app/types";
import type { Approval, ApprovalStatus } from "./types";

/** The agent that asked: the MCP token's name, or "<client> for <email>" for an OAuth grant. */
export function agentOf(actor: Actor | null | undefined): { name: string; kind: string } {
  if (!actor) return { name: "an unknown agent", kind: "agent" };
  if (actor.kind === "mcp_token") return { name: actor.name ?? "a deleted MCP token", kind: "MCP token" };
  if (actor.kind === "oauth") {
    const client = actor.client?.name ?? "an OAuth application";
    const person = actor.user?.email ?? actor.name;
    return { name: person ? `${client} for ${person}` : client, kind: "OAuth application" };
  }
  if (actor.kind === "user") return { name: actor.user?.email ?? actor.name ?? "a person", kind: "person" };
  if (actor.kind === "admin_key") return { name: actor.name ?? "an admin key", kind: "admin key" };
  return { name: actor.kind.replace(/_/g, " "), kind: actor.kind.replace(/_/g, " ") };
}

const VERBS: Record<string, string> = {
  publish_node: "Publish",
  unpublish_node: "Unpublish",
  archive_node: "Archive",
  restore_node: "Restore",
  delete_node: "Delete",
  restore_revision: "Restore a revision",
  schedule_node: "Schedule",
};

/** The operation as a short verb phrase ("Publish"); unknown ones by their name. */
export const verbOf = (operation: string): string => VERBS[operation] ?? operation.replace(/_/g, " ");

export const STATUS_WORDS: Record<ApprovalStatus, string> = {
  pending: "Pending",
  approved: "Approved",
  rejected: "Rejected",
  partial: "Approved in part",
  expired: "Expired",
  void: "Void",
  used: "Used",
};

export const STATUS_HELP: Record<ApprovalStatus, string> = {
  pending: "waiting for a person to decide",
  approved: "approved: the agent’s retry of the same call carries it out, once",
  rejected: "rejected: the agent’s retry hears so, with the note",
  partial: "the accepted parts were published; the agent’s retry hears what was left out, with the note",
  expired: "nobody decided in time",
  void: "the page changed after the agent asked: the agent must ask again",
  used: "carried out, or the decision answered",
};

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/**
 * What carrying the request out does, in plain words, for operations whose effect is not a content
 * diff (delete, unpublish, archive, restore…); null for publish_node, whose diff says it.
 */
export function consequenceOf(a: Approval, path: string | null): string | null {
  const args = (a.arguments ?? {}) as Record<string, unknown>;
  const where = path ? ` (/${path})` : "";
  const locale = str(args.locale);
  switch (a.operation) {
    case "publish_node":
      return null;
    case "delete_node":
      return `The page${where} and every page below it go to the trash: the site stops serving them at once. They can be restored from the trash.`;
    case "unpublish_node":
      return locale
        ? `The ${locale} translation is taken off the site; the page in other languages stays published.`
        : `The page${where} is taken off the site: readers get “not found” there. Its content stays as a draft.`;
    case "archive_node":
      return `The page${where} is archived: taken off the site and hidden from lists. It can be restored later.`;
    case "restore_node":
      return `The archived page${where} comes back as a draft: nothing is published.`;
    case "restore_revision": {
      const revision = typeof args.revision === "number" ? ` revision ${args.revision}` : " an older revision";
      return `The page's content is replaced by${revision} (brought back from the trash when it is there). Only published if that revision was.`;
    }
    case "schedule_node": {
      const parts: string[] = [];
      if ("publish_at" in args) parts.push(args.publish_at === null ? "its scheduled publication is cleared" : `it is published at ${String(args.publish_at)}`);
      if ("unpublish_at" in args) parts.push(args.unpublish_at === null ? "its scheduled unpublication is cleared" : `it is taken off the site at ${String(args.unpublish_at)}`);
      const what = locale ? `The ${locale} translation` : "The page";
      return parts.length > 0 ? `${what}'s schedule changes: ${parts.join("; ")}.` : `${what}'s schedule is cleared.`;
    }
    default:
      return `The agent asks to run ${a.operation} on this page.`;
  }
}

/** The arguments worth showing beside the operation (not the node, which the request names). */
export function extraArguments(a: Approval): Array<[string, string]> {
  const args = (a.arguments ?? {}) as Record<string, unknown>;
  return Object.entries(args)
    .filter(([k]) => k !== "node_id")
    .map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]);
}
