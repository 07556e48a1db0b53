// s3rver (a real S3-protocol server) on loopback, for the tests over the S3 driver: the environment
// a deployment sets (MEDIA_STORAGE=s3, MEDIA_S3_*), from which the app builds its storage itself,
// and the bucket read back with the AWS SDK's signer (@smithy/signature-v4), not the driver under test.
import { createHash, createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignatureV4 } from "@smithy/signature-v4";
import S3rver from "s3rver";

/** SHA-256 for the AWS SDK signer, from node:crypto: independent of the driver's Web Crypto. */
export class Sha256 {
  private readonly h;
  constructor(secret?: unknown) {
    this.h = secret === undefined ? createHash("sha256") : createHmac("sha256", secret as Uint8Array);
  }
  update(data: Uint8Array | string): void {
    this.h.update(data);
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.h.digest()));
  }
}

export interface S3Bucket {
  readonly endpoint: string;
  /** The settings a deployment sets for the S3 driver (and DATA_DIR, for the key file). */
  env(): Record<string, string>;
  /** Every object's key under the prefix, without it. */
  keys(): Promise<string[]>;
  has(key: string): Promise<boolean>;
  /** An object's headers as the bucket itself answers them (a bucket served directly, or a CDN before it). */
  head(key: string): Promise<Headers>;
  /** Every object written (a rewrite of a key too), in order, as the server saw it; keys without the prefix. */
  readonly written: string[];
  stop(): Promise<void>;
}

const BUCKET = "media";
const PREFIX = "cms/";
const CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };

export async function startS3(): Promise<S3Bucket> {
  const directory = mkdtempSync(join(tmpdir(), "s3rver-"));
  const server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory, configureBuckets: [{ name: BUCKET, configs: [] }] });
  const written: string[] = [];
  // s3rver is a Koa app: its S3 event notifications (ObjectCreated:Put, …) are events of the app.
  (server as unknown as { on(e: string, f: (ev: { Records: { eventName: string; s3: { object: { key: string } } }[] }) => void): void }).on("event", (ev) => {
    for (const r of ev.Records) if (r.eventName.startsWith("ObjectCreated:")) written.push(decodeURIComponent(r.s3.object.key).slice(PREFIX.length));
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const signer = new SignatureV4({ service: "s3", region: "us-east-1", credentials: CREDENTIALS, sha256: Sha256, uriEscapePath: false });
  const send = async (method: string, path: string, query: Record<string, string> = {}): Promise<Response> => {
    const signed = await signer.sign({
      method,
      protocol: "http:",
      hostname: "127.0.0.1",
      port,
      path,
      query,
      headers: { host: `127.0.0.1:${port}`, "x-amz-content-sha256": "UNSIGNED-PAYLOAD" },
    });
    const qs = new URLSearchParams(query).toString();
    return fetch(`${endpoint}${path}${qs ? `?${qs}` : ""}`, { method, headers: signed.headers });
  };
  const dir = mkdtempSync(join(tmpdir(), "media-s3-"));
  return {
    endpoint,
    written,
    env: () => ({
      DATA_DIR: dir,
      MEDIA_STORAGE: "s3",
      MEDIA_S3_ENDPOINT: endpoint,
      MEDIA_S3_BUCKET: BUCKET,
      MEDIA_S3_REGION: "us-east-1",
      MEDIA_S3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      MEDIA_S3_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      MEDIA_S3_PREFIX: PREFIX,
    }),
    async keys() {
      const res = await send("GET", `/${BUCKET}`, { "list-type": "2", prefix: PREFIX, "max-keys": "1000" });
      if (!res.ok) throw new Error(`list: ${res.status} ${await res.text()}`);
      return [...(await res.text()).matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!.slice(PREFIX.length));
    },
    async has(key) {
      const res = await send("HEAD", `/${BUCKET}/${PREFIX}${key}`);
      await res.body?.cancel();
      return res.ok;
    },
    async head(key) {
      const res = await send("HEAD", `/${BUCKET}/${PREFIX}${key}`);
      await res.body?.cancel();
      if (!res.ok) throw new Error(`head ${key}: ${res.status}`);
      return res.headers;
    },
    async stop() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
