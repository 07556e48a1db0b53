// Issue 22 §5: the consent page reached at most 500 of a user's projects (the list stopped there,
// and a project past it was refused even when named). It lists the first ones by name and searches the rest.
import { describe, expect, test } from "bun:test";
import { projectMembers, projects } from "../db/schema";
import { uuidv7 } from "../src/lib/ids";
import { harness } from "./helpers";
import { authorizeInBrowser, authorizeUrl, CookieJar, hiddenFields, pkce, seedUser } from "./oauth.helpers";

const BASE = "http://localhost";

describe("consent page: a user of many projects", async () => {
  const h = await harness({ OAUTH_SIGNIN_RATE_LIMIT: "1000", OAUTH_REGISTER_RATE_LIMIT: "1000" });
  const fetcher = (r: Request) => h.app.handle(r);
  const tag = crypto.randomUUID().slice(0, 8);
  // 620 projects, named so that their order by name is their number.
  const many = Array.from({ length: 620 }, (_, i) => ({ id: uuidv7(), slug: `many-${tag}-${i}`, name: `Many ${tag} ${String(i).padStart(4, "0")}`, defaultLocale: "en", locales: ["en"] }));
  await h.deps.db.insert(projects).values(many);
  const user = await seedUser(h, "editor", []);
  await h.deps.db.insert(projectMembers).values(many.map((p) => ({ projectId: p.id, userId: user.id, role: "editor" as const })));
  const registered = await fetcher(
    new Request(`${BASE}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: ["http://127.0.0.1:9/cb"], token_endpoint_auth_method: "none" }),
    }),
  );
  const clientId = ((await registered.json()) as { client_id: string }).client_id;
  const url = () =>
    authorizeUrl(BASE, {
      response_type: "code",
      client_id: clientId,
      redirect_uri: "http://127.0.0.1:9/cb",
      code_challenge: pkce().challenge,
      code_challenge_method: "S256",
      resource: `${BASE}/mcp`,
      state: "s",
    });
  const last = many[619]!;

  test("a project past the 500th is granted when chosen", async () => {
    const r = await authorizeInBrowser(fetcher, url(), { email: user.email, password: user.password, projectId: last.id });
    const to = new URL(r.location);
    expect(to.searchParams.get("code")).toBeTruthy();
    expect(r.pages.at(-1)).toContain(`Allow access to ${last.name}?`);
  });

  test("the project page lists the first 100 by name and finds any other by a search of name or slug", async () => {
    const jar = new CookieJar();
    const post = async (fields: URLSearchParams) => {
      const res = await fetcher(
        new Request(`${BASE}/oauth/authorize`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", cookie: jar.header(), origin: BASE }, body: fields.toString() }),
      );
      jar.store(res);
      return { status: res.status, html: await res.text() };
    };
    const first = await fetcher(new Request(url()));
    jar.store(first);
    const signIn = new URLSearchParams(hiddenFields(await first.text()));
    signIn.set("email", user.email);
    signIn.set("password", user.password);
    const list = await post(signIn);
    expect(list.status).toBe(200);
    const options = (html: string) => [...html.matchAll(/<option value="([^"]+)">/g)].map((m) => m[1]);
    expect(options(list.html)).toEqual(many.slice(0, 100).map((p) => p.id));
    expect(list.html).toContain("Showing the first 100 of your projects by name.");
    expect(list.html).toContain('name="project_search"');

    const search = async (q: string) => {
      const form = new URLSearchParams(hiddenFields(list.html));
      form.set("action", "search");
      form.set("project_search", q);
      return post(form);
    };
    const byName = await search(` ${last.name.toLowerCase()} `);
    expect(byName.status).toBe(200);
    expect(options(byName.html)).toEqual([last.id]);
    expect(byName.html).toContain("1 project matching");
    expect(options((await search(last.slug.toUpperCase())).html)).toEqual([last.id]);
    // Several hundred match: the first 100 are listed, and the page says there are more.
    const broad = await search(`many-${tag}-5`);
    expect(options(broad.html)).toHaveLength(100);
    expect(broad.html).toContain("The first 100 projects matching");
    // LIKE's wildcards are searched for as text.
    const none = await search("%");
    expect(options(none.html)).toEqual([]);
    expect(none.html).toContain("No project matching “%”");

    // Choosing the found project leads to its consent step.
    const choose = new URLSearchParams(hiddenFields(byName.html));
    choose.set("project", last.id);
    const consent = await post(choose);
    expect(consent.status).toBe(200);
    expect(consent.html).toContain(`Allow access to ${last.name}?`);
    expect(consent.html).toContain('value="change_project"');
  });
});
