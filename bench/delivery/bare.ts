// The ceiling: a bare Bun.serve answering, per path, the exact bytes and headers the service sent.
const [file, port] = [process.argv[2], Number(process.argv[3])];
const answers = new Map<string, { body: ArrayBuffer; headers: Record<string, string> }>();
for (const [path, a] of Object.entries(JSON.parse(await Bun.file(file!).text()) as Record<string, { body: string; headers: Record<string, string> }>)) {
  const bytes = Buffer.from(a.body, "base64");
  answers.set(path, { body: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer, headers: a.headers });
}
Bun.serve({
  port,
  hostname: "127.0.0.1",
  fetch(req) {
    const url = req.url;
    const a = answers.get(url.slice(url.indexOf("/", 8)));
    return a ? new Response(a.body, { headers: a.headers }) : new Response("not found", { status: 404 });
  },
});
console.log(`bare server on ${port} with ${answers.size} answers`);

export {};
