// The webhooks and content model screens in Chromium. Webhooks: an endpoint added against a loopback
// receiver, its signing secret shown once (copied, verified on a real request, absent afterwards),
// paused and resumed, a test event failing then redelivered with success, the secret rotated (both
// secrets sign during the grace period), the endpoint deleted after a confirmation; a reader without
// webhooks:write sees the URL's origin and no change control. Model: the types read as tables, JSON
// syntax checked as typed, an invalid model and a change that breaks existing content each refused by
// Check with its report (nothing applied), then a valid change checked and applied. Actions by
// keyboard; axe on every screen and dialog; the API read afterwards.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import type { Browser, Locator, Page } from "playwright-core";
import { api, axeViolations, launch, newNode, newPerson, newProject, openPage, signIn, URL_BASE } from "./harness.ts";

/** Focus a control and press a key on it, as a keyboard user does. */
async function press(target: Locator, key = "Enter"): Promise<void> {
  await target.focus();
  await target.page().keyboard.press(key);
}

async function noAxe(page: Page, where: string): Promise<void> {
  assert.deepEqual(await axeViolations(page), [], `axe on ${where}`);
}

/** Polls `check` (the API, a receiver) until it holds; the dispatcher works in the background. */
async function eventually<T>(what: string, check: () => Promise<T | undefined | null | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    // fixed wait: polling state the service changes in the background
    await new Promise((r) => setTimeout(r, 150));
  }
}

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on loopback answering `status` (changeable), recording every request. */
async function startReceiver(): Promise<{ url: string; received: Received[]; setStatus(s: number): void; close(): Promise<void> }> {
  const received: Received[] = [];
  let status = 500;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += String(c)));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      res.writeHead(status, { "content-type": "text/plain" });
      res.end(status < 300 ? "ok" : "failing on purpose");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks/cms?token=receiver-credential`,
    received,
    setStatus: (s) => (status = s),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Whether `secret` made one of the request's Standard Webhooks signatures. */
function signedWith(r: Received, secret: string): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key).update(`${r.headers["webhook-id"]}.${r.headers["webhook-timestamp"]}.${r.body}`).digest("base64");
  return String(r.headers["webhook-signature"] ?? "")
    .split(" ")
    .some((s) => s === `v1,${expected}`);
}

const deliveriesOf = async (slug: string, id: string) => (await api("GET", `/admin/p/${slug}/webhooks/${id}/deliveries`)).json;

describe("webhooks and the content model", () => {
  let browser: Browser;
  before(async () => {
    browser = await launch();
  });
  after(async () => {
    await browser.close();
  });

  test("webhooks: an endpoint added (secret once), paused and resumed, a test event failed then redelivered, the secret rotated, the endpoint deleted", async () => {
    const receiver = await startReceiver();
    try {
      const p = await newProject();
      const admin = await newPerson(p.id, "admin");
      const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
      await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: URL_BASE });
      const { page, problems } = await openPage(context);
      await signIn(page, admin.email, admin.password, `/studio/p/${p.slug}/webhooks`);
      await page.getByText("No endpoint yet.").waitFor();
      await noAxe(page, "the empty webhooks screen");

      // Add endpoint, all by keyboard: the URL, two events ticked with Space, submitted with Enter.
      await press(page.getByRole("main").getByRole("button", { name: "Add endpoint" }));
      const add = page.getByRole("dialog", { name: "Add endpoint" });
      await add.waitFor();
      await noAxe(page, "the Add endpoint dialog");
      await add.getByRole("textbox", { name: "URL" }).fill(receiver.url);
      await add.getByRole("textbox", { name: "Description (optional)" }).fill("Static site build");
      await press(add.getByRole("checkbox", { name: /^node\.published/ }), "Space");
      await press(add.getByRole("checkbox", { name: /^node\.deleted/ }), "Space");
      assert.equal(await add.getByRole("checkbox", { name: /^node\.published/ }).isChecked(), true);
      // A visible focus ring on the checkbox reached by keyboard.
      assert.notEqual(await add.locator(".wh-checkbox[data-focus-visible] .wh-checkbox-box").evaluate((el) => getComputedStyle(el).boxShadow), "none");
      await press(add.getByRole("button", { name: "Add endpoint" }));

      // The secret, shown once with a warning and Copy.
      const shown = page.getByRole("dialog", { name: "Endpoint added" });
      await shown.waitFor();
      const secret = (await shown.getByTestId("webhook-secret").textContent()) ?? "";
      assert.match(secret, /^whsec_[A-Za-z0-9+/=]+$/);
      assert.match((await shown.textContent()) ?? "", /not shown again/);
      await noAxe(page, "the secret dialog");
      await press(shown.getByRole("button", { name: "Copy" }));
      await shown.getByRole("status").filter({ hasText: "Copied to the clipboard." }).waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
      await press(shown.getByRole("button", { name: "Done" }));
      await shown.waitFor({ state: "detached" });

      const listed = (await api("GET", `/admin/p/${p.slug}/webhooks`)).json.data;
      assert.equal(listed.length, 1);
      const hook = listed[0];
      assert.equal(hook.url, receiver.url);
      assert.deepEqual([...hook.events].sort(), ["node.deleted", "node.published"]);
      assert.equal(hook.description, "Static site build");
      assert.equal(hook.status, "active");
      assert.equal(hook.secret, undefined);

      // The endpoint listed (url, events, status, pending); the secret nowhere, nor after a reload.
      const card = page.getByRole("region", { name: receiver.url });
      await card.waitFor();
      assert.match((await card.textContent()) ?? "", /node\.published/);
      assert.match((await card.textContent()) ?? "", /0 events waiting/);
      assert.equal((await page.content()).includes(secret), false, "the secret is gone from the page");
      await page.reload();
      await card.waitFor();
      assert.equal((await page.content()).includes(secret), false, "the secret is not shown again");
      await noAxe(page, "the webhooks screen with an endpoint");

      // Pause, then resume.
      await press(card.getByRole("button", { name: "Pause" }));
      await card.getByRole("button", { name: "Resume" }).waitFor();
      await card.getByText("Paused", { exact: true }).waitFor();
      assert.equal((await api("GET", `/admin/p/${p.slug}/webhooks/${hook.id}`)).json.data.status, "paused");
      await noAxe(page, "a paused endpoint");
      await press(card.getByRole("button", { name: "Resume" }));
      await card.getByRole("button", { name: "Pause" }).waitFor();
      assert.equal((await api("GET", `/admin/p/${p.slug}/webhooks/${hook.id}`)).json.data.status, "active");

      // Send test event: the receiver answers 500, the log shows the failed attempt.
      await press(card.getByRole("button", { name: "Send test event" }));
      await card.getByRole("status").filter({ hasText: "Test event queued" }).waitFor();
      const first = await eventually("the test event at the receiver", async () => receiver.received[0]);
      assert.equal(signedWith(first, secret), true, "signed with the secret shown once");
      assert.equal(JSON.parse(first.body).type, "webhook.test");
      const failedRow = card.getByTestId("delivery-row").filter({ hasText: "webhook.test" }).filter({ hasText: "Failed" });
      await failedRow.waitFor();
      assert.match((await failedRow.textContent()) ?? "", /500/);
      const log1 = await deliveriesOf(p.slug, hook.id);
      assert.equal(log1.total, 1);
      assert.equal(log1.data[0].status_code, 500);
      assert.equal(log1.data[0].outcome, "failed");
      assert.equal(log1.data[0].event_type, "webhook.test");
      await noAxe(page, "the deliveries log");

      // Redeliver it once the receiver is fixed: a new attempt of the same event, succeeded.
      receiver.setStatus(200);
      await press(failedRow.getByRole("button", { name: /^Redeliver/ }));
      await card.getByRole("status").filter({ hasText: "Redelivery of webhook.test queued." }).waitFor();
      const log2 = await eventually("the redelivered attempt", async () => {
        const l = await deliveriesOf(p.slug, hook.id);
        return l.total === 2 && l.data[0].outcome === "succeeded" ? l : null;
      });
      assert.equal(log2.data[0].status_code, 200);
      assert.equal(log2.data[0].event_id, log1.data[0].event_id);
      assert.equal(receiver.received[1]?.headers["webhook-id"], first.headers["webhook-id"]);
      await card.getByTestId("delivery-row").filter({ hasText: "Succeeded" }).waitFor();
      assert.equal(await card.getByTestId("delivery-row").count(), 2);

      // Rotate secret, after a confirmation: the new secret shown once; both sign for the grace period.
      await press(card.getByRole("button", { name: "Rotate secret" }));
      const confirmRotate = page.getByRole("alertdialog", { name: "Rotate the signing secret?" });
      await confirmRotate.waitFor();
      await noAxe(page, "the rotate confirmation");
      await press(confirmRotate.getByRole("button", { name: "Rotate secret" }));
      const rotated = page.getByRole("dialog", { name: "New signing secret" });
      await rotated.waitFor();
      const secret2 = (await rotated.getByTestId("webhook-secret").textContent()) ?? "";
      assert.match(secret2, /^whsec_/);
      assert.notEqual(secret2, secret);
      await noAxe(page, "the new secret dialog");
      await press(rotated.getByRole("button", { name: "Done" }));
      await rotated.waitFor({ state: "detached" });
      assert.equal((await page.content()).includes(secret2), false, "the new secret is gone from the page");
      assert.notEqual((await api("GET", `/admin/p/${p.slug}/webhooks/${hook.id}`)).json.data.previous_secret_expires_at, null);
      await press(card.getByRole("button", { name: "Send test event" }));
      const third = await eventually("the test event after the rotation", async () => receiver.received[2]);
      assert.equal(signedWith(third, secret2), true, "signed with the new secret");
      assert.equal(signedWith(third, secret), true, "and with the previous one during its grace period");

      // Delete, after a confirmation.
      await press(card.getByRole("button", { name: "Delete" }));
      const confirmDelete = page.getByRole("alertdialog", { name: "Delete the endpoint?" });
      await confirmDelete.waitFor();
      await noAxe(page, "the delete confirmation");
      await press(confirmDelete.getByRole("button", { name: "Delete endpoint" }));
      await page.getByText("No endpoint yet.").waitFor();
      assert.deepEqual((await api("GET", `/admin/p/${p.slug}/webhooks`)).json.data, []);
      assert.deepEqual(problems, []);
      await context.close();
    } finally {
      await receiver.close();
    }
  });

  test("webhooks: a reader without webhooks:write sees the URL's origin and the log, and no change control", async () => {
    const p = await newProject();
    const created = await api("POST", `/admin/p/${p.slug}/webhooks`, { url: "http://127.0.0.1:9/secret/path?token=x", events: ["*"] });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const editor = await newPerson(p.id, "editor");
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const { page, problems } = await openPage(context);
    await signIn(page, editor.email, editor.password, `/studio/p/${p.slug}/webhooks`);
    const card = page.getByRole("region", { name: /^http:\/\/127\.0\.0\.1:9/ });
    await card.waitFor();
    const text = (await card.textContent()) ?? "";
    assert.doesNotMatch(text, /secret\/path|token=x/);
    assert.match(text, /every event/);
    for (const name of ["Pause", "Resume", "Send test event", "Rotate secret", "Delete"]) assert.equal(await card.getByRole("button", { name }).count(), 0, name);
    assert.equal(await page.getByRole("button", { name: "Add endpoint" }).count(), 0);
    await press(card.getByRole("button", { name: "Show deliveries" }));
    await card.getByText("No delivery yet.").waitFor();
    assert.equal(await card.getByRole("button", { name: "Hide deliveries" }).getAttribute("aria-expanded"), "true");
    await noAxe(page, "the webhooks screen read only");
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("model: read as tables; a broken JSON, an invalid model and a change that breaks content each refused by Check; a valid change checked and applied", async () => {
    const model = {
      block_types: [
        {
          name: "hero",
          description: "The opening of a page",
          schema: { type: "object", required: ["heading"], additionalProperties: false, properties: { heading: { type: "string", minLength: 1, translatable: true } } },
        },
      ],
      node_types: [
        {
          name: "page",
          description: "A page of the site",
          fields: { type: "object", properties: { summary: { type: "string", title: "Summary", maxLength: 200 }, published_on: { type: "string", format: "date-time", index: true } } },
          blocks: [{ type: "hero", max: 1 }],
          children: ["page"],
        },
      ],
    };
    const p = await newProject(model);
    const node = await newNode(p.slug, { slug: "about", title: "About", type: "page", fields: {} });
    const admin = await newPerson(p.id, "admin");
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const { page, problems } = await openPage(context);
    await signIn(page, admin.email, admin.password, `/studio/p/${p.slug}/model`);

    // Read: each type with its fields (type, format, required, translatable), blocks and children.
    const pageType = page.getByRole("article", { name: "page node type" });
    await pageType.waitFor();
    const summaryRow = pageType.getByRole("row", { name: /summary/ });
    assert.deepEqual(await summaryRow.getByRole("cell").allTextContents(), ["string", "", "Optional", "No", "at most 200 characters"]);
    assert.deepEqual(
      await pageType
        .getByRole("row", { name: /published_on/ })
        .getByRole("cell")
        .allTextContents(),
      ["string", "date-time", "Optional", "No", "indexed"],
    );
    assert.match((await pageType.textContent()) ?? "", /hero \(at most 1\)/);
    assert.match((await pageType.textContent()) ?? "", /Allowed children\s*page/);
    const hero = page.getByRole("article", { name: "hero block type" });
    assert.deepEqual(
      await hero
        .getByRole("row", { name: /heading/ })
        .getByRole("cell")
        .allTextContents(),
      ["string", "", "Required", "Translatable", "at least 1 characters"],
    );
    await noAxe(page, "the content model screen");

    // Edit as JSON: the whole model in a monospace text box.
    await press(page.getByRole("button", { name: "Edit as JSON" }));
    const box = page.getByRole("textbox", { name: "Content model (JSON)" });
    await box.waitFor();
    assert.match(await box.evaluate((el) => getComputedStyle(el).fontFamily), /mono/i);
    assert.deepEqual(JSON.parse(await box.inputValue()), { strict: false, ...model });
    await noAxe(page, "the JSON editor");
    const check = page.getByRole("button", { name: "Check" });
    const apply = page.getByRole("button", { name: "Apply" });
    assert.equal(await apply.isDisabled(), true, "Apply waits for a clean check");

    // JSON syntax checked as typed.
    await box.fill('{ "strict": false, ');
    assert.equal(await box.getAttribute("aria-invalid"), "true");
    await page.getByText(/Not valid JSON/).waitFor();
    assert.equal(await check.isDisabled(), true);
    await noAxe(page, "the JSON editor with a syntax error");

    // A model that is not valid: its violations point into the model.
    const invalid = structuredClone(model);
    invalid.node_types[0]!.children = ["missing"];
    await box.fill(JSON.stringify(invalid, null, 2));
    assert.notEqual(await box.getAttribute("aria-invalid"), "true");
    await press(check);
    const modelReport = page.getByRole("alert").filter({ hasText: "The model is not valid" });
    await modelReport.waitFor();
    assert.match((await modelReport.textContent()) ?? "", /\/node_types\/0\/children\/0/);
    assert.match((await modelReport.textContent()) ?? "", /node type "page"/);
    assert.equal(await apply.isDisabled(), true);
    await noAxe(page, "an invalid model's report");

    // A change that breaks existing content: summary made required, which the node lacks.
    const breaking = structuredClone(model) as typeof model & { node_types: Array<{ fields: Record<string, unknown> }> };
    breaking.node_types[0]!.fields.required = ["summary"];
    await box.fill(JSON.stringify(breaking, null, 2));
    await press(check);
    const contentReport = page.getByRole("alert").filter({ hasText: "1 node would no longer match" });
    await contentReport.waitFor();
    const listedNode = contentReport.getByRole("listitem").filter({ has: page.getByRole("link", { name: "about" }) });
    assert.match((await listedNode.textContent()) ?? "", /\/fields\/summary/);
    assert.equal(await contentReport.getByRole("link", { name: "about" }).getAttribute("href"), `/studio/p/${p.slug}/nodes/${node.id}`);
    assert.equal(await apply.isDisabled(), true, "no Apply after a check that found broken content");
    await noAxe(page, "the report of a change that breaks content");
    const unchanged = (await api("GET", `/admin/p/${p.slug}/model`)).json.data;
    assert.equal(unchanged.version, 1);
    assert.equal(unchanged.node_types[0].fields.required, undefined, "nothing applied");

    // A valid change: a translatable subtitle. Checked clean, changed (Apply off again), checked, applied.
    const valid = structuredClone(model) as typeof model & { node_types: Array<{ fields: { properties: Record<string, unknown> } }> };
    valid.node_types[0]!.fields.properties.subtitle = { type: "string", title: "Subtitle", translatable: true };
    await box.fill(JSON.stringify(valid, null, 2));
    await press(check);
    await page.getByRole("status").filter({ hasText: "Check passed" }).waitFor();
    assert.equal(await apply.isDisabled(), false);
    await noAxe(page, "a clean check");
    await box.fill(`${JSON.stringify(valid, null, 2)}\n`);
    assert.equal(await apply.isDisabled(), true, "the text changed since the check");
    await page.getByText("Changed since the last check").waitFor();
    await press(check);
    await page.getByRole("status").filter({ hasText: "Check passed" }).waitFor();
    await press(apply);
    await page.getByRole("status").filter({ hasText: "Model saved: version 2." }).waitFor();
    const saved = (await api("GET", `/admin/p/${p.slug}/model`)).json.data;
    assert.equal(saved.version, 2);
    assert.deepEqual(saved.node_types[0].fields.properties.subtitle, { type: "string", title: "Subtitle", translatable: true });
    const subtitle = page.getByRole("article", { name: "page node type" }).getByRole("row", { name: /subtitle/ });
    await subtitle.waitFor();
    assert.deepEqual(await subtitle.getByRole("cell").allTextContents(), ["string", "", "Optional", "Translatable", ""]);
    await noAxe(page, "the content model after a change");
    assert.deepEqual(problems, []);
    await context.close();

    // A viewer reads the model and has no way to change it.
    const viewer = await newPerson(p.id, "viewer");
    const c2 = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const second = await openPage(c2);
    await signIn(second.page, viewer.email, viewer.password, `/studio/p/${p.slug}/model`);
    await second.page.getByRole("article", { name: "page node type" }).waitFor();
    assert.equal(await second.page.getByRole("button", { name: "Edit as JSON" }).count(), 0);
    await noAxe(second.page, "the content model read only");
    assert.deepEqual(second.problems, []);
    await c2.close();
  });
});
