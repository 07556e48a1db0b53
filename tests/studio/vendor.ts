// A loopback stand-in for an OpenAI-compatible AI vendor (this machine reaches none): POST
// /v1/chat/completions with a Bearer key answers a chat completion whose text is the user message
// marked as translated ("[fr] …"); POST /v1/embeddings a 1024-number vector per input (from the
// text's characters: the suite checks that vectors are stored, not what they mean); the vendor's own
// error shape without a key.
import { createServer } from "node:http";

export interface Vendor {
  readonly baseUrl: string;
  readonly requests: number;
  /** The embeddings calls answered. */
  readonly embeddings: number;
  close(): Promise<void>;
}

export async function startVendor(target = "fr"): Promise<Vendor> {
  let requests = 0;
  let embeddings = 0;
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => (raw += String(d)));
    req.on("end", () => {
      requests += 1;
      res.setHeader("content-type", "application/json");
      if (req.method !== "POST" || (req.url !== "/v1/chat/completions" && req.url !== "/v1/embeddings")) {
        res.statusCode = 404;
        res.end(JSON.stringify({ error: { message: `unknown route ${req.method} ${req.url}`, type: "invalid_request_error", param: null, code: null } }));
        return;
      }
      if (!/^Bearer \S+$/.test(req.headers.authorization ?? "")) {
        res.statusCode = 401;
        res.end(JSON.stringify({ error: { message: "You didn't provide an API key.", type: "invalid_request_error", param: null, code: null } }));
        return;
      }
      if (req.url === "/v1/embeddings") {
        embeddings += 1;
        const { model, input } = JSON.parse(raw) as { model: string; input: string[] };
        res.end(
          JSON.stringify({ object: "list", model, data: input.map((text, index) => ({ object: "embedding", index, embedding: vectorOf(text) })), usage: { prompt_tokens: 10, total_tokens: 10 } }),
        );
        return;
      }
      const body = JSON.parse(raw) as { model: string; messages: Array<{ role: string; content: string }> };
      const user = body.messages.filter((m) => m.role === "user").pop()?.content ?? "";
      res.end(
        JSON.stringify({
          id: `chatcmpl-${requests}`,
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          choices: [{ index: 0, message: { role: "assistant", content: `[${target}] ${user}` }, finish_reason: "stop" }],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return requests;
    },
    get embeddings() {
      return embeddings;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** 1024 numbers, never all zero, from the text's character codes. */
function vectorOf(text: string): number[] {
  const v = new Array<number>(1024).fill(0.001);
  for (let i = 0; i < text.length; i++) {
    const k = (text.charCodeAt(i) * 31 + i) % 1024;
    v[k] = (v[k] ?? 0) + 1;
  }
  return v;
}
