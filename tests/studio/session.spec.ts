// Signing in and out of the studio in Chromium, and the session's refusals as a browser meets them:
// a request without the studio header, a page on another site posting at the admin API, the MCP
// endpoint, a person demoted while signed in. axe on the sign-in and projects screens.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import { api, axeViolations, launch, newNode, newPerson, newProject, openPage, readNode, signIn, URL_BASE } from "./harness.ts";

describe("studio sign-in and the session's refusals", () => {
  let browser: Browser;
  before(async () => {
    browser = await launch();
  });
  after(async () => {
    await browser.close();
  });

  test("sign-in form: same message for an unknown email and a wrong password; signed in, the projects; sign-out ends the session", async () => {
    const p = await newProject();
    const person = await newPerson(p.id, "editor");
    const context = await browser.newContext();
    const { page, problems } = await openPage(context);
    const home = await page.goto(`${URL_BASE}/studio/`);
    assert.equal(home?.status(), 200);
    assert.match(home?.headers()["content-security-policy"] ?? "", /script-src 'self';/);
    assert.match(home?.headers()["content-security-policy"] ?? "", /frame-ancestors 'none'/);
    assert.doesNotMatch(home?.headers()["content-security-policy"] ?? "", /unsafe-inline'[^;]*;.*script|script-src[^;]*unsafe/);
    assert.equal(home?.headers()["cache-control"], "no-cache");
    await page.getByLabel("Email").waitFor();
    assert.deepEqual(await axeViolations(page), []);
    const messages: string[] = [];
    for (const [email, password] of [
      ["nobody@example.com", "some-password"],
      [person.email, "wrong-password"],
    ]) {
      await page.getByLabel("Email").fill(email as string);
      await page.getByLabel("Password").fill(password as string);
      await page.getByRole("button", { name: "Sign in" }).click();
      const alert = page.getByRole("alert");
      await alert.waitFor();
      messages.push((await alert.textContent()) ?? "");
    }
    assert.equal(messages[0], messages[1]);
    assert.match(messages[0] ?? "", /wrong email or password/i);
    await page.getByLabel("Email").fill(person.email);
    await page.getByLabel("Password").fill(person.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Sign out" }).waitFor();
    await page.getByRole("link", { name: new RegExp(`Studio ${p.slug}`) }).waitFor();
    assert.deepEqual(await axeViolations(page), []);
    const cookie = (await context.cookies()).find((c) => c.name === "cms_studio");
    assert.ok(cookie, "the session cookie is set");
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, "Strict");
    assert.equal(await page.evaluate(() => document.cookie), "", "the page cannot read the session cookie");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Email").waitFor();
    // The old cookie value no longer works: the session ended on the server.
    const replay = await fetch(`${URL_BASE}/admin/projects`, { headers: { cookie: `cms_studio=${cookie.value}`, "x-cms-studio": "1" } });
    assert.equal(replay.status, 401);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("refusals: no studio header, a page on another site, /mcp, and a demotion while signed in", async () => {
    const p = await newProject();
    const person = await newPerson(p.id, "editor");
    const node = await newNode(p.slug, { slug: "target", title: "Untouched" });
    const context = await browser.newContext();
    const { page } = await openPage(context);
    await signIn(page, person.email, person.password);
    const path = `/admin/p/${p.slug}/nodes/${node.id}`;
    const status = (init: { method: string; headers?: Record<string, string>; body?: string }, target = path) =>
      page.evaluate(async ([t, i]) => (await fetch(t as string, { ...(i as RequestInit), credentials: "same-origin" })).status, [target, init] as const);
    // The cookie alone (the browser sends it; the header is missing): 403 for a read and a write.
    assert.equal(await status({ method: "GET" }), 403);
    assert.equal(await status({ method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify({ title: "No header" }) }), 403);
    assert.equal(await status({ method: "GET", headers: { "x-cms-studio": "1" } }), 200);
    // /mcp never takes the session, even with the header.
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } };
    assert.equal(
      await status({ method: "POST", headers: { "x-cms-studio": "1", "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify(init) }, "/mcp"),
      401,
    );
    // A page on another site (localhost is another site than 127.0.0.1) posting a form and a fetch at the admin API.
    const evil: Server = createServer((_req, res) => {
      res.setHeader("content-type", "text/html");
      res.end(`<!doctype html><form id="f" method="POST" action="${URL_BASE}${path}" enctype="text/plain"><input name='{"title":"Forged","x":"' value='"}'></form>
        <script>fetch(${JSON.stringify(URL_BASE + path)}, { method: "PATCH", credentials: "include", headers: { "x-cms-studio": "1", "content-type": "application/json" }, body: JSON.stringify({ title: "Forged by fetch" }) }).catch(() => {}).finally(() => document.getElementById("f").submit());</script>`);
    });
    await new Promise<void>((r) => evil.listen(0, "localhost", () => r()));
    const evilPort = (evil.address() as { port: number }).port;
    const attacker = await context.newPage();
    const landed = attacker.waitForEvent("framenavigated", { predicate: (f) => f.url().startsWith(URL_BASE), timeout: 10_000 }).catch(() => null);
    await attacker.goto(`http://localhost:${evilPort}/`);
    await landed;
    await attacker.waitForLoadState("load");
    evil.close();
    const after1 = await readNode(p.slug, node.id);
    assert.equal(after1.title, "Untouched");
    assert.equal(after1.revision, node.revision);
    // Demoted to viewer while signed in: the next write is refused, reads go on.
    await api("PUT", `/admin/p/${p.id}/members/${person.id}`, { role: "viewer" });
    assert.equal(await status({ method: "PATCH", headers: { "x-cms-studio": "1", "content-type": "application/json" }, body: JSON.stringify({ title: "After demotion" }) }), 403);
    assert.equal(await status({ method: "GET", headers: { "x-cms-studio": "1" } }), 200);
    assert.equal((await readNode(p.slug, node.id)).title, "Untouched");
    await context.close();
  });
});
