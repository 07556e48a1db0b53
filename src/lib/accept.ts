// Content negotiation shared by every answer that may be sent compressed (delivery, the studio, the explorer).

/** True when the client takes gzip (listed, or `*`, and not refused with q=0). */
export function acceptsGzip(request: Request): boolean {
  const ae = request.headers.get("accept-encoding");
  if (ae === null) return false;
  let star = false;
  for (const part of ae.toLowerCase().split(",")) {
    const [coding = "", ...params] = part.split(";");
    const name = coding.trim();
    if (name !== "gzip" && name !== "*") continue;
    const q = params.map((x) => x.trim()).find((x) => x.startsWith("q="));
    const ok = q === undefined || Number(q.slice(2)) > 0;
    if (name === "gzip") return ok;
    star = ok;
  }
  return star;
}
