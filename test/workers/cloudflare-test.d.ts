/**
 * The parts of `cloudflare:test` (@cloudflare/vitest-pool-workers 0.15) these tests use, typed
 * structurally so the repository's one tsconfig (Node types) checks them without pulling
 * @cloudflare/workers-types' globals into every file.
 */
declare module "cloudflare:test" {
  interface ServiceBinding {
    fetch(input: string | Request, init?: RequestInit): Promise<Response>;
  }
  interface TestExecutionContext {
    waitUntil(promise: Promise<unknown>): void;
    passThroughOnException(): void;
  }
  interface TestMessage<Body> {
    readonly id: string;
    readonly timestamp: Date;
    readonly body: Body;
    readonly attempts: number;
  }
  interface TestMessageBatch<Body> {
    readonly queue: string;
    readonly messages: readonly (TestMessage<Body> & {
      ack(): void;
      retry(options?: { delaySeconds?: number }): void;
    })[];
    ackAll(): void;
    retryAll(options?: { delaySeconds?: number }): void;
  }
  interface QueueResult {
    readonly outcome: string;
    readonly ackAll: boolean;
    readonly retryBatch: { readonly retry: boolean };
    readonly explicitAcks: readonly string[];
    readonly retryMessages: readonly { readonly msgId: string }[];
  }
  /** The Worker's bindings (wrangler.toml + vitest.workers.config.ts). */
  export const env: Record<string, unknown> & {
    readonly HOOKGATE_POLICY: string;
    readonly NETWORK: ServiceBinding;
    readonly HOOKGATE_SESSIONS: {
      get(key: string, type: "json"): Promise<unknown>;
      put(key: string, value: string, options?: { expirationTtl?: number }): Promise<void>;
    };
  };
  /** The Worker of wrangler.toml's `main`, over a service binding. */
  export const SELF: ServiceBinding;
  export function createExecutionContext(): TestExecutionContext;
  export function waitOnExecutionContext(ctx: TestExecutionContext): Promise<void>;
  export function createMessageBatch<Body = unknown>(
    queueName: string,
    messages: TestMessage<Body>[],
  ): TestMessageBatch<Body>;
  export function getQueueResult(
    batch: TestMessageBatch<unknown>,
    ctx: TestExecutionContext,
  ): Promise<QueueResult>;
}
