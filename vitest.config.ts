import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    allowOnly: false,
    // CI reads its "N passed, N failed" line from this report (.ci/run).
    reporters: process.env.CI ? ["default", "json"] : ["default"],
    outputFile: { json: ".ci/vitest-report.json" },
  },
});
