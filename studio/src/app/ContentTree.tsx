// The project's content tree, a WAI-ARIA APG tree view: role="tree" of role="treeitem"s, nested
// levels in role="group", one tab stop (roving tabindex) and the arrow keys. Only the levels a person
// expands are fetched (100 at a time, with a "Load more" item), so a project of 10,000 nodes opens
// as fast as one of ten. The filter searches titles and text (the admin search, search_content:
// ranked, drafts included) and shows the matches as a flat list, as does the toggle `Unreviewed
// agent changes` (list_nodes' agent_changes: nodes an agent changed after a person last saved them;
// with a filter, list_nodes' q narrows those by title).
import { useQueries, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { type KeyboardEvent, type MouseEvent, memo, type ReactNode, useCallback, useEffect, useId, useRef, useState } from "react";
import { Button, Input, Label, SearchField, ToggleButton } from "react-aria-components";
import "../editorial/editorial.css";
import { messageOf, projectBase, request } from "./api";
import { NewPageButton } from "./NewPageDialog";
import { BADGE_LABEL, type BadgeState, badgeOf, keys, nodeQuery, nodeTypeOf, useModel } from "./queries";
import type { Node, NodeList, SearchHit } from "./types";

const PER_PAGE = 100;
/** Matches per page of the filter (the admin search answers at most 50). */
const SEARCH_PAGE = 50;

interface Level {
  nodes: Node[];
  total: number | null;
  loading: boolean;
  error: unknown;
}

/** One item of the tree as shown: a node, or a level's "Load more", "Loading…" or error item. */
interface Entry {
  key: string;
  kind: "node" | "more" | "loading" | "error";
  /** The parent id the item's level lists ("root", a node id, or "*" for the filter's matches). */
  parent: string;
  /** The key of the item this one is nested in, null at the top. */
  parentKey: string | null;
  level: number;
  posinset: number;
  setsize: number;
  node: Node | null;
  text: string;
  expandable: boolean;
  expanded: boolean;
  children: Entry[] | null;
}

export function ContentTree({ slug, currentId, locale, canCreate }: { slug: string; currentId: string | null; locale: string | undefined; canCreate: boolean }) {
  const qc = useQueryClient();
  const navigate = useNavigate();
  const model = useModel(slug);
  const idPrefix = useId();
  const [filter, setFilter] = useState("");
  const q = useDebounced(filter.trim(), 250);
  const [agentOnly, setAgentOnly] = useState(false);
  /** The flat list's level: the title filter's matches, the unreviewed agent changes, or both. */
  const flat = q || agentOnly ? (agentOnly ? "*agent" : "*") : null;
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(() => new Set());
  const [pages, setPages] = useState<Record<string, number>>({});
  const [focusedKey, setFocusedKey] = useState<string | null>(null);
  const treeRef = useRef<HTMLDivElement>(null);
  /** After "Load more": the first newly loaded item of that level takes the focus. */
  const pendingFocus = useRef<{ parent: string; index: number } | null>(null);
  const typeahead = useRef({ text: "", at: 0 });

  // Deep links: the ancestors of the open node are expanded, so it shows in the tree.
  const revealed = useRef<string | null>(null);
  useEffect(() => {
    if (!currentId || revealed.current === currentId) return;
    revealed.current = currentId;
    let cancelled = false;
    void (async () => {
      const ancestors: string[] = [];
      try {
        let node = await qc.fetchQuery(nodeQuery(slug, currentId));
        for (let depth = 0; node.parent_id && depth < 32; depth++) {
          ancestors.push(node.parent_id);
          node = await qc.fetchQuery(nodeQuery(slug, node.parent_id));
        }
      } catch {
        // The editor reports a node that cannot be read.
      }
      if (!cancelled && ancestors.length > 0) setExpanded((prev) => new Set([...prev, ...ancestors]));
    })();
    return () => {
      cancelled = true;
    };
  }, [currentId, slug, qc]);

  // ---- The loaded levels: the top level (or the filter's matches) and each expanded node's children.
  const parents = flat ? [flat] : ["root", ...expanded];
  const specs = parents.flatMap((parent) => Array.from({ length: pages[`${parent}|${q}`] ?? 1 }, (_, i) => ({ parent, page: i + 1 })));
  const results = useQueries({
    queries: specs.map(({ parent, page }) => ({
      queryKey: keys.nodeList(slug, parent, q, page),
      queryFn: ({ signal }: { signal: AbortSignal }) => {
        if (parent === "*") return searchLevel(slug, q, page, signal);
        const params = new URLSearchParams({ per_page: String(PER_PAGE), page: String(page) });
        if (!parent.startsWith("*")) {
          params.set("parent_id", parent);
          params.set("sort", "position"); // siblings in their order; the filter's matches by path
        }
        if (q) params.set("q", q);
        if (parent === "*agent") params.set("agent_changes", "true");
        return request<NodeList>(`${projectBase(slug)}/nodes?${params}`, { signal }).then((r) => r.body);
      },
      staleTime: 15_000,
    })),
  });

  const levels = new Map<string, Level>();
  specs.forEach(({ parent }, i) => {
    const r = results[i];
    const level = levels.get(parent) ?? { nodes: [], total: null, loading: false, error: null };
    if (r?.data) {
      level.nodes.push(...r.data.data);
      level.total = r.data.total;
    }
    if (r?.isPending) level.loading = true;
    if (r?.error) level.error = r.error;
    levels.set(parent, level);
  });

  const mayHaveChildren = (n: Node): boolean => {
    const t = nodeTypeOf(model.data, n.type);
    if (t?.children && t.children.length === 0) return false;
    const loaded = levels.get(n.id);
    return !(loaded && !loaded.loading && loaded.total === 0);
  };

  const build = (parent: string, depth: number, parentKey: string | null): Entry[] => {
    const level = levels.get(parent);
    const out: Entry[] = [];
    const base = { parent, parentKey, level: depth, posinset: 0, setsize: 0, expandable: false, expanded: false, children: null };
    for (const n of level?.nodes ?? []) {
      const expandable = !flat && mayHaveChildren(n);
      const open = expandable && expanded.has(n.id);
      out.push({ ...base, key: n.id, kind: "node", node: n, text: n.title, expandable, expanded: open, children: open ? build(n.id, depth + 1, n.id) : null });
    }
    const loadingMore = !!level?.loading && level.nodes.length > 0;
    if (!level || (level.loading && !loadingMore)) out.push({ ...base, key: `loading:${parent}`, kind: "loading", node: null, text: "Loading…" });
    else if (level.error) out.push({ ...base, key: `error:${parent}`, kind: "error", node: null, text: messageOf(level.error) });
    else if (loadingMore || (level.total !== null && level.nodes.length < level.total))
      // One key while it loads and after, so the focus stays on it.
      out.push({ ...base, key: `more:${parent}`, kind: "more", node: null, text: loadingMore ? "Loading more…" : "Load more" });
    out.forEach((e, i) => {
      e.posinset = i + 1;
      e.setsize = out.length;
    });
    return out;
  };

  const top = flat ?? "root";
  const entries = build(top, 1, null);
  const visible: Entry[] = [];
  const walk = (list: Entry[]) => {
    for (const e of list) {
      visible.push(e);
      if (e.children) walk(e.children);
    }
  };
  walk(entries);

  // The one tab stop: the focused item, else the open node, else the first item.
  const tabKey = visible.find((e) => e.key === focusedKey)?.key ?? visible.find((e) => e.key === currentId)?.key ?? visible[0]?.key ?? null;

  const itemElement = useCallback((key: string) => treeRef.current?.querySelector<HTMLElement>(`[data-key="${CSS.escape(key)}"]`) ?? null, []);
  const focusItem = (key: string | undefined) => {
    if (!key) return;
    setFocusedKey(key);
    itemElement(key)?.focus();
  };

  // "Load more" done: its first new item takes the focus (when the focus was on "Load more").
  useEffect(() => {
    const pending = pendingFocus.current;
    if (!pending) return;
    const level = levels.get(pending.parent);
    if (!level || level.loading) return;
    pendingFocus.current = null;
    const next = level.nodes[pending.index];
    const active = document.activeElement;
    if (next && (active === document.body || active === null || treeRef.current?.contains(active))) {
      setFocusedKey(next.id);
      itemElement(next.id)?.focus();
    }
  });

  // A deep link's node is scrolled into view once it shows.
  const currentShown = visible.some((e) => e.key === currentId);
  const scrolledTo = useRef<string | null>(null);
  useEffect(() => {
    if (!currentId || !currentShown || scrolledTo.current === currentId) return;
    scrolledTo.current = currentId;
    itemElement(currentId)?.scrollIntoView({ block: "center" });
  }, [currentId, currentShown, itemElement]);

  const setOpen = (key: string, open: boolean) =>
    setExpanded((prev) => {
      if (prev.has(key) === open) return prev;
      const next = new Set(prev);
      if (open) next.add(key);
      else next.delete(key);
      return next;
    });

  const activate = (e: Entry) => {
    if (e.kind === "node") void navigate({ to: "/p/$slug/nodes/$id", params: { slug, id: e.key }, search: locale ? { locale } : {} });
    else if (e.kind === "more" && e.text === "Load more") {
      const level = levels.get(e.parent);
      pendingFocus.current = { parent: e.parent, index: level?.nodes.length ?? 0 };
      setPages((p) => ({ ...p, [`${e.parent}|${q}`]: (p[`${e.parent}|${q}`] ?? 1) + 1 }));
    }
  };

  const entryOf = (target: EventTarget): Entry | undefined => {
    const key = (target as HTMLElement).closest?.<HTMLElement>('[role="treeitem"]')?.dataset.key;
    return key === undefined ? undefined : visible.find((e) => e.key === key);
  };

  const onKeyDown = (ev: KeyboardEvent<HTMLDivElement>) => {
    const e = entryOf(ev.target);
    if (!e || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const index = visible.indexOf(e);
    let handled = true;
    switch (ev.key) {
      case "ArrowDown":
        focusItem(visible[index + 1]?.key);
        break;
      case "ArrowUp":
        focusItem(visible[index - 1]?.key);
        break;
      case "Home":
        focusItem(visible[0]?.key);
        break;
      case "End":
        focusItem(visible[visible.length - 1]?.key);
        break;
      case "ArrowRight":
        if (e.expandable && !e.expanded) setOpen(e.key, true);
        else if (e.expanded) focusItem(e.children?.[0]?.key);
        break;
      case "ArrowLeft":
        if (e.expanded) setOpen(e.key, false);
        else focusItem(e.parentKey ?? undefined);
        break;
      case "Enter":
      case " ":
        activate(e);
        break;
      default:
        handled = ev.key.length === 1 && ev.key !== " " && typeAhead(ev.key, index);
    }
    if (handled) {
      ev.preventDefault();
      ev.stopPropagation();
    }
  };

  /** The next node whose title starts with what was typed (letters typed within a moment add up). */
  const typeAhead = (char: string, index: number): boolean => {
    const t = typeahead.current;
    const now = Date.now();
    t.text = now - t.at < 700 ? t.text + char.toLowerCase() : char.toLowerCase();
    t.at = now;
    const start = t.text.length > 1 ? index : index + 1;
    for (let i = 0; i < visible.length; i++) {
      const e = visible[(start + i) % visible.length];
      if (e?.kind === "node" && e.text.toLowerCase().startsWith(t.text)) {
        focusItem(e.key);
        return true;
      }
    }
    return false;
  };

  const onClick = (ev: MouseEvent<HTMLDivElement>) => {
    const e = entryOf(ev.target);
    if (!e) return;
    setFocusedKey(e.key);
    if ((ev.target as HTMLElement).closest(".chevron")) setOpen(e.key, !e.expanded);
    else activate(e);
  };

  const renderEntries = (list: Entry[]): ReactNode =>
    list.map((e) => (
      <div
        key={e.key}
        role="treeitem"
        data-key={e.key}
        className={`tree-item${e.kind === "node" ? "" : ` tree-${e.kind}`}${e.key === currentId ? " is-current" : ""}`}
        tabIndex={e.key === tabKey ? 0 : -1}
        aria-describedby={e.node && flat ? `${idPrefix}-p-${e.key}` : undefined}
        aria-level={e.level}
        aria-setsize={e.setsize}
        aria-posinset={e.posinset}
        aria-expanded={e.expandable ? e.expanded : undefined}
        aria-selected={e.kind === "node" ? e.key === currentId : undefined}
        aria-disabled={e.kind === "loading" || e.kind === "error" || (e.kind === "more" && e.text !== "Load more") ? true : undefined}
        aria-busy={e.expanded && e.children?.[0]?.kind === "loading" ? true : undefined}
      >
        {e.node ? (
          <NodeRow id={e.key} idPrefix={idPrefix} title={e.text} path={flat ? e.node.path : null} badge={badgeOf(e.node)} level={e.level} expandable={e.expandable} expanded={e.expanded} />
        ) : (
          <SpecialRow kind={e.kind} text={e.text} level={e.level} count={specialCount(levels.get(e.parent))} />
        )}
        {e.children && (
          // biome-ignore lint/a11y/useSemanticElements: a tree's nested level is role="group" (WAI-ARIA APG tree view); a <fieldset> groups form controls.
          <div role="group">{renderEntries(e.children)}</div>
        )}
      </div>
    ));

  const topLevel = levels.get(top);
  const empty = !!topLevel && !topLevel.loading && !topLevel.error && topLevel.nodes.length === 0;

  return (
    <nav className="tree-pane" aria-label="Content">
      <div className="tree-tools">
        <SearchField className="search-field" value={filter} onChange={setFilter} aria-label="Filter by title or text">
          <Label className="visually-hidden">Filter by title or text</Label>
          <Input placeholder="Search pages" />
          {filter && (
            <Button className="search-clear" aria-label="Clear filter">
              ×
            </Button>
          )}
        </SearchField>
        {canCreate && <NewPageButton slug={slug} parentId={currentId} />}
        <ToggleButton className="st-button quiet small tree-toggle" isSelected={agentOnly} onChange={setAgentOnly}>
          Unreviewed agent changes
        </ToggleButton>
      </div>
      <div className="tree-scroll">
        {empty ? (
          <p className="tree-empty">{agentOnly ? `No page has unreviewed agent changes${q ? ` with “${q}” in its title` : ""}.` : q ? `No page’s title contains “${q}”.` : "No pages yet."}</p>
        ) : (
          <div
            ref={treeRef}
            role="tree"
            aria-label={agentOnly ? `Pages with unreviewed agent changes${q ? `, title containing “${q}”` : ""}` : q ? `Pages whose title contains “${q}”` : "Pages"}
            className={`tree${flat ? " is-flat" : ""}`}
            onKeyDown={onKeyDown}
            onClick={onClick}
            onFocus={(ev) => {
              const key = (ev.target as HTMLElement).dataset.key;
              if (key !== undefined && key !== focusedKey) setFocusedKey(key);
            }}
          >
            {renderEntries(entries)}
          </div>
        )}
      </div>
    </nav>
  );
}

const specialCount = (level: Level | undefined) => (level && level.total !== null ? `${level.nodes.length} of ${level.total} shown` : "");

const indent = (level: number) => ({ paddingInlineStart: `${0.25 + (level - 1) * 1.1}rem` });

/**
 * A node's row: the expand arrow (for the pointer; keys use Right and Left), the title, the badge.
 * Its text names the item, "<title>, <status>" (a nested level is not part of a treeitem's name).
 */
const NodeRow = memo(function NodeRow({
  id,
  idPrefix,
  title,
  path,
  badge,
  level,
  expandable,
  expanded,
}: {
  id: string;
  idPrefix: string;
  title: string;
  path: string | null;
  badge: BadgeState;
  level: number;
  expandable: boolean;
  expanded: boolean;
}) {
  return (
    <div className="tree-row" style={indent(level)}>
      {expandable ? (
        <span className="chevron" aria-hidden="true" title={expanded ? "Collapse" : "Expand"}>
          {expanded ? "▾" : "▸"}
        </span>
      ) : (
        <span className="chevron-space" />
      )}
      <span className="tree-title">
        {title || "Untitled"}
        <span className="tree-name-sep">, </span>
        {path !== null && (
          // Its description, not part of its name.
          <span className="tree-path" id={`${idPrefix}-p-${id}`} aria-hidden="true">
            /{path}
          </span>
        )}
      </span>
      <span className={`st-badge badge-${badge}`}>{BADGE_LABEL[badge]}</span>
    </div>
  );
});

const SpecialRow = memo(function SpecialRow({ kind, text, level, count }: { kind: Entry["kind"]; text: string; level: number; count: string }) {
  return (
    <div className="tree-row" style={indent(level)}>
      <span className="chevron-space" />
      {kind === "error" ? (
        <span className="error-text">{text}</span>
      ) : kind === "more" ? (
        <span>
          {text} <span className="muted">({count})</span>
        </span>
      ) : (
        <span className="muted">{text}</span>
      )}
    </div>
  );
});

/** A page of the filter's matches: the admin search (titles and text, ranked, drafts included), as tree rows. */
async function searchLevel(slug: string, q: string, page: number, signal: AbortSignal): Promise<NodeList> {
  const params = new URLSearchParams({ query: q, limit: String(SEARCH_PAGE), page: String(page) });
  const res = await request<{ data: SearchHit[]; total: number }>(`${projectBase(slug)}/search?${params}`, { signal });
  return { data: res.body.data.map(hitNode), total: res.body.total, page, per_page: SEARCH_PAGE };
}

/** A search hit as the tree shows a node: what it lists (title, path, type, status and state); the rest is read when the node opens. */
const hitNode = (h: SearchHit): Node => ({
  id: h.id,
  project_id: "",
  parent_id: null,
  slug: h.path.slice(h.path.lastIndexOf("/") + 1),
  path: h.path,
  type: h.type,
  title: h.title,
  status: h.status as Node["status"],
  state: h.state,
  position: 0,
  seo: {},
  fields: {},
  revision: 0,
  published_at: null,
  publish_at: null,
  unpublish_at: null,
  created_at: "",
  updated_at: "",
});

function useDebounced<T>(value: T, ms: number): T {
  const [v, setV] = useState(value);
  useEffect(() => {
    const t = window.setTimeout(() => setV(value), ms);
    return () => window.clearTimeout(t);
  }, [value, ms]);
  return v;
}
