// A webhook receiver on loopback for the webhook tests: records every request (headers, body,
// arrival time) and answers as the test tells it, per path.
export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

type Answer = { status: number; headers?: Record<string, string>; delayMs?: number; hang?: boolean };

export interface Receiver {
  url(path: string): string;
  received: Received[];
  /** What the next requests to `path` get, in turn; afterwards 200. */
  script(path: string, answers: Answer[]): void;
  on(path: string): Received[];
  stop(): void;
}

export function startReceiver(): Receiver {
  const received: Received[] = [];
  const scripts = new Map<string, Answer[]>();
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 30,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const body = await req.text();
      received.push({ path, headers: Object.fromEntries(req.headers), body, at: Date.now() });
      const answer = scripts.get(path)?.shift() ?? { status: 200 };
      if (answer.hang) await new Promise(() => {});
      if (answer.delayMs) await Bun.sleep(answer.delayMs); // fixed wait: a slow endpoint, as the test scripted it
      return new Response("ok", { status: answer.status, headers: answer.headers });
    },
  });
  return {
    url: (path) => `http://127.0.0.1:${server.port}${path}`,
    received,
    script: (path, answers) => void scripts.set(path, [...answers]),
    on: (path) => received.filter((r) => r.path === path),
    stop: () => void server.stop(true),
  };
}
