// The browser suite's harness (Node 22, playwright-core driving Debian's Chromium): the service the
// suite runs against (started by tests/studio/run.ts, named by STUDIO_URL and STUDIO_ADMIN_KEY),
// projects and people made through the admin API, Chromium started with the flags this machine
// needs, sign-in through the page, and axe-core run on a screen.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";

export const URL_BASE = process.env.STUDIO_URL ?? "";
const ADMIN_KEY = process.env.STUDIO_ADMIN_KEY ?? "";
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
if (!URL_BASE || !ADMIN_KEY) throw new Error("run the browser suite with tests/studio/run.ts (it starts the service and sets STUDIO_URL)");

/** The admin API with the root key: what a test sets up and checks afterwards. */
export async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(URL_BASE + path, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null, headers: res.headers };
}

async function must(method: string, path: string, body?: unknown): Promise<any> {
  const r = await api(method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json?.data;
}

let counter = 0;
const unique = (prefix: string): string => `${prefix}-${Date.now().toString(36)}-${++counter}`;

/** A project with the given model (locales en, fr), made through the admin API. */
export async function newProject(model?: unknown): Promise<{ id: string; slug: string }> {
  const slug = unique("s");
  const p = await must("POST", "/admin/projects", { slug, name: `Studio ${slug}`, default_locale: "en", locales: ["en", "fr"] });
  if (model !== undefined) await must("PUT", `/admin/p/${slug}/model`, model);
  return { id: p.id, slug };
}

/** A person with a role in a project (a new user), and their password. */
export async function newPerson(projectId: string, role: "viewer" | "editor" | "admin"): Promise<{ id: string; email: string; password: string }> {
  const email = `${unique("person")}@example.com`;
  const password = `pw-${crypto.randomUUID()}`;
  const user = await must("POST", "/admin/users", { email, password, role: "member" });
  await must("PUT", `/admin/p/${projectId}/members/${user.id}`, { role });
  return { id: user.id, email, password };
}

/** A person who is an instance owner (projects:write in every project), and their password. */
export async function newOwner(): Promise<{ email: string; password: string }> {
  const email = `${unique("owner")}@example.com`;
  const password = `pw-${crypto.randomUUID()}`;
  await must("POST", "/admin/users", { email, password, role: "owner" });
  return { email, password };
}

export const newNode = (slug: string, body: Record<string, unknown>): Promise<any> => must("POST", `/admin/p/${slug}/nodes`, body);
export const readNode = (slug: string, id: string): Promise<any> => must("GET", `/admin/p/${slug}/nodes/${id}`);

const FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"];

export const launch = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, args: FLAGS });

/**
 * A page that records every Content-Security-Policy violation and page error: a test ends by
 * asserting there were none (the studio runs whole under its CSP).
 */
export async function openPage(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy|Refused to/i.test(m.text())) problems.push(`csp: ${m.text()}`);
  });
  return { page, problems };
}

/** Signs in through the studio's form; resolves once the signed-in header shows. */
export const signIn = (page: Page, email: string, password: string, path = "/studio/"): Promise<void> => signInAt(page, URL_BASE, email, password, path);

/** signIn on a service of a spec's own (at `base`). */
export async function signInAt(page: Page, base: string, email: string, password: string, path = "/studio/"): Promise<void> {
  await page.goto(base + path);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("button", { name: "Sign out" }).waitFor();
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * axe-core on the screen as it is: the serious and critical violations, each with the nodes it
 * names (empty when the screen passes). Evaluated through the DevTools protocol, which the page's
 * CSP does not govern, so the page's own policy stays as users get it. `within`: only the elements
 * these selectors match (an open combobox list, which React Aria shows with the rest of the page
 * aria-hidden, not inert: axe's aria-hidden-focus would name the page, not the list).
 */
export async function axeViolations(page: Page, within?: readonly string[]): Promise<string[]> {
  await page.evaluate(axeSource);
  const result = await page.evaluate(async (include) => {
    const axe = (
      globalThis as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: unknown }> }> }> } }
    ).axe;
    const r = await axe.run(include ? { include: include.map((s) => [s]) } : document, { resultTypes: ["violations"] });
    return r.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id} (${v.impact}): ${v.help} at ${JSON.stringify(v.nodes.slice(0, 3).map((n) => n.target))}`);
  }, within ?? null);
  return result;
}
