/**
 * The "workers" test project: test/workers/*.test.ts run inside workerd with
 * @cloudflare/vitest-pool-workers, against the Worker of wrangler.toml (its real bindings:
 * Cloudflare Queues producer + consumer + DLQ, KV) with a test policy. The network is the one
 * stand-in: the Worker's outbound fetches go to test/workers/network.js (DoH answers, sinks),
 * which also consumes the dead-letter queue so the tests can see what reached it.
 *
 * The Worker runs from its source (`main` below; wrangler.toml's `main` is the bundle that
 * scripts/build-worker.mjs writes for upload), so its import() of lazily loaded modules resolves
 * through Vite. The bundle as uploaded, main module and chunks, runs in workerd in
 * test/runtime/worker-bundle.test.ts.
 */
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineProject } from "vitest/config";
import { FANOUT_POLICY, WEBHOOK_SECRET } from "./test/workers/fanout-policy.js";

export default defineProject({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.toml" },
      main: "./src/entry/workers.ts",
      miniflare: {
        bindings: {
          HOOKGATE_POLICY: JSON.stringify(FANOUT_POLICY),
          WHSEC: WEBHOOK_SECRET,
          JUDGE_KEY: "sk-workerd",
          // [vars] values that are no string, which wrangler binds as JSON (binding-kinds.test.ts).
          VARS_NUMBER: 12345,
          VARS_TABLE: { key: "sk-workerd" },
          VARS_FLAG: true,
          // A name hookgate does not repeat (src/core/secret-ref.ts nameToShow): it reads like a secret.
          VarsNumber2: 678,
        },
        secretsStoreSecrets: {
          STORE_KEY: { store_id: "hookgate-test", secret_name: "judge-key" },
        },
        // Flush batches at once (wrangler.toml waits up to 2 s), and send a batch whose handler
        // threw back at once (wrangler.toml's retry_delay waits 300 s); the rest as wrangler.toml.
        queueConsumers: {
          "hookgate-jobs": {
            maxBatchSize: 10,
            maxBatchTimeout: 0,
            maxRetries: 25,
            deadLetterQueue: "hookgate-jobs-dlq",
            retryDelay: 0,
          },
          // The queue contract (test/workers/queue-contract.test.ts): its own queue and DLQ,
          // both consumed by the Worker's queue handler, which the test routes to its consumer.
          "hookgate-contract": {
            maxBatchSize: 10,
            maxBatchTimeout: 0,
            maxRetries: 3,
            deadLetterQueue: "hookgate-contract-dlq",
            // wrangler.toml's retry_delay: a message the consumer retries with delaySeconds 0
            // (a retry at once) comes back at once, not after it, or the suite times out.
            retryDelay: 300,
          },
          "hookgate-contract-dlq": { maxBatchSize: 10, maxBatchTimeout: 0 },
        },
        queueProducers: {
          HOOKGATE_QUEUE: "hookgate-jobs",
          HOOKGATE_DLQ: "hookgate-jobs-dlq",
          CONTRACT_QUEUE: "hookgate-contract",
          CONTRACT_DLQ: "hookgate-contract-dlq",
        },
        outboundService: "network",
        serviceBindings: { NETWORK: "network" },
        workers: [
          {
            name: "network",
            modules: true,
            scriptPath: "./test/workers/network.js",
            compatibilityDate: "2026-04-26",
            queueConsumers: { "hookgate-jobs-dlq": { maxBatchTimeout: 0 } },
          },
        ],
      },
    }),
  ],
  test: {
    name: "workers",
    include: ["test/workers/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
