// Cross-runtime: the outbound URL guard on a service with the default policy (no
// AI_ALLOW_PRIVATE_URLS): provider base_urls at private, loopback, link-local, mapped and encoded
// addresses, and at names that resolve to loopback, are refused with 400 invalid_request.
import { afterAll, describe, expect, test } from "bun:test";
import { lookup } from "node:dns/promises";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { seedProject } from "./seed";
import { describeRun, startService, stopAll } from "./service";

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

/** A host name (not *localhost, which the guard refuses by name) that this machine resolves to loopback only. */
async function loopbackName(): Promise<string> {
  const fromHosts = readFileSync("/etc/hosts", "utf8")
    .split("\n")
    .map((l) => l.replace(/#.*/, "").trim().split(/\s+/))
    .filter(([addr]) => addr && LOOPBACK.test(addr))
    .flatMap(([, ...names]) => names);
  for (const name of [hostname(), ...fromHosts]) {
    if (!name || /(^|\.)localhost\.?$/i.test(name)) continue;
    const addrs = await lookup(name, { all: true }).catch(() => []);
    if (addrs.length > 0 && addrs.every((a) => LOOPBACK.test(a.address))) return name;
  }
  throw new Error("no host name on this machine resolves to loopback only (looked at the host name and /etc/hosts)");
}

describe(`URL guard: ${describeRun()}`, async () => {
  afterAll(stopAll);
  const svc = await startService();

  const refused = async (ref: string, base_url: string): Promise<void> => {
    const res = await svc.admin("POST", `/admin/p/${ref}/ai/providers`, { name: "x", kind: "openai", api_key: "sk-xrt-guard", base_url });
    if (res.status !== 400) throw new Error(`${base_url} answered ${res.status}: ${res.text}`);
    expect(res.json.error).toMatchObject({ code: "invalid_request", details: { field: "base_url" } });
  };

  test("private, loopback, link-local, metadata, mapped and encoded addresses are refused", async () => {
    const p = await seedProject(svc);
    for (const url of [
      "https://127.0.0.1/v1",
      "https://10.0.0.8/v1",
      "https://192.168.1.1/v1",
      "https://169.254.169.254/latest",
      "https://[::1]/v1",
      "https://[::ffff:127.0.0.1]/v1",
      "https://[::ffff:a9fe:a9fe]/v1",
      "https://[fe80::1]/v1",
      "https://2130706433/v1",
      "https://0x7f.0.0.1/v1",
      "https://0177.0.0.1/v1",
      "http://api.vendor.example/v1",
    ])
      await refused(p.slug, url);
    const providers = await svc.admin("GET", `/admin/p/${p.slug}/ai/providers`);
    expect(providers.json.data).toEqual([]);
  });

  test("names that resolve to loopback are refused (localhost by name, another by this runtime's resolver)", async () => {
    const p = await seedProject(svc);
    await refused(p.slug, "https://localhost/v1");
    await refused(p.slug, `https://${await loopbackName()}/v1`);
  });

  test("an update to a private base_url is refused and the stored one kept", async () => {
    const p = await seedProject(svc);
    const ok = await svc.admin("POST", `/admin/p/${p.slug}/ai/providers`, { name: "ok", kind: "openai", api_key: "sk-xrt-guard", base_url: "https://api.vendor.example/v1" });
    expect(ok.status).toBe(201);
    const patched = await svc.admin("PATCH", `/admin/ai/providers/${ok.json.data.id}`, { base_url: "https://[::ffff:10.0.0.1]/v1" });
    expect(patched.status).toBe(400);
    expect(patched.json.error.code).toBe("invalid_request");
    const stored = await svc.admin("GET", `/admin/ai/providers/${ok.json.data.id}`);
    expect(stored.json.data.base_url).toBe("https://api.vendor.example/v1");
  });
});
