/**
 * The Workers egress module, run under Node's fetch (the same WHATWG fetch contract) against
 * a loopback DNS-over-HTTPS server speaking the JSON API and a loopback target. In workerd it
 * runs with Cloudflare's fetch and resolver; the decisions are the same code.
 */
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDohResolver, createWorkersEgress } from "../../src/adapters/egress/workers-fetch.js";
import { compileEgressPolicy } from "../../src/core/egress/policy.js";
import { type LoopbackServer, loopbackServer } from "../support/loopback.js";

const zone: Record<
  string,
  { A?: string[]; AAAA?: string[]; status?: number; aaaaStatus?: number; delayMs?: number }
> = {
  "hooks.test": { A: ["127.0.0.1"] },
  "servfail.test": { A: ["127.0.0.1"], aaaaStatus: 2 },
  "metadata.test": { A: ["169.254.169.254"] },
  "mixed.test": { A: ["127.0.0.1"], AAAA: ["fd00:ec2::254"] },
  "gone.test": { status: 3 },
  "empty.test": {},
  "slow.test": { A: ["127.0.0.1"], delayMs: 1500 },
};

/** JSON that is no DoH JSON answer, served at `/<key>`, to both queries. */
const ODD_ANSWERS: Record<string, unknown> = {
  "null-record": { Status: 0, Answer: [null] },
  "no-status": { Answer: [{ name: "hooks.test", type: 1, TTL: 30, data: "127.0.0.1" }] },
  "status-text": { Status: "0", Answer: [{ name: "hooks.test", type: 1, TTL: 30, data: "127.0.0.1" }] },
  "a-list": [],
  "answer-not-a-list": { Status: 0, Answer: { name: "hooks.test", type: 1, TTL: 30, data: "127.0.0.1" } },
  "numeric-data": { Status: 0, Answer: [{ name: "hooks.test", type: 1, TTL: 30, data: 2130706433 }] },
};

let doh: LoopbackServer;
let target: LoopbackServer;
/** The answers of `/hang`, never sent; ended after the tests. */
const hanging: ServerResponse[] = [];

beforeAll(async () => {
  doh = await loopbackServer((req, res) => {
    const url = new URL(req.url, "http://doh");
    if (url.pathname === "/wire") return void res.writeHead(400).end("a DNS wire-format endpoint");
    if (url.pathname === "/html")
      return void res.writeHead(200, { "content-type": "text/html" }).end("<html>");
    const odd = ODD_ANSWERS[url.pathname.slice(1)];
    if (odd !== undefined)
      return void res.writeHead(200, { "content-type": "application/dns-json" }).end(JSON.stringify(odd));
    const name = url.searchParams.get("name") ?? "";
    const type = url.searchParams.get("type") as "A" | "AAAA";
    const entry = zone[name] ?? { status: 3 };
    const data = entry[type] ?? [];
    const answer = () => {
      res.writeHead(200, { "content-type": "application/dns-json" });
      res.end(
        JSON.stringify({
          Status: (type === "AAAA" ? entry.aaaaStatus : undefined) ?? entry.status ?? 0,
          Answer: data.map((d) => ({ name, type: type === "A" ? 1 : 28, TTL: 30, data: d })),
        }),
      );
    };
    if (entry.delayMs) setTimeout(answer, entry.delayMs);
    else answer();
  });
  target = await loopbackServer((req, res) => {
    if (req.url === "/redirect") res.writeHead(307, { location: "http://127.0.0.1:1/internal" }).end();
    else if (req.url === "/redirect-secret")
      res.writeHead(302, { location: "https://hooks.example/T0/B0/s3cr3tP4th?token=s3cr3tQu3ry" }).end();
    else if (req.url === "/redirect-relative")
      res.writeHead(301, { location: "/login/s3cr3tP4th?token=s3cr3tQu3ry" }).end();
    else if (req.url === "/big") res.end("é".repeat(3000));
    else if (req.url === "/endless") {
      // A status, then a body that never ends.
      res.writeHead(200);
      res.write("par");
    } else if (req.url === "/hang") hanging.push(res);
    else res.end(`got ${req.body}`);
  });
});
afterAll(async () => {
  for (const res of hanging) res.destroy();
  await doh.close();
  await target.close();
});

const egress = (allowCidrs: string[] = ["127.0.0.1/32"]) => {
  const compiled = compileEgressPolicy({ allowCidrs });
  return createWorkersEgress({
    policy: () => compiled.policy,
    resolve: createDohResolver({ endpoint: `${doh.url}/dns-query` }),
  });
};
const post = (url: string, allowCidrs?: string[]) =>
  egress(allowCidrs).send({
    url,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
    timeoutMs: 2000,
  });

describe("Workers egress", () => {
  it("reaches an allowed name after the DoH pre-check", async () => {
    // The platform resolves for fetch itself (no pin); here a fetch that resolves hooks.test
    // to loopback stands in for Cloudflare's resolver.
    const compiled = compileEgressPolicy({ allowCidrs: ["127.0.0.1/32"] });
    const fetched: string[] = [];
    const module = createWorkersEgress({
      policy: () => compiled.policy,
      resolve: createDohResolver({ endpoint: `${doh.url}/dns-query` }),
      fetch: (input, init) => {
        fetched.push(String(input));
        return fetch(String(input).replace("hooks.test", "127.0.0.1"), init);
      },
    });
    const res = await module.send({
      url: `http://hooks.test:${target.port}/x`,
      method: "POST",
      headers: {},
      body: "{}",
      timeoutMs: 2000,
    });
    expect(res.ok && res.value.body).toBe("got {}");
    expect(fetched).toEqual([`http://hooks.test:${target.port}/x`]);
  });

  it("judges every A and AAAA answer from DoH", async () => {
    const blocked = await post("http://metadata.test/");
    expect(!blocked.ok && blocked.error).toMatchObject({
      code: "EGRESS_BLOCKED_ADDRESS",
      address: "169.254.169.254",
    });
    const mixed = await post("http://mixed.test/");
    expect(!mixed.ok && mixed.error.address).toBe("fd00:ec2::254");
    const empty = await post("http://empty.test/");
    expect(!empty.ok && empty.error).toEqual({
      code: "EGRESS_NO_ADDRESS",
      stage: "dns",
      reason: "empty.test resolved to no address",
    });
  });

  it("says a name that does not exist (NXDOMAIN) could not be resolved, as Node says ENOTFOUND", async () => {
    const gone = await post("http://gone.test/");
    expect(!gone.ok && gone.error).toEqual({
      code: "EGRESS_DNS_FAILED",
      stage: "dns",
      reason: "gone.test could not be resolved over DoH (NXDOMAIN, DNS status 3: the name does not exist)",
    });
  });

  it("counts the DoH look-up in the send's time limit, and sends nothing after it", async () => {
    const before = target.received.length;
    const compiled = compileEgressPolicy({ allowCidrs: ["127.0.0.1/32"] });
    const res = await createWorkersEgress({
      policy: () => compiled.policy,
      resolve: createDohResolver({ endpoint: `${doh.url}/dns-query` }),
      fetch: (input, init) => fetch(String(input).replace("slow.test", "127.0.0.1"), init),
    }).send({
      url: `http://slow.test:${target.port}/x`,
      method: "POST",
      headers: {},
      body: "{}",
      timeoutMs: 100,
    });
    expect(!res.ok && res.error).toEqual({
      code: "EGRESS_TIMEOUT",
      stage: "dns",
      reason: "slow.test was not resolved over DoH within 100 ms",
      timedOut: true,
    });
    // The DoH answer comes later and resolves to an allowed address: nothing may go out then.
    await new Promise((r) => setTimeout(r, 1700));
    expect(target.received.length).toBe(before);
  });

  it("applies the default address rules for a policy without an egress section", async () => {
    const module = createWorkersEgress({
      policy: () => undefined,
      resolve: createDohResolver({ endpoint: `${doh.url}/dns-query` }),
    });
    const send = (url: string) =>
      module.send({ url, method: "POST", headers: {}, body: "{}", timeoutMs: 2000 });
    const blocked = { ok: false, error: { code: "EGRESS_BLOCKED_ADDRESS", stage: "address" } };
    expect(await send(`${target.url}/x`)).toMatchObject(blocked);
    expect(await send("http://metadata.test/latest/meta-data/")).toMatchObject(blocked);
  });

  it("adds its question to a DoH endpoint that has a query of its own", async () => {
    const resolve = createDohResolver({ endpoint: `${doh.url}/dns-query?ct=application/dns-json` });
    expect(await resolve("hooks.test")).toEqual(["127.0.0.1"]);
    const asked = doh.received.slice(-2).map((r) => new URL(r.url, "http://doh").searchParams);
    expect(asked.map((q) => [q.get("ct"), q.get("name"), q.get("type")]).sort()).toEqual([
      ["application/dns-json", "hooks.test", "A"],
      ["application/dns-json", "hooks.test", "AAAA"],
    ]);
  });

  it("says why DoH gave no answer: the DNS status by name, or what is wrong with the endpoint", async () => {
    const compiled = compileEgressPolicy({ allowCidrs: ["127.0.0.1/32"] });
    const reason = async (endpoint: string, host: string) => {
      const res = await createWorkersEgress({
        policy: () => compiled.policy,
        resolve: createDohResolver({ endpoint }),
      }).send({ url: `http://${host}/`, method: "GET", headers: {}, timeoutMs: 2000 });
      return !res.ok && res.error.code === "EGRESS_DNS_FAILED" && res.error.reason;
    };
    expect(await reason(`${doh.url}/dns-query`, "servfail.test")).toBe(
      "servfail.test could not be resolved over DoH (its AAAA query was answered SERVFAIL, DNS status 2: the name's DNS servers failed to answer)",
    );
    expect(await reason(`${doh.url}/wire`, "hooks.test")).toMatch(
      new RegExp(
        `^hooks\\.test could not be resolved over DoH \\(the DoH endpoint ${doh.url}/… answered HTTP 400 to its (A|AAAA) query; it must serve the JSON API \\(application/dns-json\\)\\)$`,
      ),
    );
    expect(await reason(`${doh.url}/html`, "hooks.test")).toMatch(
      /the DoH endpoint http:\/\/127\.0\.0\.1:\d+\/… answered its (A|AAAA) query with no DNS JSON/,
    );
    expect(await reason("cloudflare-dns.com/dns-query", "hooks.test")).toBe(
      'hooks.test could not be resolved over DoH (the DoH endpoint "cloudflare-dns.com/dns-query" is not a URL (set HOOKGATE_DOH_ENDPOINT to one such as https://cloudflare-dns.com/dns-query))',
    );
  });

  it.each(Object.keys(ODD_ANSWERS))(
    "says a DoH answer that is JSON but no DNS JSON (%s) is the endpoint's fault, and sends nothing",
    async (path) => {
      const compiled = compileEgressPolicy({ allowCidrs: ["127.0.0.1/32"] });
      let sent = 0;
      const res = await createWorkersEgress({
        policy: () => compiled.policy,
        resolve: createDohResolver({ endpoint: `${doh.url}/${path}` }),
        fetch: async () => {
          sent++;
          return new Response("sent");
        },
      }).send({ url: "http://hooks.test/", method: "GET", headers: {}, timeoutMs: 2000 });
      expect(!res.ok && res.error).toMatchObject({ code: "EGRESS_DNS_FAILED", stage: "dns" });
      expect(!res.ok && res.error.reason).toMatch(
        /^hooks\.test could not be resolved over DoH \(the DoH endpoint http:\/\/127\.0\.0\.1:\d+\/… answered its (A|AAAA) query with no DNS JSON \(application\/dns-json\)\)$/,
      );
      expect(sent).toBe(0);
    },
  );

  it("names the setting that opens a refused address, literal or DoH answer, as the Node module does", async () => {
    const literal = await post("http://10.0.0.5/", []);
    expect(!literal.ok && literal.error.reason).toBe(
      `10.0.0.5 is in 10.0.0.0/8 (Private-Use, RFC 1918); to reach it on purpose, open it in the policy's egress.allowCidrs ("10.0.0.5/32")`,
    );
    const answer = await post("http://hooks.test/", []);
    expect(!answer.ok && answer.error.reason).toBe(
      `hooks.test resolves to 127.0.0.1: 127.0.0.1 is in 127.0.0.0/8 (Loopback, RFC 1122); to reach it on purpose, open it in the policy's egress.allowCidrs ("127.0.0.1/32")`,
    );
  });

  it("refuses a blocked literal without asking DoH", async () => {
    const before = doh.received.length;
    const res = await post("http://[::ffff:169.254.169.254]/", []);
    expect(!res.ok && res.error.code).toBe("EGRESS_BLOCKED_ADDRESS");
    expect(doh.received.length).toBe(before);
  });

  it("caches DoH answers for min(TTL, 60 s)", async () => {
    let now = 0;
    const resolve = createDohResolver({ endpoint: `${doh.url}/dns-query`, now: () => now });
    const before = doh.received.length;
    await resolve("hooks.test");
    await resolve("hooks.test");
    expect(doh.received.length - before).toBe(2); // one A and one AAAA query, once
    now = 31_000;
    await resolve("hooks.test");
    expect(doh.received.length - before).toBe(4);
  });

  it("shares a look-up under way, and one whose first caller gave up is made again for those still waiting", async () => {
    const resolve = createDohResolver({ endpoint: `${doh.url}/dns-query` });
    const before = doh.received.length;
    const first = new AbortController();
    const gaveUp = resolve("slow.test", first.signal);
    const waiting = resolve("slow.test");
    const alsoWaiting = new AbortController();
    const waitingToo = resolve("slow.test", alsoWaiting.signal);
    alsoWaiting.abort(new Error("its own deadline"));
    await expect(waitingToo).rejects.toThrow("its own deadline");
    first.abort(new Error("the first caller's deadline"));
    await expect(gaveUp).rejects.toThrow("the first caller's deadline");
    expect(await waiting).toEqual(["127.0.0.1"]);
    expect(await resolve("slow.test")).toEqual(["127.0.0.1"]);
    // The first caller's A and AAAA questions, then the waiting one's own: none for the others.
    expect(doh.received.length - before).toBe(4);
  });

  it("does not keep an empty answer or NXDOMAIN: a record added a moment later is used at once", async () => {
    const resolve = createDohResolver({ endpoint: `${doh.url}/dns-query`, now: () => 0 });
    await expect(resolve("later.test")).rejects.toThrow(/NXDOMAIN/);
    zone["later.test"] = {};
    try {
      expect(await resolve("later.test")).toEqual([]);
      zone["later.test"] = { A: ["93.184.215.14"] };
      expect(await resolve("later.test")).toEqual(["93.184.215.14"]);
    } finally {
      delete zone["later.test"];
    }
  });

  it("refuses an answer past the size cap, or cuts it there when asked to", async () => {
    const compiled = compileEgressPolicy({ allowCidrs: ["127.0.0.1/32"] });
    const module = createWorkersEgress({
      policy: () => compiled.policy,
      resolve: createDohResolver({ endpoint: `${doh.url}/dns-query` }),
      maxResponseBytes: 1001,
    });
    const request = { url: `${target.url}/big`, method: "POST" as const, headers: {}, timeoutMs: 2000 };
    const refused = await module.send(request);
    expect(!refused.ok && refused.error.code).toBe("EGRESS_RESPONSE_TOO_LARGE");
    const cut = await module.send({ ...request, truncateResponse: true });
    // 1,001 bytes: 500 two-byte characters and half of one, which decodes as U+FFFD.
    expect(cut.ok && cut.value).toMatchObject({ status: 200, body: `${"é".repeat(500)}\uFFFD` });
  });

  it("fails a call whose body never ends at its time limit, or keeps its status and what came when asked to cut", async () => {
    const request = { url: `${target.url}/endless`, method: "POST" as const, headers: {}, timeoutMs: 300 };
    const failed = await egress().send(request);
    expect(!failed.ok && failed.error).toMatchObject({ code: "EGRESS_TIMEOUT", timedOut: true });
    const cut = await egress().send({ ...request, truncateResponse: true });
    expect(cut.ok && cut.value).toMatchObject({
      status: 200,
      body: "par",
      cutShort: "its body did not end within 300 ms",
    });
  });

  it("answers with the status alone, the body not waited for, where its caller reads no body of that status", async () => {
    const request = { url: `${target.url}/endless`, method: "POST" as const, headers: {}, timeoutMs: 3000 };
    const res = await egress().send({ ...request, readsBodyOf: () => false });
    expect(res.ok && res.value).toMatchObject({ status: 200, body: "" });
  });

  it("says a call its caller gave up (a judge's deadline, serve stopping) was given up, not that it failed to connect", async () => {
    // As the Node module says it: a model slower than the request's deadline is no connection
    // failure, and must not count as one in the warning and hookgate_egress_refused_total.
    const refusals: unknown[] = [];
    const caller = new AbortController();
    const compiled = compileEgressPolicy({ allowCidrs: ["127.0.0.1/32"] });
    const module = createWorkersEgress({
      policy: () => compiled.policy,
      resolve: createDohResolver({ endpoint: `${doh.url}/dns-query` }),
      onRefusal: (refusal) => refusals.push(refusal),
    });
    const before = target.received.length;
    const res = module.send({
      url: `${target.url}/hang`,
      method: "POST",
      headers: {},
      body: "{}",
      timeoutMs: 60_000,
      signal: caller.signal,
    });
    for (let waited = 0; target.received.length === before; waited += 5) {
      if (waited > 2000) throw new Error("the call never reached the server");
      await new Promise((r) => setTimeout(r, 5));
    }
    caller.abort();
    const given = {
      code: "EGRESS_TIMEOUT",
      stage: "response",
      reason: `${target.url}/… was given up before it answered`,
    };
    const answer = await res;
    expect(!answer.ok && answer.error).toEqual(given);
    expect(refusals).toEqual([given]);
  });

  it("says a call given up during its DoH look-up was not resolved yet", async () => {
    const caller = new AbortController();
    const compiled = compileEgressPolicy({ allowCidrs: ["127.0.0.1/32"] });
    const res = createWorkersEgress({
      policy: () => compiled.policy,
      resolve: createDohResolver({ endpoint: `${doh.url}/dns-query` }),
    }).send({
      url: `http://slow.test:${target.port}/x`,
      method: "POST",
      headers: {},
      body: "{}",
      timeoutMs: 60_000,
      signal: caller.signal,
    });
    caller.abort();
    const answer = await res;
    expect(!answer.ok && answer.error).toEqual({
      code: "EGRESS_DNS_FAILED",
      stage: "dns",
      reason: "slow.test was not resolved over DoH yet when the call was given up",
    });
  });

  it("refuses a redirect with redirect manual", async () => {
    const res = await post(`${target.url}/redirect`);
    expect(!res.ok && res.error).toMatchObject({
      code: "EGRESS_REDIRECT",
      reason: `${target.url}/… answered 307 to http://127.0.0.1:1/…; redirects are never followed`,
    });
  });

  it.each([
    ["an absolute Location", "/redirect-secret", 302, "https://hooks.example/…"],
    ["a relative Location, read against the request URL", "/redirect-relative", 301, "TARGET/…"],
  ])(
    "refuses a redirect with %s, showing where it pointed without its path or query",
    async (_, path, status, shown) => {
      const res = await post(`${target.url}${path}`);
      expect(!res.ok && res.error).toEqual({
        code: "EGRESS_REDIRECT",
        stage: "response",
        reason: `${target.url}/… answered ${status} to ${shown.replace("TARGET", target.url)}; redirects are never followed`,
      });
      expect(JSON.stringify(res)).not.toMatch(/s3cr3t|login/);
    },
  );
});
