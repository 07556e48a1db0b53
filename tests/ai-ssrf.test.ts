import { describe, expect, test } from "bun:test";
import { type AddressClass, checkOutboundUrl, classifyAddress, classifyHost, embeddedIPv4, parseIPv4, parseIPv6, systemResolver, type UrlPolicy } from "../src/lib/ssrf";

const v4 = (s: string): string | null => {
  const b = parseIPv4(s);
  return b ? Array.from(b).join(".") : null;
};
const cls = (host: string): AddressClass | "invalid" | null => classifyHost(host);

describe("SSRF guard: host parsing", () => {
  test("every inet_aton IPv4 spelling is parsed to its address", () => {
    expect(v4("127.0.0.1")).toBe("127.0.0.1");
    expect(v4("2130706433")).toBe("127.0.0.1");
    expect(v4("0x7f000001")).toBe("127.0.0.1");
    expect(v4("0X7F.1")).toBe("127.0.0.1");
    expect(v4("017700000001")).toBe("127.0.0.1");
    expect(v4("0177.0.0.01")).toBe("127.0.0.1");
    expect(v4("127.1")).toBe("127.0.0.1");
    expect(v4("127.0.1")).toBe("127.0.0.1");
    expect(v4("169.254.43518")).toBe("169.254.169.254");
    expect(v4("0xa9.0xfe.0xa9.0xfe")).toBe("169.254.169.254");
    expect(v4("2852039166")).toBe("169.254.169.254");
    expect(v4("0")).toBe("0.0.0.0");
    expect(v4("8.8.8.8.")).toBe("8.8.8.8");
    for (const bad of ["256.0.0.1", "1.2.3.4.5", "1.2.3.999", "4294967296", "08.1.1.1", "0x1g.1.1.1", "a.b.c.d", "", "1..2.3"]) expect(v4(bad)).toBeNull();
  });

  test("IPv6 text forms, including compressed and dotted-quad tails", () => {
    expect(Array.from(parseIPv6("::1")!)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    expect(Array.from(parseIPv6("[::ffff:127.0.0.1]")!.slice(10))).toEqual([255, 255, 127, 0, 0, 1]);
    expect(parseIPv6("1:2:3:4:5:6:7:8")).not.toBeNull();
    expect(parseIPv6("1:2:3:4:5:6:1.2.3.4")).not.toBeNull();
    for (const bad of ["1::2::3", "1:2:3:4:5:6:7:8:9", "::1:2:3:4:5:6:7:8", "fe80::1%eth0", "12345::", "::256.1.1.1", "1.2.3.4", "g::1", "::ffff:0177.0.0.1", "::ffff:1.2.3", "::ffff:01.2.3.4"])
      expect(parseIPv6(bad)).toBeNull();
  });

  test("IPv4 embedded in IPv6 is unwrapped: mapped, compatible, translated, NAT64, 6to4, Teredo, ISATAP", () => {
    const inner = (s: string): string[] => embeddedIPv4(parseIPv6(s)!).map((b) => Array.from(b).join("."));
    expect(inner("::ffff:7f00:1")).toEqual(["127.0.0.1"]);
    expect(inner("::7f00:1")).toEqual(["127.0.0.1"]);
    expect(inner("::ffff:0:a9fe:a9fe")).toEqual(["169.254.169.254"]);
    expect(inner("64:ff9b::a00:1")).toEqual(["10.0.0.1"]);
    expect(inner("64:ff9b:1::a00:1")).toEqual(["10.0.0.1"]);
    expect(inner("2002:c0a8:101::1")).toEqual(["192.168.1.1"]);
    expect(inner("2001:0:4136:e378:8000:63bf:80ff:fffe")).toEqual(["65.54.227.120", "127.0.0.1"]);
    expect(inner("fe80::5efe:a00:1")).toEqual(["10.0.0.1"]);
    expect(inner("::1")).toEqual([]);
    expect(inner("2606:4700::1111")).toEqual([]);
  });

  test("classification: public, private (allowed only by AI_ALLOW_PRIVATE_URLS) and forbidden (never)", () => {
    const cases: Array<[string, AddressClass | "invalid" | null]> = [
      ["8.8.8.8", "public"],
      ["93.184.216.34", "public"],
      ["[2606:4700:4700::1111]", "public"],
      ["[::ffff:8.8.8.8]", "public"],
      ["[2002:808:808::]", "public"],
      ["127.0.0.1", "private"],
      ["127.1", "private"],
      ["2130706433", "private"],
      ["0x7f.0.0.1", "private"],
      ["10.20.30.40", "private"],
      ["172.16.0.1", "private"],
      ["172.31.255.255", "private"],
      ["172.32.0.1", "public"],
      ["192.168.0.1", "private"],
      ["100.64.0.1", "private"],
      ["198.18.0.1", "private"],
      ["[::1]", "private"],
      ["[fc00::1]", "private"],
      ["[fd12:3456::1]", "private"],
      ["[::ffff:10.0.0.1]", "private"],
      ["[::ffff:7f00:1]", "private"],
      ["[::127.0.0.1]", "private"],
      ["[2002:7f00:1::]", "private"],
      ["[64:ff9b::7f00:1]", "private"],
      ["[2001:0:4136:e378:8000:63bf:80ff:fffe]", "private"],
      ["localhost", "private"],
      ["api.localhost", "private"],
      ["169.254.169.254", "forbidden"],
      ["169.254.170.2", "forbidden"],
      ["2852039166", "forbidden"],
      ["0xa9fea9fe", "forbidden"],
      ["100.100.100.200", "forbidden"],
      ["168.63.129.16", "forbidden"],
      ["0.0.0.0", "forbidden"],
      ["[::]", "forbidden"],
      ["[fd00:ec2::254]", "forbidden"],
      ["[fd00:ec2::23]", "forbidden"],
      ["[fe80::1]", "forbidden"],
      ["[::ffff:169.254.169.254]", "forbidden"],
      ["[::ffff:a9fe:a9fe]", "forbidden"],
      ["[64:ff9b::a9fe:a9fe]", "forbidden"],
      ["[2002:a9fe:a9fe::1]", "forbidden"],
      ["[ff02::1]", "forbidden"],
      ["224.0.0.1", "forbidden"],
      ["metadata.google.internal", "forbidden"],
      ["METADATA.GOOGLE.INTERNAL.", "forbidden"],
      ["metadata", "forbidden"],
      ["1.2.3.999", "invalid"],
      ["0x1.0x2.0xzz", null],
      ["api.openai.com", null],
    ];
    for (const [host, want] of cases) {
      if (cls(host) !== want) throw new Error(`${host}: ${cls(host)} (wanted ${want})`);
    }
    expect(classifyAddress(new Uint8Array([203, 0, 113, 9]))).toBe("private");
  });
});

describe("SSRF guard: URLs with DNS", () => {
  const dns: Record<string, string[]> = {
    "public.example": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
    "private.example": ["10.0.0.5"],
    "mixed.example": ["93.184.216.34", "::ffff:127.0.0.1"],
    "meta.example": ["169.254.169.254"],
    "garbage.example": ["not-an-ip"],
    // Not an RFC 4291 spelling (a leading zero in the dotted tail): unreadable, so refused, never read as 177.0.0.1.
    "octal-tail.example": ["::ffff:0177.0.0.1"],
  };
  const policy = (allowPrivate: boolean, unresolvable: UrlPolicy["unresolvable"] = "refuse"): UrlPolicy => ({
    allowPrivate,
    unresolvable,
    resolve: async (h) => {
      if (h === "slow.example") return new Promise<string[]>(() => {});
      const r = dns[h];
      if (!r) throw Object.assign(new Error("ENOTFOUND"), { code: "ENOTFOUND" });
      return r;
    },
    timeoutMs: 200,
  });
  const verdict = async (url: string, p: UrlPolicy): Promise<string> => {
    const r = await checkOutboundUrl(url, p);
    return r.ok ? "ok" : r.reason;
  };

  test("https and public only by default; every resolved address must pass", async () => {
    expect(await verdict("https://public.example/v1", policy(false))).toBe("ok");
    expect(await verdict("http://public.example/v1", policy(false))).toMatch(/must use https/);
    expect(await verdict("https://private.example/v1", policy(false))).toMatch(/private or loopback/);
    expect(await verdict("https://mixed.example/v1", policy(false))).toMatch(/private or loopback/);
    expect(await verdict("https://meta.example/v1", policy(false))).toMatch(/metadata/);
    expect(await verdict("https://garbage.example/v1", policy(false))).toMatch(/metadata/);
    expect(await verdict("https://octal-tail.example/v1", policy(false))).toMatch(/metadata/);
    expect(await verdict("https://127.0.0.1/v1", policy(false))).toMatch(/private or loopback/);
    expect(await verdict("https://[::ffff:127.0.0.1]/v1", policy(false))).toMatch(/private or loopback/);
    expect(await verdict("https://0x7f000001/v1", policy(false))).toMatch(/private or loopback/);
    expect(await verdict("file:///etc/passwd", policy(true))).toMatch(/http or https/);
    expect(await verdict("gopher://public.example/", policy(false))).toMatch(/https/);
    expect(await verdict("https://u:p@public.example/", policy(false))).toMatch(/credentials/);
    expect(await verdict("not a url", policy(false))).toMatch(/absolute URL/);
  });

  test("AI_ALLOW_PRIVATE_URLS allows http and private addresses but never metadata", async () => {
    expect(await verdict("http://private.example:11434/v1", policy(true))).toBe("ok");
    expect(await verdict("http://127.0.0.1:8080/v1", policy(true))).toBe("ok");
    expect(await verdict("http://[::1]:8080/v1", policy(true))).toBe("ok");
    expect(await verdict("http://mixed.example/v1", policy(true))).toBe("ok");
    for (const u of ["http://meta.example/", "http://169.254.169.254/", "http://[fd00:ec2::254]/", "http://[::ffff:169.254.169.254]/", "http://metadata.google.internal/", "http://0xa9fea9fe/"]) {
      expect(await verdict(u, policy(true))).toMatch(/metadata/);
    }
  });

  test("names that do not resolve (or resolve too slowly): refused at call time, accepted at create time", async () => {
    expect(await verdict("https://nowhere.example/v1", policy(false, "refuse"))).toMatch(/could not be resolved/);
    expect(await verdict("https://nowhere.example/v1", policy(false, "accept"))).toBe("ok");
    const started = performance.now();
    expect(await verdict("https://slow.example/v1", policy(false, "refuse"))).toMatch(/could not be resolved/);
    expect(performance.now() - started).toBeLessThan(1500);
    // Literal addresses never reach the resolver.
    expect(await verdict("https://10.0.0.1/", { ...policy(false, "accept"), resolve: async () => ["8.8.8.8"] })).toMatch(/private/);
  });

  test("the system resolver returns every address of a name", async () => {
    const addrs = await systemResolver("localhost");
    expect(addrs.length).toBeGreaterThan(0);
    for (const a of addrs) expect(["::1", "127.0.0.1"]).toContain(a);
  });
});
