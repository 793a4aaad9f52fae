import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Generous: e2e tests start real processes, and CI shares two cores with everything else.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    allowOnly: false,
    // CI reads its "N passed, N failed" line from this report (.ci/run).
    reporters: process.env.CI ? ["default", "json"] : ["default"],
    outputFile: { json: ".ci/vitest-report.json" },
    // One `vitest run` runs both: Node tests in Node, test/workers inside workerd.
    projects: [
      {
        extends: true,
        test: {
          name: "node",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/workers/**"],
          // A TMPDIR of the run's own, checked for leftovers at the end; each test's temporary
          // directories and processes cleaned up when it ends (test/support/temp.ts).
          globalSetup: ["test/support/run-tmpdir.ts"],
          setupFiles: ["test/support/cleanup.ts"],
          runner: "test/support/runner.ts",
        },
      },
      "./vitest.workers.config.ts",
    ],
  },
});
