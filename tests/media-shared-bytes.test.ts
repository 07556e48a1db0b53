// The same bytes in two projects are one stored object (media.md, Storage): a deletion in one
// project racing an upload of those bytes in another must never leave the new item without its
// file. Run over both drivers: the local disk, and s3rver on loopback (an S3 store's round trips
// make the window between a deletion's count and its removal wide, as they are in production).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "s3rver";
import sharp from "sharp";
import { harness, seedProject } from "./helpers";
import { uploadForm } from "./media.helpers";

const TRIES = 80;

let s3: S3rver;
let s3Endpoint = "";
beforeAll(async () => {
  s3 = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: mkdtempSync(join(tmpdir(), "s3rver-")), configureBuckets: [{ name: "media", configs: [] }] });
  s3Endpoint = `http://127.0.0.1:${(await s3.run()).port}`;
});
afterAll(async () => {
  await s3?.close();
});

const drivers: Record<string, () => Record<string, string>> = {
  disk: () => ({ DATA_DIR: mkdtempSync(join(tmpdir(), "media-race-")) }),
  s3: () => ({
    DATA_DIR: mkdtempSync(join(tmpdir(), "media-race-")),
    MEDIA_STORAGE: "s3",
    MEDIA_S3_ENDPOINT: s3Endpoint,
    MEDIA_S3_BUCKET: "media",
    MEDIA_S3_REGION: "us-east-1",
    MEDIA_S3_ACCESS_KEY_ID: "S3RVER",
    MEDIA_S3_SECRET_ACCESS_KEY: "S3RVER",
  }),
};

describe("shared bytes", () => {
  for (const [driver, env] of Object.entries(drivers))
    test(`${driver}: a delete in project A racing an upload of the same bytes in project B (${TRIES} tries): every surviving item's file is readable`, async () => {
      const h = await harness(env());
      const a = await seedProject(h);
      const b = await seedProject(h);
      const survivors: Array<{ url: string; size: number }> = [];
      for (let i = 0; i < TRIES; i++) {
        // Bytes no item of any run has stored: random pixels.
        const bytes = new Uint8Array(
          await sharp(crypto.getRandomValues(new Uint8Array(32 * 32 * 3)), { raw: { width: 32, height: 32, channels: 3 } })
            .png()
            .toBuffer(),
        );
        const first = await uploadForm(h, a.slug, bytes, `a${i}.png`);
        expect(first.status, first.text).toBe(201);
        const upload = uploadForm(h, b.slug, bytes, `b${i}.png`);
        // The delete starts 0 to 39 ms after the upload (a stagger, not a wait for anything): an
        // upload does its image work before it stores, a delete its checks before it removes, and
        // started together the delete ends first every time; staggered, the two meet in every order.
        await Bun.sleep(i % 40); // fixed wait: the stagger above, not a wait for anything
        let gone = await h.request("DELETE", `/admin/p/${a.slug}/media/${first.json.data.id}`);
        const second = await upload;
        // s3rver (the loopback stand-in, on a filesystem) answers 500 when a PUT and a DELETE of one key
        // overlap, which S3 does not; the service says 503 and the delete is asked again, as a client would.
        // The item may already be gone then (the row went before the object was refused): 404 is the delete done.
        let retried = false;
        for (let retry = 0; retry < 5 && driver === "s3" && gone.status === 503 && gone.text.includes("refused to remove an object (HTTP 500)"); retry++) {
          retried = true;
          gone = await h.request("DELETE", `/admin/p/${a.slug}/media/${first.json.data.id}`);
        }
        if (retried && gone.status === 404) gone = { ...gone, status: 204 };
        // Each answer as it came, so that a failure says what it was.
        expect(`${gone.status} ${second.status}`, `${gone.text} ${second.text}`).toBe("204 201");
        survivors.push({ url: second.json.data.url, size: second.json.data.size });
      }
      const unreadable: string[] = [];
      for (const s of survivors) {
        const res = await h.app.handle(new Request(s.url));
        const body = new Uint8Array(await res.arrayBuffer());
        if (res.status !== 200 || body.length !== s.size) unreadable.push(`${s.url}: ${res.status}`);
      }
      expect(unreadable).toEqual([]);
    }, 120_000);
});
