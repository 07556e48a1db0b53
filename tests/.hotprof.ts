// In-process: the front's hot read against a bare Response with the same bytes and headers.
import { harness, seedNode, seedProject } from "./helpers";

const h = await harness({ LOG_LEVEL: process.env.LL ?? "info" }, process.env.LL === "info" ? { log: (await import("../src/lib/log")).createLogger("info", () => {}) } : {});
const p = await seedProject(h, { public_base_url: "https://www.example.com" });
const blocks = Array.from({ length: 20 }, (_, i) => ({ type: "text", data: { text: `Block ${i} `.repeat(30) } }));
await seedNode(h, p.slug, { slug: "page", title: "Page", blocks }, true);
const url = `http://localhost/api/p/${p.slug}/nodes/by-path/page`;
const first = await h.app.handle(new Request(url));
const bytes = new Uint8Array(await first.arrayBuffer());
const hdrs: Record<string, string> = {};
first.headers.forEach((v, k) => {
  if (k !== "content-length") hdrs[k] = v;
});
console.log("bytes", bytes.length, Object.keys(hdrs).join(","));
const N = 200_000;
const reqs = Array.from({ length: 1000 }, () => new Request(url, { headers: { "user-agent": "wrk", host: "localhost" } }));
function run(label: string, f: (r: Request) => unknown) {
  for (let i = 0; i < 20000; i++) f(reqs[i % 1000]!);
  const t = performance.now();
  for (let i = 0; i < N; i++) f(reqs[i % 1000]!);
  console.log(label, (((performance.now() - t) * 1000) / N).toFixed(3), "µs");
}
const ab = bytes.buffer.slice(0);
for (let k = 0; k < 3; k++) {
  run("front.answer", (r) => h.front.answer(r));
  run("bare new Response", (r) => {
    r.url;
    return new Response(ab, { headers: hdrs });
  });
}
