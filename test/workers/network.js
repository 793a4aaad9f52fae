/**
 * Stands in for the Internet in the workerd tests: the Worker under test has this Worker as its
 * outbound service, so every `fetch` it makes lands here. It answers DNS-over-HTTPS JSON queries
 * (every name resolves to one public IPv4 address, so the egress guard's real DoH resolver and
 * address check run), plays the sinks, and consumes the dead-letter queue. The tests read what
 * it saw through a service binding (NETWORK) on the host control.test.
 *
 * Sinks by path: /ok answers 200; /flaky 500 on the first attempt of each webhook-id, then 200;
 * /gone 410 (permanent); /down 500 always; /redirect 307 to a loopback address; /limited 429
 * with Retry-After: 60; /v1/messages answers as an Anthropic model, with a verdict that denies
 * (ok false, "judged in workerd"), after 1 s when the prompt holds "slow-model", after 5 s when it
 * holds "late-model", after 60 s when it holds "stuck-model"; a prompt that holds "refused-model" gets a 400, one that holds "bad-gzip-model" a body that
 * names gzip and is not. Names under
 * `private.` resolve to 10.0.0.1. Every request is recorded, whatever its host, so one the guard
 * should have refused (a literal 169.254.169.254, a followed redirect) would show here; the DoH
 * questions are recorded apart (/lookups), each a subrequest of the Worker's.
 */
const PUBLIC_ADDRESS = "93.184.215.14";
const PRIVATE_ADDRESS = "10.0.0.1";
const SLOW_MODEL_MS = 1000;
const LATE_MODEL_MS = 5000;
const STUCK_MODEL_MS = 60_000;
const requests = [];
/** The DoH questions asked, `name type`, in order. */
const lookups = [];
const deadLetters = [];
const attemptsById = new Map();

function doh(url) {
  const name = url.searchParams.get("name") ?? "";
  const type = url.searchParams.get("type");
  lookups.push(`${name} ${type}`);
  // A name under private. stands for one whose DNS points inside a network (rebinding's first step).
  const address = name.startsWith("private.") ? PRIVATE_ADDRESS : PUBLIC_ADDRESS;
  const answer = type === "A" ? [{ name, type: 1, TTL: 60, data: address }] : [];
  return Response.json(
    { Status: 0, Answer: answer },
    { headers: { "content-type": "application/dns-json" } },
  );
}

async function sink(request, url) {
  const body = await request.text();
  const key = `${url.pathname} ${request.headers.get("webhook-id") ?? ""}`;
  const attempt = (attemptsById.get(key) ?? 0) + 1;
  attemptsById.set(key, attempt);
  let status = 200;
  if (url.pathname === "/flaky" && attempt === 1) status = 500;
  if (url.pathname === "/down") status = 500;
  if (url.pathname === "/gone") status = 410;
  if (url.pathname === "/redirect") status = 307;
  if (url.pathname === "/limited") status = 429;
  requests.push({ url: request.url, headers: Object.fromEntries(request.headers), body, status, attempt });
  if (status === 307)
    return new Response(null, { status, headers: { location: "http://127.0.0.1:9001/followed" } });
  const headers = status === 429 ? { "retry-after": "60" } : {};
  return new Response(status === 200 ? "ok" : "failed", { status, headers });
}

async function model(request) {
  const body = await request.text();
  requests.push({
    url: request.url,
    headers: Object.fromEntries(request.headers),
    body,
    status: 200,
    attempt: 1,
  });
  if (body.includes("slow-model")) await new Promise((resolve) => setTimeout(resolve, SLOW_MODEL_MS));
  if (body.includes("late-model")) await new Promise((resolve) => setTimeout(resolve, LATE_MODEL_MS));
  if (body.includes("stuck-model")) await new Promise((resolve) => setTimeout(resolve, STUCK_MODEL_MS));
  if (body.includes("refused-model"))
    return Response.json(
      { type: "error", error: { type: "invalid_request_error", message: "refused" } },
      { status: 400 },
    );
  // A body that names gzip and is not: as it came, not compressed again on its way out.
  if (body.includes("bad-gzip-model"))
    return new Response('{"not":"gzip"}', {
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
      encodeBody: "manual",
    });
  const input = { ok: false, reason: "judged in workerd" };
  return Response.json({
    content: [{ type: "tool_use", id: "t", name: "verdict", input }],
    stop_reason: "tool_use",
  });
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.hostname === "control.test") {
      if (url.pathname === "/requests") return Response.json(requests);
      if (url.pathname === "/lookups") return Response.json(lookups);
      if (url.pathname === "/dead-letters") return Response.json(deadLetters);
      return new Response("no such control route", { status: 404 });
    }
    if (url.hostname === "cloudflare-dns.com") return doh(url);
    if (url.pathname === "/v1/messages") return model(request);
    return sink(request, url);
  },
  async queue(batch) {
    for (const message of batch.messages) {
      deadLetters.push({ queue: batch.queue, id: message.id, body: message.body });
      message.ack();
    }
  },
};
