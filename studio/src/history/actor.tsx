// Who made a change, told apart: a person in the studio, an agent (an MCP token, an OAuth client
// acting for a person), an admin key, the scheduler, the system.
import type { Actor } from "../app/types";

type ActorKind = "person" | "agent" | "key" | "scheduler" | "system";

export interface Who {
  /** The name to show: an email, a token's or key's name, "<client> for <email>". */
  label: string;
  kind: ActorKind;
  /** The kind in words, shown beside the name. */
  tag: string;
}

const KIND_TAG: Record<ActorKind, string> = { person: "person", agent: "agent", key: "admin key", scheduler: "scheduler", system: "system" };

export function whoOf(actor: Actor | null | undefined): Who {
  const make = (label: string, kind: ActorKind, tag = KIND_TAG[kind]): Who => ({ label, kind, tag });
  if (!actor) return make("someone", "system", "unknown");
  const email = actor.user?.email ?? actor.name ?? null;
  switch (actor.kind) {
    case "user":
      return make(email ?? "a person", "person");
    case "oauth":
      return make(`${actor.client?.name ?? "an OAuth client"}${email ? ` for ${email}` : ""}`, "agent", "agent (OAuth)");
    case "mcp_token":
      return make(actor.name ?? "an MCP token", "agent", "agent (MCP token)");
    case "admin_key":
      return make(actor.name ?? "an admin key", "key");
    case "scheduler": {
      const by = actor.scheduled_by;
      return make(by ? `the scheduler, set by ${by.name ?? by.kind.replace(/_/g, " ")}` : "the scheduler", "scheduler");
    }
    default:
      return make("the system", "system");
  }
}

export function WhoText({ actor }: { actor: Actor | null | undefined }) {
  const who = whoOf(actor);
  return (
    <span className="st-who">
      <span className="st-who-name">{who.label}</span> <span className={`st-badge st-who-${who.kind}`}>{who.tag}</span>
    </span>
  );
}

// dateStyle and timeStyle cannot be combined with timeZoneName: the parts are named one by one.
const zoned = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" });

/** A timestamp in the person's locale and time zone, the zone named. */
export function WhenText({ iso }: { iso: string }) {
  const d = new Date(iso);
  return <time dateTime={iso}>{Number.isNaN(d.getTime()) ? iso : zoned.format(d)}</time>;
}
