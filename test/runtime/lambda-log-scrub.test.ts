/** The Lambda runtime's log lines (stdout, CloudWatch) scrubbed of the policy's secret values. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createLambdaRuntime } from "../../src/entry/lambda-config.js";

const KEY = "plain7key7without7any7shape";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the Lambda runtime's logger", () => {
  it("masks the loaded policy's secret values in each line", async () => {
    const written: string[] = [];
    const runtime = createLambdaRuntime({
      env: {
        HOOKGATE_POLICY: JSON.stringify({
          version: 1,
          models: { judge: { provider: "anthropic", model: "m", apiKey: "env:KEY" } },
          rules: [],
        }),
        KEY,
      },
      bundledPolicy: undefined,
    });
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    expect((await runtime.config()).ok).toBe(true);
    runtime.logger.log("warn", "echoed", { reason: `the peer said ${KEY}` });
    vi.restoreAllMocks();
    const line = written.find((l) => l.includes('"msg":"echoed"'));
    expect(JSON.parse(line ?? "{}")).toMatchObject({ reason: "the peer said [masked]" });
    expect(written.join("")).not.toContain(KEY);
  });
});
