// "Who wrote this": the fields an agent (an MCP token or an OAuth client) changed after the last
// change a person made in the studio (GET /admin/p/{ref}/nodes/{id}/agent-changes): each field
// carries a badge naming the agent (./agent-marks.tsx), and a summary above the form lists them with
// a button that takes the focus to the field and one that marks them reviewed (a save of the page).
// The list is read again at each new revision, so a person's save (the server counts it as a
// review) empties it.
import { useQuery } from "@tanstack/react-query";
import { Button } from "react-aria-components";
import { ApiError, data, nodeUrl } from "../app/api";
import { labelOf, propertiesOf } from "../fields/schema";
import { parsePointer } from "../form/pointer";
import "./editorial.css";

interface AgentActor {
  kind: string;
  id: string | null;
  name: string | null;
  user?: { id: string; email: string | null } | null;
  client?: { id: string; name: string | null } | null;
}
interface AgentChange {
  pointer: string;
  revision: number;
  actor: AgentActor;
}

type Schema = Record<string, unknown>;

/** An agent as a person reads it: the token's name, or the OAuth client's name (and for whom). */
export function agentName(a: AgentActor): string {
  if (a.kind === "oauth") {
    const client = a.client?.name ?? a.client?.id ?? "an OAuth client";
    const who = a.user?.email ?? a.name;
    return who ? `${client} (for ${who})` : client;
  }
  return a.name ?? a.id ?? "an agent";
}

/** The label of the field a pointer names: its schema title or property name, Title, Slug, Block n. */
function fieldLabel(pointer: string, fieldsSchema: Schema | null, blockTypes: ReadonlyArray<{ name: string; schema: Schema }>, blockTypeAt: (i: number) => string | undefined): string {
  const [head, ...rest] = parsePointer(pointer);
  if (head === "title") return "Title";
  if (head === "slug") return "Slug";
  const walk = (schema: Schema | null, names: string[]): string[] => {
    const out: string[] = [];
    let s = schema;
    for (const n of names) {
      if (/^\d+$/.test(n)) {
        out.push(`item ${Number(n) + 1}`);
        s = s && typeof s.items === "object" && s.items !== null ? (s.items as Schema) : null;
        continue;
      }
      const sub = s ? propertiesOf(s).find(([k]) => k === n)?.[1] : undefined;
      out.push(sub ? labelOf(sub, n) : n);
      s = sub ?? null;
    }
    return out;
  };
  if (head === "seo") return ["SEO", ...rest].join(" › ");
  if (head === "fields") return rest.length === 0 ? "Fields" : walk(fieldsSchema, rest).join(" › ");
  if (head === "blocks") {
    const [index, dataKey, ...inner] = rest;
    if (index === undefined) return "Blocks";
    const i = Number(index);
    const type = blockTypeAt(i);
    const block = `Block ${i + 1}${type ? ` (${type})` : ""}`;
    if (dataKey !== "data" || inner.length === 0) return block;
    const schema = blockTypes.find((b) => b.name === type)?.schema ?? null;
    return `${block} › ${walk(schema, inner).join(" › ")}`;
  }
  return pointer;
}

/** The element that carries the field's data-pointer: the pointer's own, else its nearest ancestor's. */
function frameOf(pointer: string): HTMLElement | null {
  for (let p = pointer; p !== ""; p = p.slice(0, p.lastIndexOf("/"))) {
    const el = document.querySelector<HTMLElement>(`[data-pointer="${CSS.escape(p)}"]`);
    if (el) return el;
  }
  return null;
}

const FOCUSABLE = 'input:not([type="hidden"]), textarea, select, [contenteditable="true"], [role="spinbutton"], [role="textbox"], button, [tabindex]:not([tabindex="-1"])';

/** Focuses the field's control (or its frame), scrolled into view. */
function focusField(pointer: string): void {
  const frame = frameOf(pointer);
  if (!frame) return;
  const target = frame.matches(FOCUSABLE) ? frame : (frame.querySelector<HTMLElement>(FOCUSABLE) ?? frame);
  if (target === frame && !frame.hasAttribute("tabindex") && !frame.matches(FOCUSABLE)) frame.tabIndex = -1;
  target.scrollIntoView({ block: "center" });
  target.focus({ preventScroll: true });
}

async function readAgentChanges(slug: string, nodeId: string): Promise<AgentChange[] | null> {
  try {
    // The answer's data is the list (the brief's contract wrapped it as { changes }: both are read).
    const answer = await data<AgentChange[] | { changes: AgentChange[] }>(`${nodeUrl(slug, nodeId)}/agent-changes`);
    return Array.isArray(answer) ? answer : answer.changes;
  } catch (err) {
    // A server without the route shows nothing (a node gone is the editor's to report).
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

const NONE: readonly AgentChange[] = [];

/** The agents' changes since a person last saved, read again at each revision (the same empty list while none: the marks' context stays put). */
export function useAgentChanges(slug: string, nodeId: string, revision: number): readonly AgentChange[] {
  const changes = useQuery({ queryKey: ["agent-changes", slug, nodeId, revision], queryFn: () => readAgentChanges(slug, nodeId), staleTime: 0 });
  return changes.data ?? NONE;
}

export function AgentChanges({
  list,
  fieldsSchema,
  blockTypes,
  blockTypeAt,
  onReviewed,
}: {
  list: readonly AgentChange[];
  fieldsSchema: Schema | null;
  blockTypes: ReadonlyArray<{ name: string; schema: Schema }>;
  blockTypeAt: (i: number) => string | undefined;
  /** Marks them reviewed (saves the page as the form holds it); absent for a reader who may not save. */
  onReviewed?: () => void;
}) {
  if (list.length === 0) return null;
  return (
    <section className="ed-agent-changes" aria-labelledby="agent-changes-heading">
      <h2 id="agent-changes-heading">Changed by agents since a person last saved</h2>
      <ul>
        {list.map((c) => {
          const label = fieldLabel(c.pointer, fieldsSchema, blockTypes, blockTypeAt);
          const who = agentName(c.actor);
          return (
            <li key={c.pointer} className="ed-agent-change">
              <span className="ed-agent-field">{label}</span>
              <span className="st-badge badge-agent">Changed by {who}</span>
              <span className="muted">revision {c.revision}</span>
              <Button className="st-button quiet small" aria-label={`Go to field: ${label} (changed by ${who})`} onPress={() => focusField(c.pointer)}>
                Go to field
              </Button>
            </li>
          );
        })}
      </ul>
      {onReviewed && (
        <div className="panel-actions">
          <Button className="st-button small" onPress={onReviewed}>
            Mark as reviewed
          </Button>
          <span className="muted">Saves the page as the form shows it, as your change: the badges go.</span>
        </div>
      )}
    </section>
  );
}
