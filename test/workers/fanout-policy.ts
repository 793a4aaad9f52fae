/**
 * The policy the Worker under test runs with (its HOOKGATE_POLICY binding, set in
 * vitest.workers.config.ts): one notify rule per behaviour of the stand-in sink
 * (test/workers/network.js), and prompt rules for WebFetch and WebSearch its stand-in model judges. Retry
 * schedules of 0 s keep the real queue's retries immediate.
 */
export const WEBHOOK_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
export const SINK_ORIGIN = "https://sink.hookgate.test";
export const MODEL_ORIGIN = "https://model.hookgate.test";

const webhook = (path: string, retryScheduleSeconds: number[]) => ({
  type: "webhook",
  url: `${SINK_ORIGIN}${path}`,
  secret: "env:WHSEC",
  retryScheduleSeconds,
});

export const FANOUT_POLICY = {
  version: 1,
  rules: [
    {
      id: "no-echo",
      on: "PreToolUse",
      matcher: "Bash",
      if: "Bash(echo *)",
      decide: "deny",
      reason: "echo is not allowed here",
      notify: ["audit"],
    },
    { id: "to-flaky", on: "SessionEnd", where: { reason: "flaky" }, notify: ["flaky"] },
    { id: "to-gone", on: "SessionEnd", where: { reason: "gone" }, notify: ["gone"] },
    { id: "to-down", on: "SessionEnd", where: { reason: "down" }, notify: ["down"] },
    { id: "prompts", on: "Notification", notify: ["audit"] },
    // Targets the egress guard refuses (test/workers/queue.test.ts).
    { id: "to-metadata", on: "SessionEnd", where: { reason: "metadata" }, notify: ["metadata"] },
    { id: "to-private", on: "SessionEnd", where: { reason: "private" }, notify: ["private"] },
    { id: "to-redirect", on: "SessionEnd", where: { reason: "redirect" }, notify: ["redirect"] },
    // Judged by the stand-in model (test/workers/prompt-rules.test.ts, requests through SELF).
    {
      id: "judge-fetches",
      on: "PreToolUse",
      matcher: "WebFetch",
      prompt: { text: "Is this fetch safe? $ARGUMENTS", model: "judge", onError: "ask" },
      notify: ["audit"],
    },
    // Its own model, so that its calls and judge-fetches' never wait for each other's slot.
    {
      id: "judge-searches",
      on: "PreToolUse",
      matcher: "WebSearch",
      prompt: { text: "Is this search safe? $ARGUMENTS", model: "brief", onError: "ask", timeoutMs: 1000 },
    },
  ],
  models: {
    judge: {
      provider: "anthropic",
      model: "claude-haiku-4-5",
      apiKey: "env:JUDGE_KEY",
      url: `${MODEL_ORIGIN}/v1/messages`,
      // One call at a time: a request that stopped holding its slot would hold up every later call.
      maxConcurrent: 1,
    },
    brief: {
      provider: "anthropic",
      model: "claude-haiku-4-5",
      apiKey: "env:JUDGE_KEY",
      url: `${MODEL_ORIGIN}/v1/messages`,
      maxConcurrent: 1,
    },
  },
  sinks: {
    audit: webhook("/ok", [0]),
    flaky: webhook("/flaky", [0, 0]),
    gone: webhook("/gone", [0, 0]),
    down: webhook("/down", [0]),
    metadata: { type: "webhook", url: "http://169.254.169.254/latest/meta-data/", retryScheduleSeconds: [0] },
    private: { type: "webhook", url: "https://private.hookgate.test/ok", retryScheduleSeconds: [0] },
    redirect: webhook("/redirect", [0]),
  },
};
