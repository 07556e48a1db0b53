// Deleting webhook endpoints, and whole projects, while two dispatchers claim and send their
// backlogs: every delete answers 204, every outbox row, attempt and endpoint of what was deleted is
// gone, and neither the deletes nor the dispatchers meet a deadlock or an error (an attempt whose
// endpoint went while it was sent is dropped, not recorded). On PostgreSQL the claims and the
// deletes really run at once (a cascade left to its own order once deadlocked with a claim, CI
// 40P01); the embedded database runs them one after another and must give the same answers.
// A database of its own: no other file's dispatcher claims these events.
import { afterAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rows } from "../src/lib/json";
import { sqlArray } from "../src/lib/sql";
import { type Dispatcher, startDispatcher } from "../src/webhooks/dispatcher";
import { enqueueEvents } from "../src/write/outbox";
import { freshDatabase, harness, seedProject, waitFor } from "./helpers";

const fresh = await freshDatabase();
afterAll(() => fresh.drop());

const ROUNDS = 10;
const EVENTS = 120;

describe("webhook endpoints and projects deleted while their events are sent", () => {
  test(`${ROUNDS} rounds: an endpoint and then its project deleted mid-backlog, two dispatchers sending`, async () => {
    let received = 0;
    const rx = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        await req.text();
        received++;
        // Some attempts fail: their retries go back into the outbox behind the head.
        return received % 7 === 0 ? new Response("no", { status: 503 }) : new Response("ok");
      },
    });
    const h = await harness(
      { WEBHOOKS_ALLOW_PRIVATE_URLS: "true", WEBHOOKS_RETRY_SCHEDULE: "0,50ms,50ms,50ms", WEBHOOKS_CONCURRENCY: "8", WEBHOOKS_POLL_MS: "50" },
      { db: fresh.handle.db, dbHandle: fresh.handle },
    );
    const dispatchers: Dispatcher[] = [startDispatcher(h.deps), startDispatcher(h.deps)];
    const count = async (q: ReturnType<typeof sql>): Promise<number> => Number(rows<{ n: number }>(await h.deps.db.execute(q))[0]?.n);
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const p = await seedProject(h);
        const ids: string[] = [];
        for (const path of ["/a", "/b", "/c"]) {
          const res = await h.request("POST", `/admin/p/${p.slug}/webhooks`, { body: { url: `http://127.0.0.1:${rx.port}${path}`, events: ["*"] } });
          expect(res.status).toBe(201);
          ids.push(res.json.data.id);
        }
        await h.deps.db.transaction((tx) =>
          enqueueEvents(
            tx,
            p.id,
            Array.from({ length: EVENTS }, (_, i) => ({ type: "node.updated" as const, data: { round, i } })),
          ),
        );
        for (const d of dispatchers) d.wake();
        // Mid-backlog: some sent, most still waiting.
        const from = received;
        await waitFor(() => received - from >= 20, { timeout: 15_000, what: "the first attempts" });
        const endpoints = sqlArray(ids, "uuid");
        // The deletes meet a backlog still being sent, not an idle outbox.
        expect(await count(sql`select count(*)::int as n from webhook_outbox where endpoint_id = any(${endpoints}) and status = 'pending'`)).toBeGreaterThan(0);
        const one = await h.request("DELETE", `/admin/p/${p.slug}/webhooks/${ids[0]}`);
        const whole = await h.request("DELETE", `/admin/projects/${p.slug}`);
        expect({ round, endpoint: one.status, project: whole.status }).toEqual({ round, endpoint: 204, project: 204 });
        expect({
          round,
          endpoints: await count(sql`select count(*)::int as n from webhook_endpoints where id = any(${endpoints})`),
          outbox: await count(sql`select count(*)::int as n from webhook_outbox where endpoint_id = any(${endpoints})`),
          attempts: await count(sql`select count(*)::int as n from webhook_deliveries where endpoint_id = any(${endpoints})`),
          events: await count(sql`select count(*)::int as n from webhook_events where project_id = ${p.id}::uuid`),
        }).toEqual({ round, endpoints: 0, outbox: 0, attempts: 0, events: 0 });
      }
      expect(received).toBeGreaterThanOrEqual(ROUNDS * 20);
    } finally {
      await Promise.all(dispatchers.map((d) => d.stop()));
      rx.stop(true);
    }
    // No deadlock anywhere, and no attempt of a deleted endpoint logged as a failure to record.
    expect(h.logs.filter((l) => /deadlock|40P01|failed to record|could not be read|"level":"error"/i.test(l))).toEqual([]);
  });
});
