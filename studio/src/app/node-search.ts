// What the node-reference picker lists for what was typed: pages whose title holds it (list_nodes'
// q: any part of a word, as a title is typed), then pages the admin search finds by their text
// (search_content: ranked, stemmed, drafts included). The search alone would miss a title being
// typed ("Our t": a stop word and one letter); the title filter alone, a page known by what it says.
import { projectBase, request } from "./api";
import type { NodeOption } from "./formApi";
import type { NodeList, SearchHit } from "./types";

/** Options the picker shows at most. */
const PICKER_SIZE = 20;

export async function searchNodeOptions(slug: string, typed: string): Promise<NodeOption[]> {
  const q = typed.trim();
  const titles = new URLSearchParams({ per_page: String(PICKER_SIZE) });
  if (q) titles.set("q", q);
  const byTitle = request<NodeList>(`${projectBase(slug)}/nodes?${titles}`);
  // Nothing typed: the first pages, to browse (an empty search finds nothing).
  if (!q) return (await byTitle).body.data.map(({ id, title, path }) => ({ id, title, path }));
  const text = new URLSearchParams({ query: q, limit: String(PICKER_SIZE) });
  const [listed, found] = await Promise.all([byTitle, request<{ data: SearchHit[] }>(`${projectBase(slug)}/search?${text}`)]);
  const options = new Map<string, NodeOption>();
  for (const { id, title, path } of [...listed.body.data, ...found.body.data]) if (!options.has(id)) options.set(id, { id, title, path });
  return [...options.values()].slice(0, PICKER_SIZE);
}
