import { describe, expect, it } from "vitest";
import { type DeliveryJob, readJobEnvelope } from "../../src/core/delivery.js";

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
