// GET /: where a newcomer lands (the README sends them here). A small page for browsers, JSON
// for everything else, pointing at the API explorer, health checks, the demo project's delivery
// URLs (when the demo exists) and the MCP endpoint.
import { eq } from "drizzle-orm";
import { Elysia } from "elysia";
import { projects } from "../../db/schema";
import pkg from "../../package.json" with { type: "json" };
import type { AppDeps } from "../core/deps";

export const APP_VERSION: string = pkg.version;
const DEMO_SLUG = "demo";

type HomeLink = { rel: string; href: string; title: string };

async function homeOf(deps: AppDeps): Promise<{ name: string; version: string; links: HomeLink[]; demo: HomeLink[] | null }> {
  const base = deps.config.publicUrl;
  const [demo] = await deps.db.select({ slug: projects.slug }).from(projects).where(eq(projects.slug, DEMO_SLUG)).limit(1);
  const api = `${base}/api/p/${DEMO_SLUG}`;
  return {
    name: "Content Service",
    version: APP_VERSION,
    links: [
      { rel: "studio", href: `${base}/studio/`, title: "Studio: sign in to edit and publish content" },
      { rel: "api-explorer", href: `${base}/swagger`, title: "API explorer (admin, delivery, AI)" },
      { rel: "openapi", href: `${base}/swagger/json`, title: "OpenAPI document" },
      { rel: "health", href: `${base}/healthz`, title: "Health: the process is up" },
      { rel: "ready", href: `${base}/readyz`, title: "Readiness: the database answers" },
      { rel: "mcp", href: `${base}/mcp`, title: "MCP endpoint (Streamable HTTP, OAuth 2.1 or an MCP token)" },
      { rel: "oauth-metadata", href: `${base}/.well-known/oauth-authorization-server`, title: "OAuth authorization server metadata" },
    ],
    demo: demo
      ? [
          { rel: "page", href: `${api}/nodes/by-path/home`, title: "Demo home page" },
          { rel: "page", href: `${api}/nodes/by-path/accueil?locale=fr`, title: "Demo home page in French" },
          { rel: "entries", href: `${api}/entries?collection=blog`, title: "Demo blog entries" },
          { rel: "sitemap", href: `${api}/sitemap.xml`, title: "Demo sitemap" },
          { rel: "robots", href: `${api}/robots.txt`, title: "Demo robots.txt" },
          { rel: "theme", href: `${api}/theme`, title: "Demo theme" },
        ]
      : null,
  };
}

/** HTML only when the client ranks text/html above application/json (browsers do; curl does not). */
function prefersHtml(accept: string | null): boolean {
  const best = { html: 0, json: 0 };
  for (const part of (accept ?? "").toLowerCase().split(",")) {
    const [range, ...params] = part.split(";").map((s) => s.trim());
    const q = Number(params.find((p) => p.startsWith("q="))?.slice(2) ?? 1);
    const form = range === "text/html" || range === "application/xhtml+xml" ? "html" : range === "application/json" ? "json" : null;
    if (form && Number.isFinite(q)) best[form] = Math.max(best[form], q);
  }
  return best.html > 0 && best.html > best.json;
}

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&#39;"));

const list = (links: HomeLink[]): string => `<ul>${links.map((l) => `<li><a href="${esc(l.href)}">${esc(l.title)}</a> <code>${esc(l.href)}</code></li>`).join("")}</ul>`;

const homeHtml = (home: Awaited<ReturnType<typeof homeOf>>): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${esc(home.name)} ${esc(home.version)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#222}code{color:#555;font-size:.85em}.studio a{display:inline-block;padding:.5rem 1rem;background:#1d4ed8;color:#fff;border-radius:6px;text-decoration:none;font-weight:600}</style>
</head><body>
<h1>${esc(home.name)}</h1>
<p>Version <strong>${esc(home.version)}</strong>.</p>
<p class="studio"><a href="${esc(home.links[0]?.href ?? "")}">Open the studio</a> to write and publish content (sign in with the owner's email and password the first start printed).</p>
<h2>For developers and agents</h2>
${list(home.links.slice(1))}
<h2>Demo project</h2>
${home.demo ? list(home.demo) : "<p>No demo project (it is created on the first start unless <code>SEED_DEMO=false</code>).</p>"}
</body></html>
`;

export const homeRoutes = (deps: AppDeps) =>
  new Elysia().get(
    "/",
    async ({ request }) => {
      const home = await homeOf(deps);
      const html = prefersHtml(request.headers.get("accept"));
      const headers = new Headers({ "cache-control": "no-store", vary: "Accept", "x-content-type-options": "nosniff", "content-type": `${html ? "text/html" : "application/json"}; charset=utf-8` });
      if (html) headers.set("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
      return new Response(html ? homeHtml(home) : JSON.stringify(home), { headers });
    },
    { detail: { tags: ["ops"], summary: "Service home: version and where to start (HTML for browsers, JSON otherwise)" } },
  );
