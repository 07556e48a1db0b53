// Stored delivery answers (db/schema/delivery.ts, src/delivery/stored.ts) are marked by the write
// that changes what they show, in its transaction: contentWrite (./unit.ts) calls markAnswers last,
// with the nodes it changed and the pages it took away or brought (WriteLog gone/added). One
// statement whatever the number of answers it marks; rendering them again is the readers' (and the
// refresher's) work, never the write's.
//
// What an answer depends on, and what marks it:
// - the nodes it shows (the node, its ancestors for path and breadcrumbs, the nodes it references
//   for their titles and paths): `deps`, marked by a write that changes any of them;
// - which node its path names: a page brought or taken away beside it or above it (a sibling
//   taking the slug, a move, a translated slug) marks every answer under that page's parent
//   (`watch` holds the answer's own path and its prefixes); a page at the root has the whole
//   project as its parent: the project's epoch moves instead (one row);
// - references whose path or visibility may change with any page brought or taken away: "*ref";
// - everything else (project settings, the theme, media, the model): the project's epoch moves.
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sqlArray } from "../lib/sql";

/** The watch entry of a base path ("" is the root), or of REF_WATCH, within a project: GIN entries of one project never match another's. */
export const watchKey = (projectId: string, path: string): string => `${projectId} ${path}`;
/** Watched by answers that reference nodes: a page brought or taken away may change a reference's path or visibility. */
export const REF_WATCH = "*ref";

/** The watch entries of an answer about the page at `path` (base path): the path and each of its prefixes. */
export function pathWatch(projectId: string, path: string): string[] {
  const out: string[] = [];
  let at = path.indexOf("/");
  while (at > 0) {
    out.push(watchKey(projectId, path.slice(0, at)));
    at = path.indexOf("/", at + 1);
  }
  if (path !== "") out.push(watchKey(projectId, path));
  return out;
}

const parentOf = (path: string): string => {
  const at = path.lastIndexOf("/");
  return at < 0 ? "" : path.slice(0, at);
};

/**
 * Marks the project's stored answers a write changes (see above): the `nodes` it changed and the
 * `paths` (base paths) it took away or brought. A write that changed no node may change any answer
 * (the epoch moves).
 */
export async function markAnswers(tx: Db, projectId: string, nodes: ReadonlySet<string>, paths: readonly string[]): Promise<void> {
  if (nodes.size === 0 || paths.some((p) => p === "" || !p.includes("/"))) {
    await tx.execute(sql`update projects set render_epoch = render_epoch + 1 where id = ${projectId}`);
    return;
  }
  const watch = new Set<string>();
  for (const p of paths) {
    watch.add(watchKey(projectId, p));
    watch.add(watchKey(projectId, parentOf(p)));
  }
  if (paths.length > 0) watch.add(watchKey(projectId, REF_WATCH));
  await tx.execute(sql`update delivery_answers set stale = true
    where project_id = ${projectId} and not stale and (deps && ${sqlArray(nodes, "uuid")} or watch && ${sqlArray(watch, "text")})`);
}
