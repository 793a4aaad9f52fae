import { describe, expect, it } from "vitest";
import { createNotification, type DeliveryJob, readJobEnvelope } from "../../src/core/delivery.js";
import { parseHookEvent } from "../../src/core/events.js";
import { MASK } from "../../src/core/mask.js";

const job: DeliveryJob = {
  id: "evt_1.audit",
  sink: "audit",
  notification: {
    id: "evt_1",
    createdAt: 0,
    team: "default",
    client: "claude-code",
    eventName: "PreToolUse",
    decision: "deny",
    reason: "no",
    ruleId: "r1",
    event: { tool_name: "Bash" },
  },
};

describe("readJobEnvelope", () => {
  it.each([
    ["null", null, "body is not an {id, body} envelope"],
    ["a string", "evt_1.audit", "body is not an {id, body} envelope"],
    ["an array", [job.id, job], "body is not an {id, body} envelope"],
    ["an object with no id", { body: job }, "body is not an {id, body} envelope"],
    ["an id with no body", { id: job.id }, "body is not an {id, body} envelope"],
    [
      "a body that is no job",
      { id: job.id, body: { hello: "world" } },
      "envelope body is not a delivery job",
    ],
    ["a body that is an array", { id: job.id, body: [job] }, "envelope body is not a delivery job"],
    ["another id than its job's", { id: "evt_2.audit", body: job }, "envelope id is not its job's id"],
  ])("says why %s is no job's envelope", (_what, value, problem) => {
    expect(readJobEnvelope(value)).toBe(problem);
  });

  it("reads a job's envelope, its counts 0 when absent or not a count", () => {
    expect(readJobEnvelope({ id: job.id, body: job })).toEqual({ id: job.id, body: job, sent: 0, holds: 0 });
    expect(readJobEnvelope({ id: job.id, body: job, sent: 2, holds: -1 })).toEqual({
      id: job.id,
      body: job,
      sent: 2,
      holds: 0,
    });
  });
});

describe("createNotification", () => {
  // An unknown event's name is the agent's text, as the event's fields are: it is a Slack
  // message's title and a webhook's `type`, and was sent as the agent wrote it.
  it("scrubs the policy's secrets from an unknown event's name, as from the event, before the cut", () => {
    const secret = "Qm7vX2pL9rT4wZ8kN3cF6hJ1";
    for (const name of [`Custom${secret}`, `${"x".repeat(240)}${secret}`]) {
      const parsed = parseHookEvent({ hook_event_name: name, session_id: "s1" }, "claude-code");
      if (!parsed.ok) throw new Error("the event did not parse");
      const n = createNotification(
        "n",
        0,
        parsed.value,
        { team: "t", decision: "none", ruleId: "r" },
        undefined,
        [secret],
      );
      expect(JSON.stringify(n)).not.toContain(secret.slice(0, 8));
      expect(n.eventName).toContain(MASK);
    }
  });

  // Only a head of a long name is read, and its end may split a secret: masked, a long one is a
  // short mask, so a cut at the name's length reached past them to the split one's start.
  it("shows no start of a secret the end of a long name's read head splits, and marks the cut", () => {
    const secret = `Qm7vX2pL9rT4wZ8kN3${"a".repeat(600)}`;
    const parsed = parseHookEvent(
      { hook_event_name: `${secret} `.repeat(40), session_id: "s1" },
      "claude-code",
    );
    if (!parsed.ok) throw new Error("the event did not parse");
    const n = createNotification(
      "n",
      0,
      parsed.value,
      { team: "t", decision: "none", ruleId: "r" },
      undefined,
      [secret],
    );
    expect(n.eventName).not.toContain("Qm");
    expect(n.eventName).toMatch(/^(?:\[masked\] )+.*…\[truncated by hookgate\]$/);
  });

  // The event's own copy of the name (hook_event_name) is masked by shape (maskValue): the name
  // shown as a Slack message's title, a Discord field and a webhook's `type` must be too.
  it("masks a credential by its shape in an unknown event's name, as in the event, before the cut", () => {
    const token = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
    for (const name of [`Custom ${token}`, `Custom AKIAIOSFODNN7EXAMPLE`, `${"x ".repeat(120)}${token}`]) {
      const parsed = parseHookEvent({ hook_event_name: name, session_id: "s1" }, "claude-code");
      if (!parsed.ok) throw new Error("the event did not parse");
      const n = createNotification("n", 0, parsed.value, { team: "t", decision: "none", ruleId: "r" });
      expect(n.event["hook_event_name"]).toContain(MASK);
      expect(n.eventName).toContain(MASK);
      expect(JSON.stringify(n)).not.toMatch(/ghp_A1b2|AKIAIOSF/);
    }
  });
});
