// The project's activity screen (/studio/p/{slug}/activity): every write, newest first (when, who,
// the operation, what it acted on, linked to the page), filtered by the API's own filters (who:
// actor_kind and actor_id; the page: node_id; a time range: from, to) and paged ("Load more").
import { useInfiniteQuery, useQueries, useQuery } from "@tanstack/react-query";
import { Link, useParams } from "@tanstack/react-router";
import { useId, useMemo, useState } from "react";
import { Button, Label, ListBox, ListBoxItem, Popover, Select, SelectValue } from "react-aria-components";
import type { z } from "zod";
import type { ActivityOut } from "../../../src/activity/model";
import { ApiError, messageOf, projectBase, request } from "../app/api";
import { operationWords } from "../app/docs";
import { canPublish, nodeQuery, useMe } from "../app/queries";
import { WhenText, WhoText, whoOf } from "../history/actor";
import { NodePicker } from "../history/NodePicker";
import { UndoAgent } from "../history/UndoAgent";
import "../history/history.css";

type Entry = z.output<typeof ActivityOut>;

interface ActivityPage {
  data: Entry[];
  total: number;
  page: number;
  per_page: number;
}

const PER_PAGE = 50;

/** The "Who" choices: anyone, a kind of actor, or one actor (kind and id), as Select keys. */
const KIND_CHOICES = [
  ["any", "Anyone"],
  ["kind:user", "People (studio)"],
  ["kind:mcp_token", "Agents: MCP tokens"],
  ["kind:oauth", "Agents: OAuth clients"],
  ["kind:admin_key", "Admin keys"],
  ["kind:scheduler", "The scheduler"],
  ["kind:system", "The system"],
] as const;

interface Filters {
  who: string;
  node: { id: string; title: string; path: string } | null;
  from: string;
  to: string;
}

const EMPTY: Filters = { who: "any", node: null, from: "", to: "" };

/** An <input type="datetime-local"> value (local time) as ISO 8601 with its offset; "" when unset or unreadable. */
function isoOf(local: string): string {
  if (!local) return "";
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? "" : d.toISOString();
}

function queryOf(f: Filters): URLSearchParams {
  const q = new URLSearchParams({ per_page: String(PER_PAGE) });
  if (f.who.startsWith("kind:")) q.set("actor_kind", f.who.slice(5));
  else if (f.who.startsWith("one:")) {
    const [, kind = "", ...id] = f.who.split(":");
    q.set("actor_kind", kind);
    q.set("actor_id", id.join(":"));
  }
  if (f.node) q.set("node_id", f.node.id);
  const from = isoOf(f.from);
  const to = isoOf(f.to);
  if (from) q.set("from", from);
  if (to) q.set("to", to);
  return q;
}

/** The id an actor is filtered by: the person's for a user or an OAuth grant, the credential's otherwise. */
const actorIdOf = (a: Entry["actor"]): string | null => (a.kind === "user" || a.kind === "oauth" ? (a.user?.id ?? a.id) : a.id);

export function ActivityPage() {
  const { slug } = useParams({ from: "/p/$slug/activity" });
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const set = (patch: Partial<Filters>) => setFilters((f) => ({ ...f, ...patch }));
  const fromId = useId();
  const toId = useId();
  const params = queryOf(filters);
  const filtered = params.toString() !== queryOf(EMPTY).toString();
  // One MCP token chosen: its changes in the range can be undone (content:publish).
  const agentToken = filters.who.startsWith("one:mcp_token:") ? filters.who.slice("one:mcp_token:".length) : null;
  const me = useMe(slug);

  const activity = useInfiniteQuery({
    queryKey: ["activity", slug, params.toString()],
    queryFn: ({ pageParam }) => request<ActivityPage>(`${projectBase(slug)}/activity?${params}&page=${pageParam}`).then((r) => r.body),
    initialPageParam: 1,
    getNextPageParam: (last) => (last.page * last.per_page < last.total ? last.page + 1 : undefined),
    staleTime: 0,
  });
  const entries = activity.data?.pages.flatMap((p) => p.data) ?? [];
  const total = activity.data?.pages[0]?.total ?? 0;

  // The actors of the recent activity, each a choice of its own.
  const recent = useQuery({
    queryKey: ["activity", slug, "actors"],
    queryFn: () => request<ActivityPage>(`${projectBase(slug)}/activity?per_page=100`).then((r) => r.body.data),
    staleTime: 30_000,
  });
  const actorChoices = useMemo(() => {
    const seen = new Map<string, string>();
    for (const e of recent.data ?? []) {
      const id = actorIdOf(e.actor);
      if (!id) continue;
      const key = `one:${e.actor.kind}:${id}`;
      if (!seen.has(key)) {
        const who = whoOf(e.actor);
        seen.set(key, `${who.label} (${who.tag})`);
      }
    }
    return [...seen];
  }, [recent.data]);
  const choices: Array<{ id: string; label: string }> = [...KIND_CHOICES, ...actorChoices].map(([id, label]) => ({ id, label }));
  if (!choices.some((c) => c.id === filters.who)) choices.push({ id: filters.who, label: filters.who });

  // The titles of the pages the entries name (a deleted page answers 404).
  const nodeIds = [...new Set(entries.flatMap((e) => (e.node_id ? [e.node_id] : [])))];
  const nodes = useQueries({ queries: nodeIds.map((id) => ({ ...nodeQuery(slug, id), retry: false, staleTime: 30_000 })) });
  const titles = new Map<string, { title: string } | "gone">();
  nodeIds.forEach((id, i) => {
    const q = nodes[i];
    if (q?.data) titles.set(id, { title: q.data.title });
    else if (q?.error instanceof ApiError && q.error.status === 404) titles.set(id, "gone");
  });

  return (
    <main className="editor-pane st-history-page" id="main">
      <h1>Activity</h1>
      <form className="st-activity-filters" aria-label="Filter the activity" onSubmit={(e) => e.preventDefault()}>
        <Select className="st-field" selectedKey={filters.who} onSelectionChange={(k) => k !== null && set({ who: String(k) })}>
          <Label>Who</Label>
          <Button className="st-select-button">
            <SelectValue />
            <span aria-hidden="true">▾</span>
          </Button>
          <Popover className="st-popover">
            <ListBox className="st-listbox" items={choices}>
              {(c) => (
                <ListBoxItem id={c.id} className="st-listbox-item" textValue={c.label}>
                  {c.label}
                </ListBoxItem>
              )}
            </ListBox>
          </Popover>
        </Select>
        <NodePicker slug={slug} value={filters.node} onChange={(node) => set({ node })} />
        <div className="st-field">
          <label htmlFor={fromId}>From</label>
          <input id={fromId} className="st-input" type="datetime-local" step="1" value={filters.from} onChange={(e) => set({ from: e.currentTarget.value })} />
        </div>
        <div className="st-field">
          <label htmlFor={toId}>To</label>
          <input id={toId} className="st-input" type="datetime-local" step="1" value={filters.to} onChange={(e) => set({ to: e.currentTarget.value })} />
        </div>
        <Button className="st-button" onPress={() => setFilters(EMPTY)} isDisabled={!filtered}>
          Clear filters
        </Button>
        {agentToken && canPublish(me.data) && (
          <UndoAgent
            slug={slug}
            tokenId={agentToken}
            agentName={choices.find((c) => c.id === filters.who)?.label ?? "the agent"}
            since={isoOf(filters.from)}
            until={isoOf(filters.to)}
            onDone={() => void activity.refetch()}
          />
        )}
      </form>
      <p className="help">Times are in your time zone ({Intl.DateTimeFormat().resolvedOptions().timeZone}); “to” is exclusive.</p>

      {activity.isError && (
        <p role="alert" className="alert error">
          {messageOf(activity.error)}
        </p>
      )}
      {activity.isPending && <p aria-busy="true">Loading the activity…</p>}
      {activity.data && entries.length === 0 && <p className="notice">{filtered ? "Nothing matches these filters." : "Nothing has happened in this project yet."}</p>}
      {entries.length > 0 && (
        <>
          <table className="table st-activity">
            <caption className="visually-hidden">The project’s activity, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">Operation</th>
                <th scope="col">Target</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <tr key={e.id}>
                  <td>
                    <WhenText iso={e.created_at} />
                  </td>
                  <td>
                    <WhoText actor={e.actor} />
                  </td>
                  <td>
                    {operationWords(e.operation)} <code className="st-op">{e.operation}</code>
                  </td>
                  <td>
                    <Target entry={e} slug={slug} title={e.node_id ? titles.get(e.node_id) : undefined} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <p className="muted st-history-count" role="status">
            {entries.length} of {total} entries shown.
            {activity.hasNextPage && (
              <Button className="st-button small" onPress={() => void activity.fetchNextPage()} isDisabled={activity.isFetchingNextPage}>
                {activity.isFetchingNextPage ? "Loading…" : "Load more"}
              </Button>
            )}
          </p>
        </>
      )}
    </main>
  );
}

function Target({ entry, slug, title }: { entry: Entry; slug: string; title: { title: string } | "gone" | undefined }) {
  const target = (entry.target ?? {}) as Record<string, unknown>;
  const kind = typeof target.kind === "string" ? target.kind.replace(/_/g, " ") : "";
  const locale = typeof target.locale === "string" ? target.locale : null;
  if (!entry.node_id) return <span>{[kind, typeof target.id === "string" ? target.id : null].filter(Boolean).join(" ") || "—"}</span>;
  const rev = entry.revision !== null ? `, revision ${entry.revision}` : "";
  if (title === "gone")
    return (
      <span>
        a deleted page <code className="st-op">{entry.node_id}</code>
        {rev}
      </span>
    );
  return (
    <span>
      {locale && `${locale} translation of `}
      <Link to="/p/$slug/nodes/$id" params={{ slug, id: entry.node_id }} search={locale ? { locale } : {}}>
        {title ? title.title || "Untitled" : entry.node_id}
      </Link>
      {rev}
    </span>
  );
}
