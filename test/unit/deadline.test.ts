import { describe, expect, it } from "vitest";
import { clientWaitsMs, DEADLINE_MARGIN_MS, requestDeadlineMs } from "../../src/core/deadline.js";

describe("requestDeadlineMs", () => {
  const policy = 60_000;
  it.each([
    ["PreToolUse", "claude-code", policy],
    ["SessionEnd", "claude-code", 1500 - DEADLINE_MARGIN_MS],
    ["UserPromptSubmit", "claude-code", 30_000 - DEADLINE_MARGIN_MS],
    ["PreToolUse", "deepcode", 30_000 - DEADLINE_MARGIN_MS],
    // deepagents v2 gives a command hook 600 s (30 s on UserPromptSubmit); only its legacy
    // dispatcher kills one after 5 s.
    ["PreToolUse", "deepagents", policy],
    ["UserPromptSubmit", "deepagents", 30_000 - DEADLINE_MARGIN_MS],
    ["tool.use", "deepagents-legacy", 5000 - DEADLINE_MARGIN_MS],
  ] as const)("caps %s from %s at its client's limit", (event, dialect, expected) => {
    expect(requestDeadlineMs(event, dialect, policy, undefined)).toBe(expected);
  });

  it("gives a deepcode hook its own timeout when the request says it: 30 s is only deepcode's default", () => {
    // deepcode waits `(hook.timeout ?? 30) * 1000` on every event (its src/hooks.ts); `hookgate init
    // --client deepcode --timeout 120` writes that timeout and x-hookgate-timeout: 120 beside it.
    for (const event of ["PreToolUse", "PermissionRequest", "UserPromptSubmit", "Stop", "MessageDisplay"]) {
      expect(requestDeadlineMs(event, "deepcode", 200_000, "120")).toBe(120_000 - DEADLINE_MARGIN_MS);
      expect(requestDeadlineMs(event, "deepcode", 200_000, undefined)).toBe(30_000 - DEADLINE_MARGIN_MS);
      expect(requestDeadlineMs(event, "deepcode", 200_000, "10")).toBe(10_000 - DEADLINE_MARGIN_MS);
    }
    expect(clientWaitsMs("PreToolUse", "deepcode", "120")).toBe(120_000 - DEADLINE_MARGIN_MS);
  });

  it("gives deepcode's SessionEnd its hook's timeout too: the 1.5 s budget is Claude Code's", () => {
    // deepcode runs a SessionEnd hook as any other, for `(hook.timeout ?? 30) * 1000` (its
    // src/hooks.ts); only Claude Code 2.1.3xx shares one 1.5 s budget among its SessionEnd hooks.
    expect(requestDeadlineMs("SessionEnd", "deepcode", 200_000, "120")).toBe(120_000 - DEADLINE_MARGIN_MS);
    expect(requestDeadlineMs("SessionEnd", "deepcode", 200_000, undefined)).toBe(30_000 - DEADLINE_MARGIN_MS);
    expect(clientWaitsMs("SessionEnd", "deepcode", "10")).toBe(10_000 - DEADLINE_MARGIN_MS);
    expect(requestDeadlineMs("SessionEnd", "claude-code", 200_000, "120")).toBe(60_000 - DEADLINE_MARGIN_MS);
    expect(requestDeadlineMs("SessionEnd", "deepagents", 200_000, undefined)).toBe(200_000);
  });

  it("gives a Claude Code SessionEnd hook its own timeout when the request says it, up to 60 s", () => {
    // Claude Code 2.1.332's SessionEnd hooks share a 1.5 s budget, raised up to 60 s when the
    // settings give a longer per-hook timeout (clients.md §2.2): `hookgate init` writes 2 s there,
    // and the hook is waited 2 s, not 1.5.
    expect(requestDeadlineMs("SessionEnd", "claude-code", 200_000, "2")).toBe(2000 - DEADLINE_MARGIN_MS);
    expect(clientWaitsMs("SessionEnd", "claude-code", "2")).toBe(2000 - DEADLINE_MARGIN_MS);
    expect(requestDeadlineMs("SessionEnd", "claude-code", 200_000, "45")).toBe(45_000 - DEADLINE_MARGIN_MS);
    // A shorter timeout than the budget cuts the hook sooner; a longer one than 60 s does not raise it further.
    expect(requestDeadlineMs("SessionEnd", "claude-code", 200_000, "1")).toBe(1000 - DEADLINE_MARGIN_MS);
    expect(requestDeadlineMs("SessionEnd", "claude-code", 200_000, "600")).toBe(60_000 - DEADLINE_MARGIN_MS);
    // Without the header only the 1.5 s budget is known, and the policy's deadline still caps it.
    expect(requestDeadlineMs("SessionEnd", "claude-code", 200_000, undefined)).toBe(
      1500 - DEADLINE_MARGIN_MS,
    );
    expect(requestDeadlineMs("SessionEnd", "claude-code", 800, "2")).toBe(800);
  });

  it("gives a deepagents UserPromptSubmit hook its own timeout when the request says it: 30 s is only the default", () => {
    // deepagents v2's runner uses a handler's own `timeout` over the event's default (its
    // hooks/runner.py); `hookgate init --client deepagents --timeout 90` writes both.
    expect(requestDeadlineMs("UserPromptSubmit", "deepagents", 200_000, "89")).toBe(
      89_000 - DEADLINE_MARGIN_MS,
    );
    expect(requestDeadlineMs("UserPromptSubmit", "deepagents", 200_000, undefined)).toBe(
      30_000 - DEADLINE_MARGIN_MS,
    );
    expect(clientWaitsMs("UserPromptSubmit", "deepagents", "89")).toBe(89_000 - DEADLINE_MARGIN_MS);
  });

  it("gives a Claude Code UserPromptSubmit or MessageDisplay hook its own timeout when the request says it", () => {
    // Claude Code 2.1.332 waits `hook.timeout*1000`, and its event's default (30 s, 10 s) only for a
    // hook with none (clients.md §2.2); SessionEnd's shared budget is raised to at most 60 s.
    expect(requestDeadlineMs("UserPromptSubmit", "claude-code", 200_000, "120")).toBe(
      120_000 - DEADLINE_MARGIN_MS,
    );
    expect(requestDeadlineMs("MessageDisplay", "claude-code", 200_000, "45")).toBe(
      45_000 - DEADLINE_MARGIN_MS,
    );
    expect(requestDeadlineMs("MessageDisplay", "claude-code", 200_000, undefined)).toBe(
      10_000 - DEADLINE_MARGIN_MS,
    );
    expect(requestDeadlineMs("SessionEnd", "claude-code", 200_000, "120")).toBe(60_000 - DEADLINE_MARGIN_MS);
    expect(requestDeadlineMs("tool.use", "deepagents-legacy", 200_000, "120")).toBe(
      5000 - DEADLINE_MARGIN_MS,
    );
  });

  it("keeps under the hook's own timeout when the request says it, and never under 50 ms", () => {
    expect(requestDeadlineMs("PreToolUse", "deepagents", policy, "25")).toBe(25_000 - DEADLINE_MARGIN_MS);
    expect(requestDeadlineMs("PreToolUse", "claude-code", policy, "0.1")).toBe(50);
    expect(requestDeadlineMs("PreToolUse", "claude-code", policy, "soon")).toBe(policy);
  });

  it("never passes Claude Code's 600 s default hook timeout without the header, nor setTimeout's 2^31-1 ms", () => {
    for (const deadline of [900_000, 2 ** 31, 3_000_000_000, Number.MAX_SAFE_INTEGER]) {
      expect(requestDeadlineMs("PreToolUse", "claude-code", deadline, undefined)).toBe(
        600_000 - DEADLINE_MARGIN_MS,
      );
      expect(requestDeadlineMs("PreToolUse", "deepagents", deadline, "1e9")).toBe(
        Math.min(deadline, 2 ** 31 - 1),
      );
    }
    expect(clientWaitsMs("PreToolUse", "claude-code", "1e9")).toBe(2 ** 31 - 1);
    // A hook whose own timeout is longer waits that long (a review: a 900 s hook was cut at 600).
    expect(requestDeadlineMs("PreToolUse", "claude-code", 900_000, "900")).toBe(900_000 - DEADLINE_MARGIN_MS);
    expect(requestDeadlineMs("PreToolUse", "claude-code", 900_000, undefined)).toBe(
      600_000 - DEADLINE_MARGIN_MS,
    );
  });

  it("reads the first of a repeated header's values, and seconds written with an s", () => {
    for (const header of ["3, 3", "3,5", " 3 ,", "3s", "3.0s", "3s, 9"])
      expect(requestDeadlineMs("PreToolUse", "claude-code", policy, header)).toBe(3000 - DEADLINE_MARGIN_MS);
    for (const header of ["s", "3ms", "3 s", "abc, 3", ", 3", "", "-3s", "Infinitys", "3ss"])
      expect(requestDeadlineMs("PreToolUse", "claude-code", policy, header)).toBe(policy);
  });

  it("keeps under what the runtime leaves for answering (a Lambda invocation's time)", () => {
    expect(requestDeadlineMs("PreToolUse", "claude-code", policy, undefined, 1000)).toBe(1000);
    expect(requestDeadlineMs("PreToolUse", "claude-code", policy, "25", 28_500)).toBe(
      25_000 - DEADLINE_MARGIN_MS,
    );
    expect(requestDeadlineMs("PreToolUse", "claude-code", policy, undefined, -20)).toBe(50);
  });
});

describe("clientWaitsMs", () => {
  it("is the hook's own timeout less the margin, below the client's limit, and unknown without it", () => {
    expect(clientWaitsMs("PreToolUse", "claude-code", "10")).toBe(10_000 - DEADLINE_MARGIN_MS);
    expect(clientWaitsMs("SessionEnd", "claude-code", "10")).toBe(10_000 - DEADLINE_MARGIN_MS);
    expect(clientWaitsMs("SessionEnd", "claude-code", "90")).toBe(60_000 - DEADLINE_MARGIN_MS);
    expect(clientWaitsMs("PreToolUse", "claude-code", undefined)).toBeUndefined();
    expect(clientWaitsMs("PreToolUse", "claude-code", "soon")).toBeUndefined();
  });
});
