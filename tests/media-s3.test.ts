// The media library over the S3 driver, built by the app from MEDIA_STORAGE=s3 and MEDIA_S3_*,
// against s3rver (a real S3-protocol server) on loopback, and the Signature Version 4 our driver
// sends checked against an independent signer (@smithy/signature-v4, the AWS SDK's) and against the
// example AWS publishes.
import { afterAll, describe, expect, test } from "bun:test";
import { SignatureV4 } from "@smithy/signature-v4";
import { type S3Settings, signS3 } from "../src/media/storage/s3";
import { harness, seedProject } from "./helpers";
import { twoColourPng, uploadForm } from "./media.helpers";
import { mediaSuite } from "./media.suite";
import { Sha256, startS3 } from "./s3.helpers";

const bucket = await startS3();
afterAll(() => bucket.stop());

mediaSuite("S3 (s3rver)", {
  // Every request of app.handle comes from one address: the suite renders more than a visitor's minute allows.
  env: () => ({ ...bucket.env(), MEDIA_ALLOW_PRIVATE_URLS: "true", MEDIA_MAX_BYTES: String(1024 * 1024), MEDIA_RENDER_RATE: "1000" }),
  keys: () => bucket.keys(),
  has: (key) => bucket.has(key),
  written: () => bucket.written,
});

describe("objects as the bucket itself serves them", () => {
  test("an SVG is stored as a download (application/octet-stream, attachment); delivery still answers it as SVG, sandboxed; a PNG keeps its type", async () => {
    const h = await harness({ ...bucket.env(), MEDIA_MAX_BYTES: String(1024 * 1024) });
    const { slug } = await seedProject(h);
    const svg = new TextEncoder().encode(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(${Date.now()})</script></svg>`);
    const up = await uploadForm(h, slug, svg, "logo.svg");
    expect(up.status).toBe(201);
    const original = (hash: string) => `${hash.slice(0, 2)}/${hash}/original`;
    const head = await bucket.head(original(up.json.data.hash));
    expect(head.get("content-type")).toBe("application/octet-stream");
    expect(head.get("content-disposition")).toBe("attachment");
    const served = await h.app.handle(new Request(up.json.data.url));
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("image/svg+xml");
    expect(served.headers.get("content-security-policy")).toStartWith("sandbox");
    expect(await served.text()).toBe(new TextDecoder().decode(svg));
    const png = await uploadForm(h, slug, await twoColourPng(40, 10), "p.png");
    expect(png.status).toBe(201);
    const pngHead = await bucket.head(original(png.json.data.hash));
    expect(pngHead.get("content-type")).toBe("image/png");
    expect(pngHead.get("content-disposition")).toBeNull();
  });
});

describe("S3 request signatures", () => {
  test("the example AWS publishes (PUT Object, Signature Version 4 in the Authorization header)", async () => {
    const aws: S3Settings = {
      endpoint: "https://examplebucket.s3.amazonaws.com",
      bucket: "",
      region: "us-east-1",
      accessKeyId: "AKIAIOSFODNN7EXAMPLE",
      secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      prefix: "",
    };
    const signed = await signS3(
      aws,
      "PUT",
      "https://examplebucket.s3.amazonaws.com/test$file.text",
      new TextEncoder().encode("Welcome to Amazon S3."),
      { date: "Fri, 24 May 2013 00:00:00 GMT", "x-amz-storage-class": "REDUCED_REDUNDANCY" },
      "20130524T000000Z",
    );
    expect(signed.headers.get("authorization")).toBe(
      "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd",
    );
    expect(signed.headers.get("x-amz-content-sha256")).toBe("44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  });

  test("every request the driver sends carries the signature the AWS SDK's signer computes", async () => {
    const s: S3Settings = {
      endpoint: "https://s3.eu-west-1.amazonaws.com",
      bucket: "my-bucket",
      region: "eu-west-1",
      accessKeyId: "AKIDEXAMPLE",
      secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
      prefix: "",
    };
    const when = new Date("2026-11-26T12:34:56Z");
    const datetime = "20261126T123456Z";
    const smithy = new SignatureV4({ service: "s3", region: s.region, credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey }, sha256: Sha256, uriEscapePath: false });
    const body = new TextEncoder().encode("some image bytes");
    const cases: Array<[string, string, Uint8Array | null, Record<string, string>]> = [
      ["PUT", "/my-bucket/ab/abcdef/original", body, { "content-type": "image/png" }],
      ["GET", "/my-bucket/ab/abcdef/v/w800-h0-inside-q75.webp", null, {}],
      ["HEAD", "/my-bucket/ab/abcdef/original", null, {}],
      ["DELETE", "/my-bucket/ab/abcdef/original", null, {}],
      ["GET", "/my-bucket?list-type=2&max-keys=1000&prefix=ab%2Fabcdef%2F", null, {}],
    ];
    for (const [method, pathAndQuery, payload, headers] of cases) {
      const ours = await signS3(s, method, `${s.endpoint}${pathAndQuery}`, payload, headers, datetime);
      const url = new URL(ours.url);
      const sent: Record<string, string> = {};
      ours.headers.forEach((v, k) => {
        if (k !== "authorization") sent[k] = v;
      });
      sent.host = url.host;
      const theirs = await smithy.sign(
        { method, protocol: url.protocol, hostname: url.hostname, path: url.pathname, query: Object.fromEntries(url.searchParams), headers: sent, body: payload ?? undefined },
        { signingDate: when, unsignableHeaders: new Set(["content-type"]) },
      );
      expect(ours.headers.get("authorization")).toBe(theirs.headers.authorization ?? "");
    }
  });
});
