/**
 * The rules that need a remote call: `prompt` (one model call per rule) and `forward` (a POST to
 * the team's own hook server). All run in parallel under the request's deadline, each through the
 * egress guard; a failure of any kind (refused, timed out, non-2xx, off-schema, budget spent)
 * becomes that rule's `onError`, and the audit line records which failure and how long it took.
 *
 * Cost control for prompts lives here too: a verdict cache keyed by model, prompt and the
 * normalized event; a concurrency limit per model; a daily call budget per team and model.
 * All three are per process (per isolate on Workers): state is not shared between instances.
 */
import type { RuleEffect } from "../core/decision.js";
import { ClientLeft, GatewayStopping } from "../core/egress/refusal.js";
import {
  clientHeaderError,
  errorMessage,
  invalidHeaderError,
  invalidHeaderNameError,
} from "../core/errors.js";
import {
  clientHeaderNames,
  fieldsNotPassedOn,
  forwardHeaders,
  interpolateHeaders,
  invalidHeaderNames,
  invalidHeaderValues,
  parseForwardResponse,
  readsForwardBody,
  turnEndNote,
} from "../core/forward.js";
import type { HookEvent } from "../core/hook-event.js";
import {
  buildJudgeRequest,
  endpointHint,
  eventForModel,
  MAX_EVENT_CHARS,
  type OutputLimitField,
  parseJudgeResponse,
  type ResponseFormatType,
  refusesField,
  renderPrompt,
  spentAccountHint,
  type Verdict,
  verdictEffect,
} from "../core/judge.js";
import { scrubJsonText, scrubSecrets } from "../core/mask.js";
import type { CompiledModel, CompiledRule, Policy } from "../core/policy.js";
import type {
  Clock,
  Egress,
  EgressResponse,
  EnvReader,
  Metrics,
  Sha256,
  UnsetReason,
} from "../core/ports.js";
import { failureEffect, ruleOnError } from "../core/rule-failure.js";
import { variableShown } from "../core/secret-ref.js";
import { parseRetryAfter } from "../core/sinks.js";

export interface RemoteAudit {
  readonly rule: string;
  readonly action: "prompt" | "forward";
  /** `OK`, `CACHE_HIT`, `SKIPPED`, or the failure code (`JUDGE_TIMEOUT`, `EGRESS_BLOCKED_ADDRESS`, ...). */
  readonly outcome: string;
  readonly ms: number;
  readonly onError?: string;
  readonly model?: string;
  readonly budget?: { readonly used: number; readonly limit: number };
  /** A prompt rule's calls to its model, when it was called again after a transient error. */
  readonly attempts?: number;
  readonly detail?: string;
}

export interface RemoteRun {
  readonly effects: RuleEffect[];
  readonly audit: RemoteAudit[];
}

export interface RemoteInput {
  readonly rules: readonly CompiledRule[];
  readonly event: HookEvent;
  /**
   * The request body exactly as received, what a forward rule sends on; "" when no forward rule is
   * among `rules` (handle-hook.ts lets go of it: a prompt's `$ARGUMENTS` is the parsed event as
   * the model reads it, never this text).
   */
  readonly body: string;
  /**
   * The length of the body the event was parsed from: the request holds about that much of it
   * parsed while its rules run, and counts it in `waitingBudget`.
   */
  readonly bodyChars: number;
  readonly team: string;
  readonly policy: Policy;
  /** What is left of the request's deadline (counted from its arrival) when the calls start. */
  readonly deadlineMs: number;
  /**
   * The client's connection (Node's listener), whose `leaving()` signal is aborted when the client
   * closes it before the answer is written: nobody will read the answer. The run gives back its
   * share of its waiting budget (`waitingBudget`, or `shadowWaitingBudget` for shadow rules alone)
   * at once, and gives up every call but a prompt rule's already at its model (`CLIENT_LEFT` says
   * why). Asked for the signal only by a run that has something to wait for (not one its verdict
   * cache answers whole): an AbortSignal costs a few µs.
   */
  readonly connection?: { leaving(): AbortSignal } | undefined;
}

export interface RemoteDeps {
  readonly egress: Egress;
  readonly env: EnvReader;
  /** Why a model's or forward's variable reads as unset ("is not set" when absent). */
  readonly unsetReason?: UnsetReason | undefined;
  readonly clock: Clock;
  readonly sha256: Sha256;
  readonly metrics?: Metrics | undefined;
  /**
   * Aborted when the gateway must answer now (`serve` stopping): a call still running ends with
   * its rule's onError, as at its deadline, so the answer goes out before connections are cut.
   */
  readonly stopping?: AbortSignal | undefined;
  /**
   * What requests running remote rules may hold of their bodies at once (Node's `serve`:
   * read-body.ts `createBodyBudget(WAITING_BODY_BUDGET_BYTES)`; a Worker: its isolate's budget of
   * bodies arriving), each counted by its body's length, twice while a forward rule keeps the text
   * beside the parsed event. Past it a run's rules are not called: each answers as a call that
   * found no concurrency slot in time does (WAITING_FULL). A run of shadow rules alone never
   * takes from it (`shadowWaitingBudget`); a run with an enforcing rule counts in it whole.
   */
  readonly waitingBudget?: WaitingBudget | undefined;
  /**
   * What runs of shadow rules alone may hold of their bodies at once, apart from `waitingBudget`
   * and smaller (read-body.ts SHADOW_WAITING_BODY_BUDGET_BYTES): a shadow rule must never change
   * what the enforcing rules answer, and hooks waiting on a slow shadow model in the one budget
   * had other hooks' enforcing rules answered with their onError. Past it their rules are SKIPPED
   * (SHADOW_WAITING_FULL), which changes no answer.
   */
  readonly shadowWaitingBudget?: WaitingBudget | undefined;
}

type WaitingBudget = { hold(): { take(bytes: number): boolean; end(): void } };

export interface RemoteActions {
  run(input: RemoteInput): Promise<RemoteRun>;
}

/**
 * The ids of an event, which differ between otherwise identical calls: left out of what the model
 * reads and so of the cache key, which is the model's input itself. Every other field stays, since
 * `permission_mode` or `effort` may change its verdict (`agent_type` tells a subagent's call from
 * the main agent's). Had the model read the ids while the key left them out, text put in a
 * `session_id` could earn a verdict that another team's same event is then served from the cache.
 */
const VOLATILE_KEYS = new Set(["session_id", "transcript_path", "prompt_id", "tool_use_id", "agent_id"]);
const MAX_CACHE_ENTRIES = 10_000;
/**
 * The most characters of verdict reasons the cache holds (8 Mi, 16 MiB as UTF-16), the oldest
 * verdicts dropped first past it, as past MAX_CACHE_ENTRIES. A reason may be as long as judge.ts
 * MAX_REASON_CHARS (a server that ignores the output limit, an event that asks for a long one):
 * 10,000 of them held 80 MiB. Usual reasons, a sentence each, never come near it.
 */
const MAX_CACHE_CHARS = 8 * 1024 * 1024;
/**
 * Egress stages that end a request before any byte of it is sent: refused by the guard, or no
 * connection made (`connect`; the Worker's fetch cannot tell, so it never says it).
 */
const NOT_SENT: ReadonlySet<string> = new Set(["url", "allowlist", "name", "address", "dns", "connect"]);
/** Kept back from the deadline so the answer is rendered and sent in time. */
const RENDER_MARGIN_MS = 20;
/**
 * A model's answers worth one more call: a timeout, a lock timeout, a rate limit, and any server
 * error (Anthropic's 529 overloaded, a proxy's 520 to 524 among them), the statuses its and
 * OpenAI's SDKs retry, unless `x-should-retry: false` or the error says the account is spent
 * (`spentAccountHint`).
 */
const isTransientStatus = (status: number): boolean =>
  status === 408 || status === 409 || status === 429 || (status >= 500 && status <= 599);
/** The wait before that call when the answer names none (the SDKs' first backoff). */
const RETRY_WAIT_MS = 500;
/**
 * Why a rule was not called when the bytes of requests waiting on remote rules are all taken
 * (`waitingBudget`): a bound on what hooks waiting on a slow model or hook server hold, where
 * bodies that had arrived were held without one (200 hooks of 500 KB waiting on a model held
 * some 200 MiB). The rule answers at once, with its `onError`, as one whose concurrency slot
 * did not come in time (JUDGE_TIMEOUT, FORWARD_TIMEOUT: "not called"), a shadow rule SKIPPED:
 * waiting for the budget would hold the body all the same.
 */
const WAITING_FULL =
  "the gateway holds as many bytes of other hooks waiting on prompt and forward rules as it may (they wait on calls slower than hooks arrive: a faster model or server, or a shorter timeoutMs, lets fewer wait)";
/** Why a shadow rule of a run of shadow rules alone was not called (`shadowWaitingBudget`). */
const SHADOW_WAITING_FULL =
  "the gateway holds as many bytes of other hooks waiting on shadow rules alone as it may, apart from those the enforcing rules wait in (they wait on calls slower than hooks arrive: a faster model or server, or a shorter timeoutMs, lets fewer wait)";

/**
 * Why a rule's call was given up, or not made, when the client closed its connection before the
 * answer (`RemoteInput.connection`: Claude Code's hook timeout, an interrupted or killed agent).
 * Nobody reads the answer, so the hook's share of its waiting budget is given back at once, and
 * what it would still wait on is let go: a call waiting for a concurrency slot, for an identical
 * call in flight or to be made again (it would spend a call for nobody), and a forward, whose
 * answer serves no other hook. A prompt rule's call already at its model runs on to its answer or
 * its deadline, but is never made again: its tokens are spent whatever the gateway does, its
 * verdict fills the cache that the agent's next identical call (a retry after an interrupt) is
 * answered from, or waits on in flight, as identical hooks waiting on it already do; and the
 * concurrency slot it holds bounds what such calls keep of their events past the budget.
 */
const CLIENT_LEFT = "the client closed its connection before the answer";
const GATEWAY_STOPPED = "no answer before the gateway stopped";

interface Failure {
  readonly code: string;
  readonly message: string;
}

/**
 * A prompt rule's calls so far, for the audit of a timeout answered from outside them; and what
 * it is waiting for before it can call, if anything (a concurrency slot, an identical call in
 * flight), so that its reason says what to raise when the deadline comes first.
 */
type CallProgress = {
  budget?: { readonly used: number; readonly limit: number };
  attempts?: number;
  waiting?: string | undefined;
  /** A call is at the model: sent, its answer not yet in. */
  atModel?: boolean;
  /** The client left (CLIENT_LEFT): the call at the model runs on, and none is made after it. */
  left?: boolean;
};

type Attempt = {
  readonly effect: RuleEffect;
  readonly audit: Omit<RemoteAudit, "rule" | "action" | "ms">;
  /** Answered from the verdict cache, whatever its outcome says (a cached allow of a cut event). */
  readonly cached?: true;
};

/**
 * The event as parsed (a duplicate key read once, as the static rules read it), ids left out, and
 * the policy's own secrets in it scrubbed: an agent that printed its environment (`env`, a .env
 * file) carries the gateway's keys and tokens in its next event, and a model's provider is no
 * place for them (another provider's key least of all). The event's other credentials are the
 * agent's own and go as they are. What a model reads is what its verdict is keyed by.
 */
function seenOf(input: RemoteInput): string {
  // Copied key by key into an object without a prototype, so that an own `__proto__` key stays
  // data (as Object.fromEntries kept it), without the pair arrays entries and filter made.
  const payload = input.event.payload;
  const kept: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(payload)) if (!VOLATILE_KEYS.has(key)) kept[key] = payload[key];
  // Scrubbed as JSON text: a secret met after a tab or newline (`\tok-…`) masked alone left a
  // `\[masked]`, no escape, and an event past MAX_EVENT_CHARS that no longer parses is cut at its
  // end rather than at its longest strings.
  return scrubJsonText(JSON.stringify(kept), input.policy.secrets);
}

/**
 * A rule's entry in the audit: its attempt's, with the rule, its action, how long it took and, for
 * a prompt rule, its model (its failures too: a timeout is answered from outside the call).
 */
function ruleAudit(rule: CompiledRule, ms: number, attempt: Attempt): RemoteAudit {
  const action = rule.action.kind === "prompt" ? "prompt" : "forward";
  const model = action === "prompt" ? rule.document.prompt?.model : undefined;
  return { rule: rule.id, action, ms, ...(model && { model }), ...attempt.audit } as RemoteAudit;
}

export function createRemoteActions(deps: RemoteDeps): RemoteActions {
  const unset = deps.unsetReason ?? (() => "is not set");
  /**
   * Verdicts by key, oldest first, each with when it was cached on both clocks: served while the
   * TTL has not passed on either, the wall clock (`wall`, which goes on while a Lambda container
   * is frozen) and the monotonic one (`mono`, which a wall clock stepped back does not move: a
   * verdict was served for as long past its TTL as the step). The TTL is the model's in the
   * policy judging now: one a reload shortened applies to verdicts cached before it too.
   */
  const cache = new Map<string, { verdict: Verdict; wall: number; mono: number }>();
  /** The characters of the cached verdicts' reasons (MAX_CACHE_CHARS). */
  let cacheChars = 0;
  /**
   * The enforcing calls in flight, by verdict-cache key, each settled when its call ends: an
   * identical event judged meanwhile waits for it (within its own deadline) and is answered from
   * the cache, instead of making a second call; after a call that failed, the next in line calls.
   * `until` is the call's own deadline (monotonic): past it the entry is stale, as after a request
   * the runtime stopped (a Worker's past its CPU limit runs none of its code again, its `finally`
   * included; one whose client hung up runs on for 30 s, src/entry/workers.ts), and the next in
   * line calls instead of waiting on it.
   */
  const inFlight = new Map<string, { readonly done: Promise<void>; readonly until: number }>();
  /** Per [model, team, UTC day]; the shadow calls' budgets and slots in their own. */
  const budgets = { enforcing: new DailyCounts(), shadow: new DailyCounts() };
  const limiters = { enforcing: new Map<string, Semaphore>(), shadow: new Map<string, Semaphore>() };
  /**
   * The OpenAI-compatible endpoints and models that refused `max_completion_tokens` and answered
   * with `max_tokens` (judge.ts `refusesField`), by [url, model]: called with
   * `max_tokens` from the start, until a call with `max_completion_tokens` answers again (the
   * server behind them changed). A handful per policy; kept across reloads, as the servers are.
   */
  const olderLimitField = new Set<string>();
  /**
   * The same for the verdict's format: the endpoints and models that refused structured output
   * (`json_schema`) and answered in JSON mode (judge.ts `refusesField`), as DeepSeek's
   * API does, called in JSON mode from the start until a call in JSON mode is refused.
   */
  const jsonModeOnly = new Set<string>();
  /**
   * The event as the model reads it, by the run it is judged in: cut once for all the prompt rules
   * that judge it (cutting an event past MAX_EVENT_CHARS parses it and serialises it at each step
   * of a search), and let go with the run. Written out again from the parsed event when the first
   * of them takes a concurrency slot: a call waiting for one holds no text of its event but the
   * request's own.
   */
  const modelEvents = new WeakMap<RemoteInput, string>();
  const modelEvent = (input: RemoteInput): string => {
    let text = modelEvents.get(input);
    if (text === undefined) {
      text = eventForModel(seenOf(input));
      modelEvents.set(input, text);
    }
    return text;
  };

  /**
   * What answers each rule still running when the gateway stops: one listener on `stopping` for
   * them all. One listener each went past Node's limit of 10 with the 11th remote rule in flight,
   * and every burst wrote "MaxListenersExceededWarning: Possible EventTarget memory leak" to stderr.
   */
  const onStop = new Set<() => void>();
  deps.stopping?.addEventListener(
    "abort",
    () => {
      for (const stop of onStop) stop();
    },
    { once: true },
  );

  async function run(input: RemoteInput): Promise<RemoteRun> {
    const cached = await fromCache(input);
    if (cached) return cached;
    const left = input.connection?.leaving();
    if (left?.aborted) return runHeld(input, { code: "CLIENT_LEFT", reason: CLIENT_LEFT });
    const shadowOnly = input.rules.every((rule) => rule.mode === "shadow");
    const hold = (shadowOnly ? deps.shadowWaitingBudget : deps.waitingBudget)?.hold();
    const held = hold === undefined || hold.take(input.bodyChars + input.body.length);
    /** What each rule still running does when the client leaves (runHeld). */
    const leaving = new Set<() => void>();
    const leave = () => {
      hold?.end();
      for (const stop of leaving) stop();
    };
    left?.addEventListener("abort", leave, { once: true });
    try {
      return await runHeld(
        input,
        held ? undefined : { reason: shadowOnly ? SHADOW_WAITING_FULL : WAITING_FULL },
        leaving,
      );
    } finally {
      left?.removeEventListener("abort", leave);
      hold?.end();
    }
  }

  /** Milliseconds since `t0` on the monotonic clock, to the hundredth, as a rule's audit gives them. */
  const sinceMs = (t0: number) => Math.round((deps.clock.monotonic() - t0) * 100) / 100;

  /**
   * A run whose rules are all prompt rules with a verdict in the cache, answered from it now: it
   * waits on nothing, so it takes no share of a waiting budget, no timer, no abort signal and no
   * listener, which were most of a cache hit's cost (a cached verdict answered as `runHeld` answers
   * it, audit and counts alike). Undefined when any rule needs more.
   */
  async function fromCache(input: RemoteInput): Promise<RemoteRun | undefined> {
    const effects: RuleEffect[] = [];
    const audit: RemoteAudit[] = [];
    for (const rule of input.rules) {
      const t0 = deps.clock.monotonic();
      const result = rule.action.kind === "prompt" ? await cachedVerdict(rule, input) : undefined;
      if (result === undefined) return undefined;
      effects.push(result.effect);
      audit.push(ruleAudit(rule, sinceMs(t0), result));
    }
    audit.forEach((a, i) => {
      count(a, input.rules[i]?.mode === "shadow", true);
    });
    return { effects, audit };
  }

  /**
   * The rules of a run; `notCalled`, why they are not called (its waiting budget had no room for
   * it, or its client left before it began) and the code they fail with (else each's timeout);
   * `leaving`, where a rule running puts what it does should its client leave (CLIENT_LEFT).
   */
  async function runHeld(
    input: RemoteInput,
    notCalled: { readonly code?: string; readonly reason: string } | undefined,
    leaving?: Set<() => void>,
  ): Promise<RemoteRun> {
    const started = deps.clock.monotonic();
    const deadlineAt = started + input.deadlineMs - RENDER_MARGIN_MS;
    const outcomes = await Promise.all(
      input.rules.map(async (rule) => {
        const t0 = deps.clock.monotonic();
        const action = rule.action.kind === "prompt" ? "prompt" : "forward";
        const controller = new AbortController();
        const remaining = Math.max(0, deadlineAt - t0);
        const own = action === "prompt" ? rule.document.prompt?.timeoutMs : rule.document.forward?.timeoutMs;
        const budgetMs = Math.min(remaining, own ?? remaining);
        if (budgetMs <= 0 || notCalled !== undefined) {
          // No time left of the request's deadline, no room to wait in, or no client left to
          // answer: a cached verdict, else the rule's onError at once (a shadow rule's skipped, as
          // without a slot), no call made.
          const code = notCalled?.code ?? (action === "prompt" ? "JUDGE_TIMEOUT" : "FORWARD_TIMEOUT");
          const result =
            (action === "prompt" ? await cachedVerdict(rule, input) : undefined) ??
            (notCalled === undefined
              ? onError(rule, input, { code, message: "no time left of the request's deadline" })
              : rule.mode === "shadow"
                ? skipped(rule, `not called: ${notCalled.reason}`)
                : onError(rule, input, { code, message: `not called: ${notCalled.reason}` }));
          return {
            effect: result.effect,
            audit: ruleAudit(rule, 0, result),
            cached: result.cached,
          };
        }
        let timer: ReturnType<typeof setTimeout> | undefined;
        let stop: (() => void) | undefined;
        let leave: (() => void) | undefined;
        /** What the rule's time running out answers (JUDGE_TIMEOUT, naming the limit), now. */
        let ranOut!: () => Attempt;
        // What a prompt rule's calls have spent so far: a timeout answered from outside the call
        // says it too (a second call after a transient error, the budget both used).
        const progress: CallProgress = {};
        const timedOut = new Promise<Attempt>((resolve) => {
          const timeout = action === "prompt" ? "JUDGE_TIMEOUT" : "FORWARD_TIMEOUT";
          // `why` is what the call's signal aborts with: ClientLeft or GatewayStopping, so that
          // the egress does not report a call given up so as a refusal.
          const expire = (message: string, code = timeout, why?: ClientLeft | GatewayStopping): Attempt => {
            controller.abort(why);
            const { waiting: _, atModel: __, left: ___, ...spent } = progress;
            const answer = withAudit(onError(rule, input, { code, message }), spent);
            resolve(answer);
            return answer;
          };
          // Which limit it was, so the reason says what to raise; and, when the call never started,
          // what it was waiting for (all of the model's concurrent calls in flight, say).
          const limit =
            own !== undefined && own <= remaining
              ? `the rule's timeoutMs`
              : `what was left of the request's deadline (defaults.deadlineMs, kept below the client's hook timeout and the runtime's own limit)`;
          ranOut = () => {
            const ms = Math.round(budgetMs);
            return expire(
              progress.waiting === undefined
                ? `no answer within ${ms} ms, ${limit}`
                : `not called within ${ms} ms, ${limit}: ${progress.waiting}`,
            );
          };
          timer = setTimeout(ranOut, budgetMs);
          stop = () => expire(GATEWAY_STOPPED, timeout, new GatewayStopping(GATEWAY_STOPPED));
          if (deps.stopping?.aborted) stop();
          else onStop.add(stop);
          // Its client gone, all but a prompt call at its model is given up (CLIENT_LEFT).
          leave = () => {
            progress.left = true;
            if (!progress.atModel)
              expire(`given up: ${CLIENT_LEFT}`, "CLIENT_LEFT", new ClientLeft(CLIENT_LEFT));
          };
          leaving?.add(leave);
        });
        const attempt = (
          action === "prompt"
            ? judge(rule, input, budgetMs, controller.signal, progress, ranOut)
            : forward(rule, input, budgetMs, controller.signal)
        ).catch((e: unknown) =>
          // Never an unhandled rejection, even after the deadline already answered for this rule.
          onError(rule, input, {
            code: "INTERNAL_ERROR",
            message: errorMessage(e),
          }),
        );
        const result = await Promise.race([attempt, timedOut]);
        clearTimeout(timer);
        if (stop) onStop.delete(stop);
        if (leave) leaving?.delete(leave);
        return {
          effect: result.effect,
          audit: ruleAudit(rule, sinceMs(t0), result),
          cached: result.cached,
        };
      }),
    );
    outcomes.forEach(({ audit, cached }, i) => {
      count(audit, input.rules[i]?.mode === "shadow", cached === true);
    });
    return { effects: outcomes.map((o) => o.effect), audit: outcomes.map((o) => o.audit) };
  }

  /**
   * Judge calls (by model and outcome: OK or the failure code), cache hits (a cached allow of a
   * cut event among them, whose outcome is JUDGE_EVENT_CUT), and forwards; a
   * shadow rule's calls apart, so that an alert on the enforcing ones never fires for a rule
   * that is only being tried.
   */
  function count(audit: RemoteAudit, shadow: boolean, cached: boolean): void {
    const model = audit.model ?? "unknown";
    if (shadow)
      deps.metrics?.increment("hookgate_shadow_calls_total", {
        action: audit.action,
        outcome: audit.outcome,
      });
    else if (audit.action === "forward")
      deps.metrics?.increment("hookgate_forward_calls_total", { outcome: audit.outcome });
    else if (audit.outcome === "CACHE_HIT" || cached)
      deps.metrics?.increment("hookgate_judge_cache_hits_total", { model });
    else deps.metrics?.increment("hookgate_judge_calls_total", { model, outcome: audit.outcome });
  }

  function onError(rule: CompiledRule, input: RemoteInput, failure: Failure): Attempt {
    const mode = ruleOnError(rule, input.policy);
    // The message may quote a peer's answer, which may echo a secret it was sent in no shape
    // masking knows (a key, a header's token): it reaches the agent and the audit line.
    const message = scrubSecrets(failure.message, input.policy.secrets);
    const reason = `hookgate: rule "${rule.id}" could not be evaluated (${failure.code}: ${message}); its onError (${mode}) applied`;
    return {
      effect: failureEffect(rule, input.event, mode, reason),
      audit: { outcome: failure.code, onError: mode, detail: message },
    };
  }

  /**
   * The verdict cache's key for this prompt on the event (undefined when it caches nothing), and
   * the length of the event as the model would read it whole (`judged`). Only these are kept: the
   * text is let go here, not held by a call while it waits for a slot or an identical call.
   */
  async function verdictKey(
    model: CompiledModel,
    promptText: string,
    input: RemoteInput,
  ): Promise<{ key: string | undefined; seenChars: number }> {
    const seen = seenOf(input);
    // A model whose env: url is unset calls nowhere: keyed as one without a url, it would be
    // answered the public endpoint's cached verdicts.
    const key =
      model.cacheTtlSeconds > 0 && model.unsetUrlVariable === undefined
        ? await cacheKey(model, promptText, input.event.dialect, seen)
        : undefined;
    return { key, seenChars: seen.length };
  }

  /** A cached verdict for the rule, when there is one: it needs no time (with none left, too). */
  async function cachedVerdict(rule: CompiledRule, input: RemoteInput): Promise<Attempt | undefined> {
    const prompt = rule.document.prompt;
    const model = prompt ? input.policy.models.get(prompt.model) : undefined;
    if (!prompt || !model) return undefined;
    const { key, seenChars } = await verdictKey(model, prompt.text, input);
    const cached = key ? cachedEntry(key, model.cacheTtlSeconds) : undefined;
    if (!cached) return undefined;
    return judged(rule, input, cached.verdict, seenChars, { outcome: "CACHE_HIT", model: model.name });
  }

  /**
   * What a verdict means for the event of `seenChars` characters (seenOf). One on an event the
   * model read cut (`eventForModel`) covers only the part it read: a no stands, without its
   * `impossible`; an allow is the rule's onError, as an allow cut off at the token limit is.
   */
  function judged(
    rule: CompiledRule,
    input: RemoteInput,
    verdict: Verdict,
    seenChars: number,
    audit: Attempt["audit"],
  ): Attempt {
    const prompt = rule.document.prompt;
    const effectOf = (read: Verdict) =>
      verdictEffect(rule.id, read, input.event.name, prompt?.text ?? "", prompt?.stop ?? false);
    if (seenChars <= MAX_EVENT_CHARS) return { effect: effectOf(verdict), audit };
    const cut = `the event (${seenChars} characters) was cut to ${MAX_EVENT_CHARS} characters for the model`;
    if (verdict.ok) {
      const message = `${cut}, so its allow covers only what it read`;
      const { outcome, detail: __, ...rest } = audit;
      const failed = withAudit(onError(rule, input, { code: "JUDGE_EVENT_CUT", message }), rest);
      // No call made: counted as the cache hit it is (its audit says JUDGE_EVENT_CUT all the same).
      return outcome === "CACHE_HIT" ? { ...failed, cached: true } : failed;
    }
    // The audit says the no was given on part of the event.
    return {
      effect: effectOf({ ok: false, reason: verdict.reason }),
      audit: { ...audit, detail: audit.detail === undefined ? cut : `${audit.detail}; ${cut}` },
    };
  }

  async function judge(
    rule: CompiledRule,
    input: RemoteInput,
    timeoutMs: number,
    signal: AbortSignal,
    progress: CallProgress,
    /**
     * Answers as the rule's time running out does: a call given what was left of it ran out of it
     * too, its own timer and the rule's set for the same moment and firing in either order.
     */
    ranOut: () => Attempt,
  ): Promise<Attempt> {
    const prompt = rule.document.prompt;
    const model = prompt ? input.policy.models.get(prompt.model) : undefined;
    if (!prompt || !model)
      return onError(rule, input, { code: "JUDGE_NO_MODEL", message: "the rule's model is not defined" });
    const deadline = deps.clock.monotonic() + timeoutMs;

    const { key, seenChars } = await verdictKey(model, prompt.text, input);
    // A shadow rule's call never shares an enforcing one's (it would fill no cache to share).
    const shadow = rule.mode === "shadow";
    const lead = shadow ? undefined : key;
    // The cached verdict; else, an identical call in flight, its end waited for and the cache
    // looked at again; after a call that failed, the next in line calls.
    for (let waited = false; ; waited = true) {
      const cached = key ? cachedEntry(key, model.cacheTtlSeconds) : undefined;
      if (cached) {
        const detail = waited ? { detail: "the verdict of an identical call that was in flight" } : {};
        return judged(rule, input, cached.verdict, seenChars, {
          outcome: "CACHE_HIT",
          model: model.name,
          ...detail,
        });
      }
      const pending = lead && inFlight.get(lead);
      if (!pending) break;
      const left = pending.until - deps.clock.monotonic();
      if (left <= 0) break;
      // The pause ended with the wait: its timer would otherwise run on to the call's deadline
      // (a stopped `serve` did not exit until it fired).
      const ended = new AbortController();
      progress.waiting = `it waited for an identical call to model "${model.name}" in flight, which did not answer`;
      await Promise.race([pending.done, pause(left, AbortSignal.any([signal, ended.signal]))]);
      progress.waiting = undefined;
      ended.abort();
      // Answered already (its deadline, or the gateway stopping): no call of its own now.
      if (signal.aborted)
        return onError(rule, input, { code: "JUDGE_TIMEOUT", message: "no answer in time" });
    }
    if (model.unsetUrlVariable !== undefined) {
      return onError(rule, input, {
        code: "JUDGE_NO_URL",
        message: `model "${model.name}" has no URL (its url reads ${variableShown(model.unsetUrlVariable)}, which ${unset(model.unsetUrlVariable)})`,
      });
    }
    // Named, as an unset url's variable is: the reason says what to set.
    const written = input.policy.document.models?.[model.name]?.apiKey;
    const name = written?.startsWith("env:") ? written.slice(4) : undefined;
    const variable = name === undefined ? "" : ` ${variableShown(name)}`;
    if (model.apiKey === undefined) {
      return onError(rule, input, {
        code: "JUDGE_NO_API_KEY",
        message: `model "${model.name}" has no API key (its apiKey reads ${name === undefined ? "a variable, which is not set" : `${variableShown(name)}, which ${unset(name)}`})`,
      });
    }
    const apiKey = model.apiKey;
    /** The call: a concurrency slot, the team's budget, the model (once more after a transient error). */
    const call = async (): Promise<Attempt> => {
      // The concurrency slot first: a call that times out waiting for one is not a call, and must
      // not spend the team's budget. A shadow rule's call has slots and a daily budget of their own
      // (the model's again, counted apart), never waits for a slot and never fills the verdict
      // cache: trying a rule in shadow must not change what the enforcing rules answer.
      const limiter = limiterFor(model, shadow);
      const slotWait = `all ${model.maxConcurrent} of model "${model.name}"'s concurrent calls (its maxConcurrent) were in flight`;
      progress.waiting = slotWait;
      const slot = shadow ? limiter.tryAcquire(deadline) : await limiter.acquire(timeoutMs, signal, deadline);
      progress.waiting = undefined;
      if (!slot && shadow) {
        return skipped(
          rule,
          `all ${model.maxConcurrent} shadow calls to model "${model.name}" are in flight`,
        );
      }
      if (!slot) {
        return onError(rule, input, {
          code: "JUDGE_TIMEOUT",
          message: `not called within ${Math.round(timeoutMs)} ms: ${slotWait}`,
        });
      }
      const budget = spendBudget(model, input.team, shadow);
      if (!budget.ok && shadow) {
        limiter.release(slot);
        return skipped(rule, budgetSpent(model, input.team, budget.limit, shadow));
      }
      if (!budget.ok) {
        limiter.release(slot);
        return withAudit(
          onError(rule, input, {
            code: "JUDGE_BUDGET_SPENT",
            message: budgetSpent(model, input.team, budget.limit, shadow),
          }),
          { model: model.name, budget: { used: budget.used, limit: budget.limit } },
        );
      }
      try {
        const judgeModel = { provider: model.provider, model: model.model, apiKey, url: model.url };
        const promptText = renderPrompt(prompt.text, modelEvent(input));
        const serverKey = JSON.stringify([model.url ?? "", model.model]);
        let outputLimit: OutputLimitField = olderLimitField.has(serverKey)
          ? "max_tokens"
          : "max_completion_tokens";
        let format: ResponseFormatType = jsonModeOnly.has(serverKey) ? "json_object" : "json_schema";
        let request = buildJudgeRequest(judgeModel, promptText, outputLimit, format);
        /** Each of the request's fields a server refused is changed once, in one more call at once. */
        let limitChanged = false;
        let formatChanged = false;
        let spent = budget;
        /** What the failure adds when the day's budget could not pay for one more call. */
        let unpaid = "";
        /**
         * Whether one more call follows, after `wait`: it is made when the wait and a call as long
         * as the first fit before the deadline; it is a call like any other, so it needs the budget,
         * spent when the call is made, after the wait. The wait holds a claim on one of the day's
         * calls (`DailyCounts.hold`), not the call itself: a claim the day cannot pay for is not
         * waited for (a `retry-after` held the decision and a slot, only to give onError after
         * it), and two retries racing for the day's last call do not both wait; but another
         * decision's first call may take that call meanwhile (spent, it would have been refused
         * for the whole wait), and the retry then finds the budget spent and is not made.
         */
        const callAgain = async (wait: number | undefined, sentAt: number): Promise<boolean> => {
          if (wait === undefined) return false;
          if (progress.left) {
            unpaid = `; not called again: ${CLIENT_LEFT}`;
            return false;
          }
          const now = deps.clock.monotonic();
          if (now + wait + (now - sentAt) >= deadline) return false;
          if (wait > 0) {
            const held = holdBudget(model, input.team, shadow, deadline);
            if (!held.ok) {
              const promised = held.used < held.limit ? ", counting the calls others wait to make again" : "";
              unpaid = `; not called again: ${budgetSpent(model, input.team, held.limit, shadow)}${promised}`;
              return false;
            }
            const waited = await pause(wait, signal);
            if (held.hold) (shadow ? budgets.shadow : budgets.enforcing).release(held.hold);
            if (!waited) return false;
          }
          const next = spendBudget(model, input.team, shadow);
          if (!next.ok) {
            const meanwhile = wait > 0 ? ` while it waited ${Math.round(wait)} ms to call again` : "";
            unpaid = `; not called again: ${budgetSpent(model, input.team, next.limit, shadow)}${meanwhile}`;
            return false;
          }
          spent = next;
          return true;
        };
        for (let attempts = 1; ; attempts++) {
          const extra = {
            ...(spent.limit ? { budget: { used: spent.used, limit: spent.limit } } : {}),
            ...(attempts > 1 ? { attempts } : {}),
          };
          Object.assign(progress, extra);
          const sentAt = deps.clock.monotonic();
          progress.atModel = true;
          const sent = await deps.egress({
            url: request.url,
            method: "POST",
            headers: request.headers,
            body: request.body,
            timeoutMs: Math.max(1, deadline - sentAt),
            signal,
          });
          progress.atModel = false;
          if (!sent.ok) {
            // Refused or failed before a connection (the guard, DNS, a closed port): no call reached
            // the provider, so none is counted, or a wrong model URL would spend the team's day.
            const unsent = NOT_SENT.has(sent.error.stage);
            if (unsent) refundBudget(spent, shadow);
            // Given what was left of the rule's time, the call ran out of it: a timeout of the rule
            // (JUDGE_TIMEOUT, its limit named), not of the egress, whichever timer fired first.
            if (sent.error.timedOut) return ranOut();
            // A connection that broke once it had the request (a kept-alive one the provider had
            // just closed, a reset) is worth one more call at once, on a new one, as the SDKs make.
            if (
              !unsent &&
              attempts === 1 &&
              sent.error.code === "EGRESS_CONNECT_FAILED" &&
              (await callAgain(0, sentAt))
            )
              continue;
            const failure = { code: sent.error.code, message: `${sent.error.reason}${unpaid}` };
            return withAudit(onError(rule, input, failure), { model: model.name, ...extra });
          }
          const verdict = parseJudgeResponse(
            model.provider,
            sent.value.status,
            sent.value.body,
            input.policy.secrets,
          );
          if (!verdict.ok) {
            // A server that takes only the older max_tokens is called again at once with it, and
            // with it from then on, once that call is not refused as well; and the other way back
            // when the server behind that url and model changed (a proxy's alias pointed at a
            // model that refuses max_tokens), or every call would fail until a restart. The same
            // for a server that takes only JSON mode, not structured output (DeepSeek's API).
            const { status, body } = sent.value;
            const openai = model.provider === "openai";
            const changeLimit = openai && !limitChanged && refusesField(status, body, outputLimit);
            const changeFormat =
              openai && !formatChanged && refusesField(status, body, "response_format", format);
            if ((changeLimit || changeFormat) && (await callAgain(0, sentAt))) {
              if (changeLimit) {
                outputLimit = outputLimit === "max_tokens" ? "max_completion_tokens" : "max_tokens";
                limitChanged = true;
              }
              if (changeFormat) {
                format = format === "json_object" ? "json_schema" : "json_object";
                formatChanged = true;
              }
              request = buildJudgeRequest(judgeModel, promptText, outputLimit, format);
              continue;
            }
            // A spent account's 429 fails every call alike: it gets no second one.
            const spentHint = spentAccountHint(sent.value.body);
            // One more call after a transient error.
            if (
              attempts === 1 &&
              spentHint === "" &&
              (await callAgain(retryWaitMs(sent.value, deps.clock.now()), sentAt))
            )
              continue;
            // A 401 is the key: which one, when a policy has several models.
            const keyHint =
              sent.value.status === 401
                ? `; the API key in${variable || " the policy"} (model "${model.name}"'s apiKey) was refused`
                : "";
            const hint =
              endpointHint(model.provider, request.url, sent.value.status) + spentHint + keyHint + unpaid;
            const failure = { ...verdict.error, message: `${verdict.error.message}${hint}` };
            return withAudit(onError(rule, input, failure), { model: model.name, ...extra });
          }
          if (outputLimit === "max_tokens") olderLimitField.add(serverKey);
          else olderLimitField.delete(serverKey);
          if (format === "json_object") jsonModeOnly.add(serverKey);
          else jsonModeOnly.delete(serverKey);
          if (key && !shadow) remember(key, verdict.value);
          return judged(rule, input, verdict.value, seenChars, {
            outcome: "OK",
            model: model.name,
            ...extra,
          });
        }
      } finally {
        limiter.release(slot);
      }
    };
    if (lead === undefined) return call();
    // Set with no wait since the look above: the next identical event finds this call.
    let settled: (() => void) | undefined;
    const entry = { done: new Promise<void>((resolve) => (settled = resolve)), until: deadline };
    inFlight.set(lead, entry);
    try {
      return await call();
    } finally {
      // Not a later call's, made after this one's entry went stale.
      if (inFlight.get(lead) === entry) inFlight.delete(lead);
      settled?.();
    }
  }

  async function forward(
    rule: CompiledRule,
    input: RemoteInput,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<Attempt> {
    const action = rule.action;
    // Its url read from the environment when it is "env:NAME" (policy.ts resolveForwardUrls).
    const target = action.kind === "forward" ? action.forward : undefined;
    if (!target)
      return onError(rule, input, { code: "FORWARD_NO_TARGET", message: "the rule has no forward target" });
    if (action.kind === "forward" && action.unsetUrlVariable !== undefined) {
      return onError(rule, input, {
        code: "FORWARD_NO_URL",
        message: `the rule has no URL (its url reads ${variableShown(action.unsetUrlVariable)}, which ${unset(action.unsetUrlVariable)})`,
      });
    }
    const { headers, dropped } = interpolateHeaders(
      target.headers,
      target.allowedEnvVars,
      input.policy.document.egress?.httpHookAllowedEnvVars,
      deps.env,
    );
    // Refused by name here, not by the HTTP client as a connection failure.
    const badNames = invalidHeaderNames(headers);
    if (badNames.length > 0) return onError(rule, input, invalidHeaderNameError(badNames));
    const clientNames = clientHeaderNames(headers);
    if (clientNames.length > 0) return onError(rule, input, clientHeaderError(clientNames));
    const invalid = invalidHeaderValues(headers);
    if (invalid.length > 0) return onError(rule, input, invalidHeaderError(invalid));
    const sent = await deps.egress({
      url: target.url,
      method: "POST",
      headers: forwardHeaders(headers),
      body: input.body,
      timeoutMs,
      signal,
      readsBodyOf: (status) => readsForwardBody(status, input.event.dialect),
    });
    const notInterpolated = dropped.length > 0 ? `not interpolated: ${dropped.join(", ")}` : undefined;
    // Beside the failure's own detail, never in its place: a variable sent empty is often why the
    // team server refused the call, and the status it answered is what shows it.
    const failed = (failure: Failure): Attempt => {
      const attempt = onError(rule, input, failure);
      if (notInterpolated === undefined) return attempt;
      const said = attempt.audit.detail === undefined ? "" : `${attempt.audit.detail}; `;
      return withAudit(attempt, { detail: `${said}${notInterpolated}` });
    };
    if (!sent.ok) return failed({ code: sent.error.code, message: sent.error.reason });
    const parsed = parseForwardResponse(
      rule.id,
      sent.value.status,
      sent.value.body,
      input.event.name,
      input.event.dialect,
      input.policy.secrets,
      input.event.toolInput,
    );
    if (!parsed.ok) return failed(parsed.error);
    const unused = fieldsNotPassedOn(
      sent.value.body,
      input.event.name,
      input.event.dialect,
      parsed.value,
      input.event.toolInput,
    );
    const turnEnd = turnEndNote(parsed.value, input.policy.secrets);
    const notes = [
      ...(notInterpolated === undefined ? [] : [notInterpolated]),
      ...(unused.length > 0 ? [`not passed on: ${unused.join(", ")}`] : []),
      ...(turnEnd === undefined ? [] : [turnEnd]),
    ];
    return {
      effect: parsed.value,
      audit: { outcome: "OK", ...(notes.length > 0 && { detail: notes.join("; ") }) },
    };
  }

  async function cacheKey(
    model: CompiledModel,
    template: string,
    dialect: string,
    seen: string,
  ): Promise<string> {
    // The event's JSON after a line of the rest's: a JSON array holds no raw line break, so no two
    // keys' texts are the same, and the event (up to the body's size) is not escaped again.
    return deps.sha256(
      `${JSON.stringify([model.provider, model.model, model.url ?? "", template, dialect])}\n${seen}`,
    );
  }

  /** The verdict cached under `key`, unless `ttlSeconds` have passed since on either clock. */
  function cachedEntry(key: string, ttlSeconds: number): { verdict: Verdict } | undefined {
    const entry = cache.get(key);
    const ttl = ttlSeconds * 1000;
    if (!entry || entry.wall + ttl <= deps.clock.now() || entry.mono + ttl <= deps.clock.monotonic())
      return undefined;
    return entry;
  }

  function remember(key: string, verdict: Verdict): void {
    forget(key);
    cache.set(key, { verdict, wall: deps.clock.now(), mono: deps.clock.monotonic() });
    cacheChars += verdict.reason.length;
    for (const oldest of cache.keys()) {
      if (cache.size <= MAX_CACHE_ENTRIES && cacheChars <= MAX_CACHE_CHARS) break;
      forget(oldest);
    }
  }

  function forget(key: string): void {
    const entry = cache.get(key);
    if (entry === undefined) return;
    cache.delete(key);
    cacheChars -= entry.verdict.reason.length;
  }

  /**
   * Gives back a call spent and never sent, to the day it was spent on (`key`): one spent just
   * before midnight UTC and refunded after it must not come off the new day's count.
   */
  function refundBudget(budget: { readonly key?: string | undefined }, shadow: boolean): void {
    if (budget.key !== undefined) (shadow ? budgets.shadow : budgets.enforcing).refund(budget.key);
  }

  function spendBudget(
    model: CompiledModel,
    team: string,
    shadow: boolean,
  ): { ok: boolean; used: number; limit: number; key?: string } {
    const limit = model.dailyCallsPerTeam;
    if (limit === undefined) return { ok: true, used: 0, limit: 0 };
    return (shadow ? budgets.shadow : budgets.enforcing).spend(
      [model.name, team],
      new Date(deps.clock.now()).toISOString().slice(0, 10),
      limit,
    );
  }

  /** A claim on one of the day's calls until `until` (monotonic) for a call waiting to be made again. */
  function holdBudget(model: CompiledModel, team: string, shadow: boolean, until: number) {
    const limit = model.dailyCallsPerTeam;
    if (limit === undefined) return { ok: true, used: 0, limit: 0 };
    return (shadow ? budgets.shadow : budgets.enforcing).hold(
      [model.name, team],
      new Date(deps.clock.now()).toISOString().slice(0, 10),
      limit,
      until,
      deps.clock.monotonic(),
    );
  }

  /** A reload that changes maxConcurrent resizes the model's semaphore, calls in flight counted. */
  function limiterFor(model: CompiledModel, shadow: boolean): Semaphore {
    const pool = shadow ? limiters.shadow : limiters.enforcing;
    let limiter = pool.get(model.name);
    if (!limiter) {
      limiter = new Semaphore(model.maxConcurrent, deps.clock.monotonic);
      pool.set(model.name, limiter);
    } else if (limiter.size !== model.maxConcurrent) limiter.resize(model.maxConcurrent);
    return limiter;
  }

  return { run };
}

/**
 * How long to wait before calling a model again after this answer, or undefined when it is not
 * worth another call: its `retry-after-ms`, else its `retry-after` (seconds or an HTTP date),
 * else RETRY_WAIT_MS.
 */
function retryWaitMs(response: EgressResponse, now: number): number | undefined {
  if (!isTransientStatus(response.status)) return undefined;
  const header = (name: string) => response.headers[name]?.trim();
  if (header("x-should-retry") === "false") return undefined;
  const ms = Number(header("retry-after-ms") || Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  return parseRetryAfter(header("retry-after"), now) ?? RETRY_WAIT_MS;
}

/** Resolves true after `ms`, false as soon as `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function withAudit(attempt: Attempt, extra: Partial<RemoteAudit>): Attempt {
  return { effect: attempt.effect, audit: { ...attempt.audit, ...extra } };
}

/** A shadow rule's call that did not run: no verdict, only why (`run` adds the rule's model to its audit). */
function skipped(rule: CompiledRule, detail: string): Attempt {
  return { effect: { ruleId: rule.id }, audit: { outcome: "SKIPPED", detail } };
}

/** Whose daily budget of `limit` calls is spent: the team's, or the model's shadow calls'. */
function budgetSpent(model: CompiledModel, team: string, limit: number, shadow: boolean): string {
  return shadow
    ? `the shadow calls' own daily budget of ${limit} to model "${model.name}" is spent`
    : `team "${team}" used its ${limit} daily calls to model "${model.name}"`;
}

/**
 * How long past its deadline a call's slot stays taken when the call never gives it back: a
 * Worker's request the runtime stopped mid-call (past its CPU limit, or 30 s after its client hung
 * up, src/entry/workers.ts) runs none of its code again, its `finally` included.
 */
const STALE_SLOT_GRACE_MS = 1000;

/** A slot taken, held by a call until its deadline (monotonic, ms). */
interface Slot {
  readonly until: number;
}

/** A call waiting for a slot until its deadline, and the slot once it is handed one. */
interface Waiter {
  readonly until: number;
  slot?: Slot;
}

/** How often a call waiting for a concurrency slot looks whether it was handed one (Semaphore). */
const SLOT_POLL_MS = 20;

/**
 * Counting semaphore whose waiters give up at a timeout or an abort. A slot is held until given
 * back or, at the latest, STALE_SLOT_GRACE_MS past its holder's deadline: one a stopped request
 * never gave back would otherwise stay taken for the process's (the isolate's) life, and after
 * `maxConcurrent` of them every call would wait out its deadline. A call still running that long
 * after its deadline is over it, and gives back nothing twice.
 *
 * Free slots are handed to the waiters first come, first served, and each waiter finds its own on
 * its own timer (SLOT_POLL_MS), never resumed by the call that gave a slot back or by another
 * waiter: on Workers those run in other requests, and code they resume runs in that request's
 * context, where this request's I/O (its fetch, its abort signal) cannot be used ("Cannot perform
 * I/O on behalf of a different request"); and a timer set while another request was handled never
 * fires once that request has ended.
 */
class Semaphore {
  private readonly taken = new Set<Slot>();
  /** The calls waiting, first come first. */
  private readonly waiters: Waiter[] = [];
  constructor(
    private slots: number,
    private readonly monotonic: () => number,
  ) {}

  get size(): number {
    return this.slots;
  }

  /** A new size; waiters get the slots it frees, calls in flight keep theirs. */
  resize(size: number): void {
    this.slots = size;
    this.handOut();
  }

  /** Takes a slot if one is free; never waits. */
  tryAcquire(until: number): Slot | undefined {
    return this.free() ? this.take(until) : undefined;
  }

  async acquire(timeoutMs: number, signal: AbortSignal, until: number): Promise<Slot | undefined> {
    // Answered already (its deadline, or `serve` stopping, before it got here): no call now.
    if (signal.aborted) return undefined;
    // The calls waiting first: a slot that went stale before they looked again is theirs.
    this.handOut();
    if (this.waiters.length === 0 && this.free()) return this.take(until);
    const waiter: Waiter = { until };
    this.waiters.push(waiter);
    // Counted in polls, not read off the clock: the signal's deadline ends a wait that runs late.
    for (let left = timeoutMs; !waiter.slot && left > 0; left -= SLOT_POLL_MS) {
      if (!(await pause(Math.min(SLOT_POLL_MS, left), signal))) break;
      this.handOut();
    }
    const slot = waiter.slot;
    if (!slot) this.waiters.splice(this.waiters.indexOf(waiter), 1);
    else if (signal.aborted) this.release(slot);
    return signal.aborted ? undefined : slot;
  }

  release(slot: Slot): void {
    if (this.taken.delete(slot)) this.handOut();
  }

  /** Drops the stale slots; whether one is free. After a resize down, only once the calls in flight fit. */
  private free(): boolean {
    const now = this.monotonic();
    for (const slot of this.taken) if (slot.until + STALE_SLOT_GRACE_MS <= now) this.taken.delete(slot);
    return this.taken.size < this.slots;
  }

  private take(until: number): Slot {
    const slot = { until };
    this.taken.add(slot);
    return slot;
  }

  /** The free slots to the waiters, first come first served; each takes it up at its next look. */
  private handOut(): void {
    while (this.waiters.length > 0 && this.free()) {
      const waiter = this.waiters.shift();
      if (waiter) waiter.slot = this.take(waiter.until);
    }
  }
}

/** A call's claim on one of a day's calls while it waits to be made (DailyCounts.hold). */
interface BudgetHold {
  readonly key: string;
  readonly until: number;
}

/**
 * Calls counted per name (a model and a team) and UTC day (`YYYY-MM-DD`), for the daily budgets.
 * Only the counts of the day counted last and of the days either side of it are kept: a serve
 * running for months would otherwise hold one count per model, team and day for ever. The day
 * before stays so that a call spent just before midnight and never sent is still given back to
 * it, and the day after so that a clock stepped back over midnight by a few seconds finds that
 * day's count again when it goes on. Any other day is dropped when the day counted changes, in
 * either direction: had a clock once read a later day (a host that resumed ahead, then NTP
 * stepped it back), keeping the latest day seen stopped the pruning until that day came round.
 */
export class DailyCounts {
  private readonly counts = new Map<string, { readonly day: string; used: number }>();
  /** The claims of calls waiting to be made again (`hold`), each until its call's deadline. */
  private readonly holds = new Set<BudgetHold>();
  private current = "";

  /** One more call on `day` when fewer than `limit` were counted; `key` gives it back. */
  spend(
    name: readonly string[],
    day: string,
    limit: number,
  ): { ok: boolean; used: number; limit: number; key?: string } {
    if (day !== this.current) this.moveTo(day);
    const key = JSON.stringify([...name, day]);
    const count = this.counts.get(key);
    const used = count?.used ?? 0;
    if (used >= limit) return { ok: false, used, limit };
    if (count) count.used = used + 1;
    else this.counts.set(key, { day, used: 1 });
    return { ok: true, used: used + 1, limit, key };
  }

  /**
   * A claim on one of `day`'s calls for a call that waits before it is made (a retry after a
   * `retry-after`), when fewer than `limit` were counted or claimed; nothing is counted. Other
   * claims keep out of it, so two waits never count on the day's last call; `spend` does not, so a
   * call made now is never refused for one that may be made later. A claim lapses at `until`
   * (monotonic, compared with `now`) if it is never released: its call is over by then.
   */
  hold(
    name: readonly string[],
    day: string,
    limit: number,
    until: number,
    now: number,
  ): { ok: boolean; used: number; limit: number; hold?: BudgetHold } {
    if (day !== this.current) this.moveTo(day);
    const key = JSON.stringify([...name, day]);
    const used = this.counts.get(key)?.used ?? 0;
    let held = 0;
    for (const claim of this.holds) {
      if (claim.until <= now) this.holds.delete(claim);
      else if (claim.key === key) held++;
    }
    if (used + held >= limit) return { ok: false, used, limit };
    const hold = { key, until };
    this.holds.add(hold);
    return { ok: true, used, limit, hold };
  }

  /** Ends a claim from `hold`. */
  release(hold: BudgetHold): void {
    this.holds.delete(hold);
  }

  /** Takes back one call counted under `key` (from `spend`); none when its day was dropped. */
  refund(key: string): void {
    const count = this.counts.get(key);
    if (count !== undefined && count.used > 0) count.used -= 1;
  }

  /** How many (name, day) counts are held. */
  get size(): number {
    return this.counts.size;
  }

  private moveTo(day: string): void {
    this.current = day;
    const at = Date.parse(day);
    const dayBefore = new Date(at - 86_400_000).toISOString().slice(0, 10);
    const dayAfter = new Date(at + 86_400_000).toISOString().slice(0, 10);
    for (const [key, count] of this.counts)
      if (count.day < dayBefore || count.day > dayAfter) this.counts.delete(key);
  }
}
