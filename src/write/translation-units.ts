// The translated units' side of a content write (docs/translation.md): in the write's transaction,
// a node whose own content changed marks every translated unit that no longer matches its source
// stale (a translation.stale event per node and locale), a published translation's units become
// published, a discarded one's rows go. Units are defined in src/model/units.ts.
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import type { Actor } from "../../db/schema";
import { rows } from "../lib/json";
import { compiledModel } from "../model/cache";
import type { CompiledModel } from "../model/compile";
import { sourceUnits, type UnitSource } from "../model/units";
import { enqueueEvents } from "./outbox";

export const textArray = (items: readonly string[]) =>
  sql`array[${
    items.length === 0
      ? sql``
      : sql.join(
          items.map((i) => sql`${i}`),
          sql`, `,
        )
  }]::text[]`;

/** A translation published: its approved and machine units are what readers see now. */
export async function publishUnits(tx: Db, nodeId: string, locales: readonly string[]): Promise<void> {
  if (locales.length === 0) return;
  await tx.execute(sql`update translation_units set status = 'published' where node_id = ${nodeId} and locale = any(${textArray(locales)}) and status in ('approved', 'machine')`);
}

/** A translation's working copy went back to its published version: what its units were made from is no longer known. */
async function forgetUnits(tx: Db, nodeId: string, locales: readonly string[]): Promise<void> {
  if (locales.length === 0) return;
  await tx.execute(sql`delete from translation_units where node_id = ${nodeId} and locale = any(${textArray(locales)})`);
}

/**
 * Nodes whose own content a write changed (inside its transaction, from the snapshots it recorded):
 * every translated unit whose source text is no longer the one it was made from becomes stale
 * (a unit whose source is gone too), nothing else changes; a translation.stale event per node and
 * locale. Answers what was marked.
 */
async function markStale(
  tx: Db,
  projectId: string,
  model: CompiledModel,
  changed: ReadonlyArray<{ readonly id: string; readonly snapshot: Record<string, unknown> }>,
  now: Date,
  webhooks: boolean,
): Promise<Array<{ node_id: string; locale: string; pointers: string[] }>> {
  if (changed.length === 0) return [];
  const current = changed.map(({ id, snapshot }) => {
    const s = snapshot as unknown as UnitSource;
    const hashes = Object.fromEntries(
      sourceUnits({ title: String(s.title ?? ""), type: String(s.type ?? ""), seo: s.seo, fields: s.fields, blocks: s.blocks ?? [] }, model).map((u) => [u.pointer, u.hash]),
    );
    return { id, hashes };
  });
  const marked = rows<{ node_id: string; locale: string; pointer: string }>(
    await tx.execute(sql`update translation_units tu set status = 'stale', stale_since = ${now.toISOString()}::timestamptz
      from jsonb_to_recordset(${JSON.stringify(current)}::jsonb) as c(id uuid, hashes jsonb)
      where tu.node_id = c.id and tu.status <> 'stale' and coalesce(c.hashes->>tu.pointer, '') <> tu.source_hash
      returning tu.node_id, tu.locale, tu.pointer`),
  );
  if (marked.length === 0) return [];
  const byTranslation = new Map<string, { node_id: string; locale: string; pointers: string[] }>();
  for (const m of marked) {
    const key = `${m.node_id}/${m.locale}`;
    let entry = byTranslation.get(key);
    if (!entry) byTranslation.set(key, (entry = { node_id: m.node_id, locale: m.locale, pointers: [] }));
    entry.pointers.push(m.pointer);
  }
  // In a stable order (the statement's rows come in none): by node, then locale.
  const out = [...byTranslation.values()].map((e) => ({ ...e, pointers: e.pointers.sort() })).sort((a, b) => a.node_id.localeCompare(b.node_id) || a.locale.localeCompare(b.locale));
  if (webhooks) {
    const paths = new Map(changed.map(({ id, snapshot }) => [id, typeof snapshot.path === "string" ? snapshot.path : undefined]));
    await enqueueEvents(
      tx,
      projectId,
      out.map((e) => ({
        type: "translation.stale" as const,
        data: { node: { id: e.node_id, path: paths.get(e.node_id) ?? null }, locale: e.locale, pointers: e.pointers },
        path: paths.get(e.node_id),
        locale: e.locale,
      })),
    );
  }
  return out;
}

/**
 * The units' side of a content write (called by contentWrite, after the revisions are recorded):
 * nodes whose own content changed mark what no longer matches its source stale; translations the
 * write published are published; those whose working copy went back to the published version
 * (discarded) lose their rows. `settled` holds "{nodeId}/{locale}" keys, `published` node ids.
 */
export async function settleUnits(
  tx: Db,
  projectId: string,
  modelVersion: number,
  own: ReadonlyArray<{ readonly id: string; readonly snapshot: Record<string, unknown> }>,
  settled: ReadonlySet<string>,
  published: ReadonlySet<string>,
  webhooks: boolean,
  actor: Actor,
): Promise<void> {
  const locales = new Map<string, { published: string[]; discarded: string[] }>();
  for (const key of settled) {
    const at = key.indexOf("/");
    if (at < 0) continue;
    const [id, locale] = [key.slice(0, at), key.slice(at + 1)];
    let e = locales.get(id);
    if (!e) locales.set(id, (e = { published: [], discarded: [] }));
    (published.has(id) ? e.published : e.discarded).push(locale);
  }
  // Sources published (the node itself): auto-translate where the project asks for it.
  const sources = [...published].filter((id) => settled.has(id));
  // Only a node that has translations can have translated units: the others cost nothing here.
  const translated = own.filter((o) => Array.isArray(o.snapshot.translations) && o.snapshot.translations.length > 0);
  await Promise.all([
    translated.length > 0 ? markStale(tx, projectId, await compiledModel(tx, projectId, modelVersion), await withContent(tx, translated), new Date(), webhooks) : null,
    sources.length > 0 ? queueAutoTranslation(tx, projectId, sources, actor) : null,
    ...[...locales].flatMap(([id, e]) => [publishUnits(tx, id, e.published), forgetUnits(tx, id, e.discarded)]),
  ]);
}

/**
 * A source published in a project with auto_translate locales: a translation job for that node
 * alone, queued in the write's transaction (the worker lists its units when it takes it, so the
 * write pays one statement, none at all without the setting's locales).
 */
async function queueAutoTranslation(tx: Db, projectId: string, nodeIds: readonly string[], actor: Actor): Promise<void> {
  const zero = JSON.stringify({ input_tokens: 0, output_tokens: 0, calls: 0 });
  await tx.execute(sql`insert into translation_jobs (id, project_id, root_node_id, locales, status, estimate, total, usage, created_by, scope, planned, force)
    select gen_random_uuid(), p.id, n.id, p.auto_translate->'locales', 'queued', ${JSON.stringify({ input_tokens: 0, output_tokens: 0, calls: 0, cost: null })}::jsonb, 0,
      ${zero}::jsonb, ${JSON.stringify(actor)}::jsonb, 'node', false, false
    from projects p cross join unnest(${textArray(nodeIds)}::uuid[]) as n(id)
    where p.id = ${projectId} and jsonb_array_length(p.auto_translate->'locales') > 0`);
}

/**
 * The nodes' content as units are read from it: the recorded snapshot when the write path kept it
 * whole (a model check, a publication), else read (title, type, SEO, fields, blocks) in one query.
 */
async function withContent(tx: Db, own: ReadonlyArray<{ readonly id: string; readonly snapshot: Record<string, unknown> }>) {
  const whole = own.filter((o) => Array.isArray(o.snapshot.blocks));
  const read = own.filter((o) => !Array.isArray(o.snapshot.blocks));
  if (read.length === 0) return whole;
  const found = rows<{ id: string; snapshot: Record<string, unknown> }>(
    await tx.execute(sql`select n.id, jsonb_build_object('title', n.title, 'type', n.type, 'path', n.path, 'seo', n.seo, 'fields', n.fields,
        'blocks', coalesce((select jsonb_agg(jsonb_build_object('id', b.id, 'type', b.type, 'data', b.data) order by b."order", b.id) from blocks b where b.node_id = n.id), '[]'::jsonb)) as snapshot
      from nodes n where n.id = any(${textArray(read.map((o) => o.id))}::uuid[])`),
  );
  return [...whole, ...found];
}
