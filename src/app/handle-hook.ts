/**
 * The decision path: one agent request in, one answer out, one audit line written.
 * read → parse → authenticate → evaluate → (remote actions) → combine → render.
 * Nothing here throws to the caller: every failure becomes a fail-mode answer.
 */
import { authenticate, DEFAULT_TEAM } from "../core/auth.js";
import { clientWaitsMs, requestDeadlineMs } from "../core/deadline.js";
import { combineEffects, type Decision, type RuleEffect } from "../core/decision.js";
import { FAIL_MODE_SOURCE, type RequestError } from "../core/errors.js";
import { type Evaluation, evaluatePolicy, type RuleExplanation } from "../core/evaluate.js";
import { clientDecision, honouredDecision } from "../core/event-capabilities.js";
import { isKnownEvent, parseHookEvent, sniffEventName } from "../core/events.js";
import { type Dialect, type HookEvent, routedDialect } from "../core/hook-event.js";
import { deepEqual } from "../core/json-equal.js";
import { maskedName, maskString, maskValue, scrubSecrets } from "../core/mask.js";
import { type CompiledRule, type Policy, sendsNotifications } from "../core/policy.js";
import type { FailMode } from "../core/policy-schema.js";
import type { Clock, IdGenerator, Logger, Metrics, Sha256 } from "../core/ports.js";
import { type Answer, renderDeliverable, renderRequestFailure } from "../core/render.js";
import { capString, capToFit, withinUtf8Bytes } from "../core/truncate.js";
import type { Notifier } from "./notify.js";
import type { RemoteActions, RemoteAudit, RemoteInput } from "./remote-actions.js";

/**
 * A hook's body as text, or the reason it could not be read. A text one is a holder that handleHook
 * empties (`text` set to "") once the event is parsed and no forward rule is to send it on, before
 * it waits on prompt rules: the parsed event is all a model call needs (`$ARGUMENTS` is the event
 * as the model reads it, written out from it), and a request waiting on a slow model held its raw
 * text beside its event, twice the body, for the whole wait. V8 keeps every local of an async
 * function across an `await`, so dropping a local does not let go of the text: only emptying the
 * one object every frame holds it through does. The caller hands over a holder it keeps no other
 * reference to the text of.
 */
type HookBody = { readonly ok: true; text: string } | { readonly ok: false; readonly error: RequestError };

export interface HookRequest {
  /** The body as text, or the reason it could not be read: emptied as HookBody says. */
  readonly body: HookBody;
  readonly contentType: string | undefined;
  readonly authorization: string | undefined;
  /** The dialect the route names; undefined on `/v1/hooks`, where the body decides. */
  readonly dialect: Dialect | undefined;
  /** `x-hookgate-timeout`: the hook's own timeout in seconds, written by `hookgate init`. */
  readonly timeoutHeader?: string | undefined;
  /** Its `user-agent`: an auth failure's fix is worded for `hookgate send` or the hook (auth.ts `senderOf`). */
  readonly userAgent?: string | undefined;
  /**
   * When the request arrived, on the clock's monotonic time (before its body was read): its
   * deadline runs from then. Without it, from when handleHook starts.
   */
  readonly receivedAt?: number | undefined;
  /**
   * The team the Authorization header named under `policy`, when the route checked it before
   * reading the body (hook-route.ts): not checked again while that policy is the one in force.
   */
  readonly authenticated?: { readonly policy: Policy; readonly team: string } | undefined;
  /**
   * Its headers could not be read (a head Node's parser refused: node-listener.ts), so its token
   * was never checked: under `auth`, its failure is answered by the stricter of `auth.onFailure`
   * and the failure's own fail mode, or `defaults.onError: allow` let a caller with no token past
   * an `onFailure: deny`.
   */
  readonly tokenUnchecked?: boolean | undefined;
  /**
   * The client's connection (Node's listener): when the client closes it before the answer is
   * written, the remote rules give up what they wait on (remote-actions.ts CLIENT_LEFT), and the
   * audit line says so (`clientLeft`).
   */
  readonly connection?: ClientConnection | undefined;
}

/**
 * Whether a hook's client closed its connection before the answer, and a signal aborted when it
 * does, aborted at once when it has. Only a run of remote rules asks for the signal, which is
 * made then: an AbortSignal costs a few µs, a fifth of a decision without them.
 */
export interface ClientConnection {
  left(): boolean;
  leaving(): AbortSignal;
}

export interface HookOutcome {
  readonly answer: Answer;
  readonly decisionId: string;
  readonly policyHash: string;
  readonly error?: RequestError | undefined;
  readonly audit: AuditRecord;
  /** Present when asked for (simulate): every candidate rule and why it did or did not apply. */
  readonly explanations?: readonly RuleExplanation[] | undefined;
}

/** A shadow prompt or forward rule's entry also says how its call went, as `pending` entries do. */
export type ShadowVerdict = {
  readonly rule: string;
  readonly decision: string;
  readonly outcome?: string | undefined;
  readonly ms?: number | undefined;
  readonly model?: string | undefined;
  readonly detail?: string | undefined;
};

/** A type, not an interface, so that it is a logger's field record as it is. */
export type AuditRecord = {
  readonly decisionId: string;
  readonly policy: string;
  readonly team: string | undefined;
  readonly client: Dialect | undefined;
  readonly event: string | undefined;
  readonly tool: string | undefined;
  readonly sessionId: string | undefined;
  readonly rules: readonly string[];
  /**
   * Shadow rules that applied and what they would have decided; a shadow prompt or forward rule
   * also says how its call went (`outcome`, as in `pending`, which lists enforcing rules only).
   */
  readonly shadow: readonly ShadowVerdict[];
  readonly pending: readonly RemoteAudit[];
  readonly notify: readonly string[];
  readonly decision: string;
  /**
   * What the agent does with `decision`, where that differs: `none` where the client acts on no
   * decision (clientDecision: a deepcode block it ignores, an ask or defer to deepcode).
   * Undefined, so left out of the line, otherwise.
   */
  readonly clientDecision?: string | undefined;
  readonly reason: string | undefined;
  /**
   * True when the answer's texts were cut to fit what the client reads or the runtime carries
   * (render.ts ANSWER_BYTES): the agent got less than the rules said. Else left out.
   */
  readonly answerTruncated?: true | undefined;
  readonly error: string | undefined;
  /** True when the client closed its connection before the answer was written; else left out. */
  readonly clientLeft?: true | undefined;
  readonly latencyMs: number;
  readonly toolInput?: unknown;
  /**
   * The input the tool runs with when the answer rewrote it (`updatedInput`), masked as
   * `toolInput` is: the call that runs is not the one the agent sent. Else left out.
   */
  readonly updatedInput?: unknown;
  readonly prompt?: unknown;
};

/**
 * One decision as a replayable record (`hookgate serve --record`, the `hook record` log line on
 * Workers and Lambda): the event as received, masked like the audit line, and what was answered.
 * `hookgate replay` judges `event` again as `client` and `team`.
 */
export interface ReplayRecord {
  readonly time: string;
  readonly decisionId: string;
  /** The hash of the policy that answered. */
  readonly policy: string;
  readonly client: Dialect;
  readonly team: string;
  /** The parsed body, masked with maskValue (secrets replaced, strings cut at 2,000 characters). */
  readonly event: unknown;
  readonly decision: string;
  readonly reason?: string | undefined;
  readonly rules: readonly string[];
  readonly shadow: readonly { readonly rule: string; readonly decision: string }[];
  /**
   * Set by the log recorder of Workers and Lambda when the record was too large for a log line
   * (`RECORD_LOG_BYTES`): written without its event (`event` undefined), whose JSON had `bytes`.
   */
  readonly eventOmitted?: { readonly bytes: number };
}

/** Writes a replayable record; must not throw or block (a failure is the recorder's to report). */
export type Recorder = (record: ReplayRecord) => void;

export interface HookDeps {
  readonly policy: () => Policy;
  readonly clock: Clock;
  readonly newId: IdGenerator;
  readonly sha256: Sha256;
  readonly logger: Logger;
  readonly metrics?: Metrics | undefined;
  /** Runs prompt and forward rules; without it they are reported as not run. */
  readonly remote?: RemoteActions | undefined;
  /** Puts notify jobs on the queue; without it notify rules are recorded but nothing is sent. */
  readonly notifier?: Notifier | undefined;
  /** Records each judged event for replay, next to its audit line (never for simulate). */
  readonly recorder?: Recorder | undefined;
  /**
   * What the runtime leaves for answering this request, in ms, on a runtime that ends a request
   * on its own clock (Lambda's invocation timeout, a Worker's 28 s): the request deadline is
   * capped below it, and a session store call is given up within it, with 2 s at least after a
   * decision that spent its deadline (`storeDeadline`).
   */
  readonly runtimeLeftMs?: (() => number) | undefined;
}

export interface HandleOptions {
  /** Collect why each rule did or did not apply (simulate). */
  readonly explain?: boolean;
  /** Write the audit line (false for simulate, which has no side effects). */
  readonly audit?: boolean;
  /** Call models and downstream hooks (false for simulate). */
  readonly runRemote?: boolean;
}

const JSON_CONTENT_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * The Content-Type a hook sent as every runtime reads it: the values of its headers (a repeated
 * one's joined by commas) that are not empty, joined by ", "; undefined where none is. workerd
 * drops a header sent with no value where Node keeps it (two empty ones read `, `, an empty one
 * before a JSON one `, application/json`), and Lambda's services join a repeated header's values
 * with "," where Node and workerd join them with ", ".
 */
function sentContentType(value: string | undefined): string | undefined {
  const parts = contentTypeValues(value);
  return parts.length === 0 ? undefined : parts.join(", ");
}

/** The values of a hook's Content-Type headers that are not empty, trimmed (sentContentType). */
function contentTypeValues(value: string | undefined): string[] {
  return value?.split(",").flatMap((part) => (part.trim() === "" ? [] : [part.trim()])) ?? [];
}

/**
 * JSON, also twice: a hook whose headers repeat deepcode's own Content-Type arrives with both
 * joined by ", " (`application/json, application/json`), and is read as the one it is; an empty
 * value beside it is none (sentContentType).
 */
function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  if (JSON_CONTENT_TYPE.test(contentType)) return true;
  const parts = contentTypeValues(contentType);
  return parts.length > 0 && parts.every((part) => JSON_CONTENT_TYPE.test(part));
}

/** What a session store call is given at least after a decision that spent its deadline. */
const STORE_WAIT_MS = 2000;

/**
 * When a session store call (KV on Workers) is given up: at the request's deadline, as the
 * decision is; on a runtime that ends the request on its own clock (a Worker, whose notify work
 * runs after the answer), STORE_WAIT_MS from now at least, within what the runtime leaves. A
 * decision that spent its deadline (a slow prompt rule) had every store call after it given up at
 * once: a PreToolUse's tool told as a session store failure and perhaps never written, its
 * permission prompt then sent without it.
 */
function storeDeadline(deadline: number, deps: HookDeps): number {
  const left = deps.runtimeLeftMs?.();
  if (left === undefined) return deadline;
  const now = deps.clock.monotonic();
  return Math.min(now + left, Math.max(deadline, now + STORE_WAIT_MS));
}

export async function handleHook(
  deps: HookDeps,
  request: HookRequest,
  options: HandleOptions = {},
): Promise<HookOutcome> {
  const started = deps.clock.monotonic();
  const arrived = Math.min(request.receivedAt ?? started, started);
  const policy = deps.policy();
  const decisionId = deps.newId();
  const finish = (outcome: Omit<HookOutcome, "decisionId" | "policyHash" | "audit">, audit: AuditFields) => {
    const record = auditRecord(
      decisionId,
      policy,
      audit,
      outcome,
      deps.clock.monotonic() - started,
      request.connection?.left() === true,
    );
    if (options.audit !== false) {
      deps.logger.log("info", "decision", record);
      deps.metrics?.increment("hookgate_decisions_total", {
        // A name any request can send is not a label value: unknown names share one series.
        event: record.event !== undefined && isKnownEvent(record.event) ? record.event : "unknown",
        client: record.client ?? "unknown",
        decision: record.decision,
      });
      if (record.error) deps.metrics?.increment("hookgate_request_errors_total", { code: record.error });
    }
    // Named field by field: a spread here cost more than the rest of `finish` (bench/HISTORY.md).
    return {
      answer: outcome.answer,
      error: outcome.error,
      explanations: outcome.explanations,
      decisionId,
      policyHash: policy.hash,
      audit: record,
    };
  };

  // Once the body is read, an internal error is answered for its event, in its client's shape: a
  // top-level block would stop a Stop hook from ending the turn, or be ignored on PermissionRequest.
  let identified: HookEvent | undefined;
  try {
    const parsed = parseRequest(request);
    if (!parsed.ok) {
      const failure = requestFailure(policy, parsed.error, parsed.dialect, request.tokenUnchecked === true);
      return finish(failure, { client: parsed.dialect, event: parsed.error.eventName });
    }
    const event = parsed.event;
    identified = event;
    // Read now: the text may be let go of before the audit line, which sizes its tool input by it.
    const bodyChars = request.body.ok ? request.body.text.length : Number.POSITIVE_INFINITY;
    const auth =
      request.authenticated?.policy === policy
        ? { ok: true as const, team: request.authenticated.team }
        : await authenticate(
            request.authorization,
            policy,
            deps.sha256,
            event.dialect,
            undefined,
            request.userAgent,
          );
    if (!auth.ok) {
      const error = { code: auth.code, message: auth.message, eventName: event.name };
      return finish(
        requestFailure(policy, error, event.dialect),
        eventFields(event, policy.secrets, undefined, bodyChars),
      );
    }
    const evaluation = evaluatePolicy(policy, event, { team: auth.team }, options.explain === true);
    // Most events have no prompt or forward rule: no promise to wait for then. Shadow ones run
    // too (POLICY.md: shadow rules are evaluated), beside the rest under the same deadline; what
    // they decide is recorded, never combined into the answer.
    // A prompt rule where its model's verdict cannot reach the client is not called (unjudged).
    const judged = verdictReachesClient(event);
    const pending = judged ? evaluation.pending : evaluation.pending.filter(forwards);
    const shadowPending = judged ? evaluation.shadowPending : evaluation.shadowPending.filter(forwards);
    const deadlineMs = requestDeadlineMs(
      event.name,
      event.dialect,
      policy.defaults.deadlineMs,
      request.timeoutHeader,
      deps.runtimeLeftMs?.(),
    );
    let remote: RemoteResult = NO_REMOTE;
    let shadowRun: RemoteResult | undefined;
    if (pending.length > 0 || shadowPending.length > 0) {
      // The remote calls get what is left of the deadline, which runs from the request's arrival:
      // reading a large body and the static rules have spent part of it already, and an answer
      // after the client gave up lets the action through. No time left: each rule's onError now.
      // (What the runtime leaves is read just now, so it is not counted down again.)
      const left = Math.min(
        requestDeadlineMs(event.name, event.dialect, policy.defaults.deadlineMs, request.timeoutHeader) -
          (deps.clock.monotonic() - arrived),
        deadlineMs,
      );
      // Only a forward rule sends the body on as received; without one, the wait holds the event.
      if (request.body.ok && !pending.some(forwards) && !shadowPending.some(forwards)) request.body.text = "";
      // One run for both, so that the request is counted once in what waiting requests may hold
      // (remote-actions.ts `waitingBudget`). Written out field by field: a spread of the shared
      // fields followed by the run's own made each run's input cost a few µs more.
      const input: RemoteInput = {
        rules: [...pending, ...shadowPending],
        event,
        body: request.body.ok ? request.body.text : "",
        bodyChars,
        team: auth.team,
        policy,
        deadlineMs: Math.max(0, left),
        connection: request.connection,
      };
      const ran = await runPending(deps, options, request, evaluation, input);
      if (shadowPending.length === 0) remote = ran;
      else {
        // Told apart by rule, not by position: a run may answer for some of its rules alone
        // (replay.ts `promptsOnly` gives no effect for a forward rule, and lists its audit last).
        const shadow = new Set(shadowPending.map((r) => r.id));
        const split = (enforced: boolean): RemoteResult => ({
          effects: ran.effects.filter((e) => shadow.has(e.ruleId) !== enforced),
          audit: ran.audit.filter((a) => shadow.has(a.rule) !== enforced),
        });
        if (pending.length > 0) remote = split(true);
        shadowRun = split(false);
      }
    }
    if (!judged) {
      const enforcing = unjudged(event, evaluation.pending, policy.secrets);
      const shadow = unjudged(event, evaluation.shadowPending, policy.secrets);
      if (enforcing.length > 0) remote = { effects: remote.effects, audit: [...remote.audit, ...enforcing] };
      if (shadow.length > 0)
        shadowRun = { effects: shadowRun?.effects ?? [], audit: [...(shadowRun?.audit ?? []), ...shadow] };
    }
    // An echo is dropped from each rule's effect before they are combined: it rewrites nothing,
    // so it does not take the place of the first rewrite in rule order (a later rule's redaction).
    const effects = evaluation.enforced.map((m) => withoutEcho(m.effect, event));
    const rewrites = remote.effects.map((e) => withoutEcho(e, event));
    const views = callViews(policy, event, auth.team);
    const combined =
      remote.effects.length === 0
        ? combineEffects(effects)
        : checkedRewrite(
            combineEffects(inRuleOrder(evaluation, [...effects, ...rewrites])),
            rewrites,
            event,
            views,
          );
    const { decision, answer } = renderDeliverable(combined, event.name, event.dialect);
    // The agent gets the reason as decided (a downstream server's already scrubbed of the policy's
    // secrets, forward.ts); what leaves for logs and sinks is scrubbed of the
    // policy's secrets, and masked by shape too when a model or downstream hook wrote part of it:
    // those quote the event, credentials included (POLICY.md, Secrets). A reason the policy
    // itself words is left as written ("Basic auth tokens ..." is not a credential).
    const scrubbed =
      decision.reason === undefined ? undefined : scrubSecrets(decision.reason, policy.secrets);
    const shownReason =
      scrubbed !== undefined && remote.effects.some((e) => e.reason !== undefined)
        ? maskString(scrubbed)
        : scrubbed;
    const plan = notifyPlan(policy);
    const acted = clientDecision(
      decision.kind,
      event.name,
      event.dialect,
      event.payload,
      decision.updatedInput !== undefined,
    );
    // A client that drops the rewrite (deepagents drops it with its allow) runs the call as it came.
    const applied = acted === decision.kind ? decision.updatedInput : undefined;
    const ran = notifiedCall(event, evaluation, applied, views);
    if (options.audit !== false && notifyWork(event, ran.evaluation.notify.length > 0, plan)) {
      const queued = deps.notifier?.notify({
        decisionId,
        event: ran.event,
        team: auth.team,
        decision: decision.kind,
        clientDecision: acted === decision.kind ? undefined : acted,
        reason: shownReason,
        notify: ran.evaluation.notify,
        remember: plan.rememberTools,
        secrets: policy.secrets,
        // The enqueue after the answer is built (Lambda) may take until the client stops waiting,
        // where the hook's timeout is known; else until the deadline the decision kept.
        answerBy: arrived + (clientWaitsMs(event.name, event.dialect, request.timeoutHeader) ?? deadlineMs),
        deadline: storeDeadline(arrived + deadlineMs, deps),
      });
      // Only a runtime that enqueues before answering (Node) hands back a promise.
      if (queued) await queued;
    }
    const outcome = finish(
      { answer, explanations: evaluation.explanations },
      eventFields(
        event,
        policy.secrets,
        {
          team: auth.team,
          evaluation: ran.evaluation,
          pending: remote.audit,
          shadowVerdicts: shadowRun && shadowVerdicts(shadowRun),
          decision: decision.kind,
          rewrite: decision.updatedInput,
          reason: shownReason,
        },
        bodyChars,
      ),
    );
    if (options.audit !== false && deps.recorder)
      recordDecision(deps, deps.recorder, outcome.audit, event, policy.secrets);
    return outcome;
  } catch (e) {
    deps.logger.log("error", "internal error on the decision path", { decisionId, error: describe(e) });
    const error: RequestError = {
      code: "INTERNAL_ERROR",
      message: "hookgate hit an internal error; see its log",
      eventName: identified?.name,
    };
    const dialect = identified?.dialect ?? request.dialect;
    return finish(requestFailure(policy, error, dialect), { client: dialect, event: identified?.name });
  }
}

type ParsedRequest =
  | { ok: true; event: HookEvent }
  | { ok: false; error: RequestError; dialect: Dialect | undefined };

function parseRequest(request: HookRequest): ParsedRequest {
  const dialect = request.dialect;
  // A body not read as JSON: its dialect by the event's name sniffed from its text.
  const unread = (error: RequestError): ParsedRequest => ({
    ok: false,
    error,
    dialect: routedDialect(dialect, undefined, error.eventName),
  });
  if (!request.body.ok) return unread(withCharset(request.body.error, request.contentType));
  const text = request.body.text;
  if (!isJson(request.contentType)) {
    return unread({
      code: "UNSUPPORTED_CONTENT_TYPE",
      message: `the hook sent Content-Type ${JSON.stringify(sentContentType(request.contentType) ?? "(none)")}; send application/json (curl: -H 'Content-Type: application/json')`,
      eventName: sniffEventName(text),
    });
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    // Not the engine's own message: it differs between V8 versions (Node 20, 22, workerd), and
    // every runtime must answer byte for byte the same.
    return unread({
      code: "MALFORMED_JSON",
      message: `the hook's body (${text.length} characters) is not valid JSON; ${
        // UTF-16 without a byte order mark reads as UTF-8 with a NUL beside each ASCII character.
        text.includes("\0")
          ? "it holds NUL characters: is it UTF-16? A hook sends UTF-8"
          : "is it cut short, or followed by more text? A hook sends one JSON object"
      }`,
      eventName: sniffEventName(text),
    });
  }
  const routed = routedDialect(dialect, body);
  const event = parseHookEvent(body, routed);
  if (!event.ok && event.error.code === "EVENT_NOT_OBJECT") {
    // JSON that is no object may still name its event, as text that is no JSON does: an array
    // of events, or one encoded twice (a JSON string holding it). Its fail mode then answers in
    // that event's shape, not with the block for an event that cannot be named, which keeps a
    // Stop going and is ignored on PermissionRequest.
    return unread({
      code: event.error.code,
      message: event.error.message,
      eventName: sniffEventName(text),
    });
  }
  if (!event.ok) {
    return {
      ok: false,
      dialect: routed,
      error: { code: event.error.code, message: event.error.message, eventName: event.error.eventName },
    };
  }
  return { ok: true, event: event.value };
}

/**
 * A body that is not UTF-8 sent under a Content-Type naming another charset (`charset=iso-8859-1`):
 * the message says so, since the fix is the client's encoding, not its bytes. JSON is UTF-8
 * (RFC 8259 §8.1); `application/json` has no charset parameter, so none is honoured.
 */
function withCharset(error: RequestError, contentType: string | undefined): RequestError {
  if (error.code !== "BODY_NOT_UTF8" || contentType === undefined) return error;
  const charset = /;\s*charset\s*=\s*"?([^";,\s]+)/i.exec(contentType)?.[1];
  if (charset === undefined || /^utf-?8$/i.test(charset)) return error;
  return {
    ...error,
    message: `${error.message}; its Content-Type says charset=${capString(charset, 40)}, but JSON is UTF-8: send it in UTF-8`,
  };
}

/**
 * `effect` without an `updatedInput` that is the call as it came: an echo rewrites nothing
 * (a team server may send the input back with each allow), and sent it was not harmless:
 * deepagents dropped the allow with it, and the audit line said the call was rewritten. deepcode's
 * PermissionRequest has no `tool_input` to echo: an `updatedInput` there is a rewrite (render.ts).
 */
function withoutEcho(effect: RuleEffect, event: HookEvent): RuleEffect {
  if (effect.updatedInput === undefined || !deepEqual(effect.updatedInput, event.toolInput)) return effect;
  const { updatedInput: _, ...rest } = effect;
  return rest;
}

const REWRITE_VERBS = { deny: "denies", block: "blocks", ask: "asks about", defer: "defers" } as const;

/**
 * An allow whose `updatedInput` a `forward` rule's server wrote, checked against the static rules
 * on the call it becomes: they judged the call as it came, and a rewrite into one they deny (a
 * `git status` rewritten into a force push) went out as an explicit allow, past the client's
 * dialog too. One they deny, block, ask or defer about is denied instead, naming the rule: the
 * rewritten call cannot be asked about (a rewrite is only sent with an allow). A PermissionRequest
 * comes after PreToolUse, and the call it is granted rewritten into runs without passing
 * PreToolUse again: its rules judge the rewrite too (a policy's deny rules are PreToolUse rules).
 * Prompt and forward rules are not run again: one that reads the rewrite alone denies it. Not on
 * a client that drops the rewrite (deepagents): there the call runs as it came, if at all.
 */
function checkedRewrite(
  decision: Decision,
  remoteEffects: readonly RuleEffect[],
  event: HookEvent,
  views: CallViews,
): Decision {
  const input = decision.updatedInput;
  if (decision.kind !== "allow" || input === undefined || event.dialect === "deepagents-legacy")
    return decision;
  // A client that drops the rewrite with its allow (deepagents) never runs the rewritten call: its
  // own permission flow judges the call as it came, which the rules judged. A deny there would
  // refuse that call for a rule about one that never runs.
  if (clientDecision("allow", event.name, event.dialect, event.payload, true) !== "allow") return decision;
  // Only a downstream server's rewrite is checked: a decide rule's `updatedInput` is the policy's
  // own. An echo of the call as it came never gets here (withoutEcho): the rules judged that call
  // (on PermissionRequest, its PreToolUse rules' ask is the dialog the server answers).
  const rewriter = remoteEffects.find((e) => e.updatedInput === input);
  if (rewriter === undefined) return decision;
  // Each event's rules on the rewritten call, read once for the static verdict and for the
  // prompt and forward rules that would judge it.
  const rewritten = views(input);
  // An ask the event cannot carry (PermissionRequest) is withheld, and alone combines to no
  // opinion: the rewrite, sent with the allow, would answer the dialog that ask leaves to the user.
  const effects = new Map<string, { readonly index: number; readonly effect: RuleEffect }>();
  for (const { evaluation } of rewritten) {
    for (const { rule, effect } of evaluation.enforced) {
      // A rule on both events speaks once, as it does on the event itself.
      if (effects.has(rule.id)) continue;
      effects.set(rule.id, {
        index: rule.index,
        effect:
          effect.withheld === undefined
            ? effect
            : {
                ...effect,
                decision: effect.withheld,
                reason: rule.action.kind === "decide" ? rule.action.reason : undefined,
              },
      });
    }
  }
  // In rule order, as their reasons are given on the event itself.
  const statics = combineEffects(
    [...effects.values()].sort((a, b) => a.index - b.index).map(({ effect }) => effect),
  );
  const { updatedInput: _, ...rest } = decision;
  const rewrittenBy = `the downstream hook (rule ${JSON.stringify(rewriter.ruleId)}) allowed the call rewritten into one that`;
  if (statics.kind !== "none" && statics.kind !== "allow") {
    const said = REWRITE_VERBS[statics.kind];
    const rules = statics.decidedBy.map((id) => `rule ${JSON.stringify(id)}`).join(", ");
    const reason = `${rewrittenBy} ${rules} ${said}${statics.reason ? `: ${statics.reason}` : ""}`;
    return { ...rest, kind: "deny", reason, decidedBy: [rewriter.ruleId, ...statics.decidedBy] };
  }
  // A prompt or forward rule that reads the rewritten call but not the call as it came was never
  // asked about it: its model or server may deny it. Each runs once, on the call as it came (a
  // second round of calls would spend the deadline again and repeat a server's side effects), so
  // the rewrite is denied, naming the rule. One that read both judged the call as the agent sent it.
  const asCame = views(event.toolInput);
  const unjudged = rewritten.flatMap(({ evaluation }, i) => {
    const judged = new Set(asCame[i]?.evaluation.pending.map((r) => r.id));
    return evaluation.pending
      .filter((rule) => rule.id !== rewriter.ruleId && !judged.has(rule.id))
      .map((rule) => rule.id);
  });
  if (unjudged.length === 0) return decision;
  const ids = [...new Set(unjudged)];
  const rules = ids.map((id) => `rule ${JSON.stringify(id)}`).join(", ");
  const reason = `${rewrittenBy} ${rules} ${ids.length > 1 ? "judge" : "judges"}, which did not judge it: hookgate runs prompt and forward rules once, on the call as it came`;
  return { ...rest, kind: "deny", reason, decidedBy: [rewriter.ruleId, ...ids] };
}

/** `event` as the call `toolInput` makes it, on the event `name`. */
function callAs(
  event: HookEvent,
  name: string,
  toolInput: Readonly<Record<string, unknown>> | undefined,
): HookEvent {
  return name === event.name && toolInput === event.toolInput
    ? event
    : {
        ...event,
        name,
        ...(toolInput !== undefined && { toolInput }),
        payload: { ...event.payload, hook_event_name: name, tool_input: toolInput },
      };
}

/**
 * The events whose rules judge a call granted on `event`: a PermissionRequest's call, granted
 * rewritten, runs without passing PreToolUse again.
 */
const callNames = (event: HookEvent): readonly string[] =>
  event.name === "PermissionRequest" ? [event.name, "PreToolUse"] : [event.name];

/** The rules of each of `callNames` on the call a tool input makes, in that order. */
type CallViews = (
  toolInput: Readonly<Record<string, unknown>> | undefined,
) => readonly { readonly name: string; readonly evaluation: Evaluation }[];

/**
 * `CallViews` of one request, each input's evaluated once: checking a rewrite and choosing the
 * notify rules read the same calls (the rewrite, and the call as it came), by the same object.
 * Made on every decision and read only for a rewrite: its map comes with the first read.
 */
function callViews(policy: Policy, event: HookEvent, team: string): CallViews {
  let seen: Map<unknown, ReturnType<CallViews>> | undefined;
  return (toolInput) => {
    seen ??= new Map();
    let views = seen.get(toolInput);
    if (views === undefined) {
      views = callNames(event).map((name) => ({
        name,
        evaluation: evaluatePolicy(policy, callAs(event, name, toolInput), { team }),
      }));
      seen.set(toolInput, views);
    }
    return views;
  };
}

/**
 * The event the notify rules are told of, and theirs: an answer that rewrote the call runs the
 * rewrite, so the rules of the call that runs notify too, of the input it runs with (a sink
 * watching `rm` commands hears of `ls` rewritten into one). Those of the call as the agent sent
 * it still notify: the agent asked for it.
 */
function notifiedCall(
  event: HookEvent,
  evaluation: Evaluation,
  rewrite: Readonly<Record<string, unknown>> | undefined,
  views: CallViews,
): { readonly event: HookEvent; readonly evaluation: Evaluation } {
  // An echo of the call as it came never gets here (withoutEcho).
  if (rewrite === undefined || event.dialect === "deepagents-legacy") return { event, evaluation };
  const notify = [...evaluation.notify];
  for (const { evaluation: rewritten } of views(rewrite))
    for (const entry of rewritten.notify)
      if (!notify.some((n) => n.ruleId === entry.ruleId)) notify.push(entry);
  return { event: callAs(event, event.name, rewrite), evaluation: { ...evaluation, notify } };
}

/** Contexts, messages and reasons combine in rule order (POLICY.md), remote rules' among the rest. */
function inRuleOrder(evaluation: Evaluation, effects: RuleEffect[]): RuleEffect[] {
  const position = new Map<string, number>();
  for (const m of evaluation.enforced) position.set(m.rule.id, m.rule.index);
  for (const rule of evaluation.pending) position.set(rule.id, rule.index);
  return effects.sort((a, b) => (position.get(a.ruleId) ?? 0) - (position.get(b.ruleId) ?? 0));
}

function requestFailure(
  policy: Policy,
  error: RequestError,
  dialect: Dialect | undefined,
  tokenUnchecked = false,
) {
  const own: FailMode =
    FAIL_MODE_SOURCE[error.code] === "auth" ? (policy.auth?.onFailure ?? "deny") : policy.defaults.onError;
  const mode = tokenUnchecked && policy.auth ? stricter(own, policy.auth.onFailure) : own;
  const message = `hookgate: ${error.message} [${error.code}]`;
  const { answer, kind } = renderRequestFailure(mode, error.eventName, dialect ?? "claude-code", message);
  return { answer, error, kind };
}

/** Of two fail modes, the one that lets less through: deny, then ask, then allow. */
function stricter(a: FailMode, b: FailMode): FailMode {
  return STRICTNESS[a] >= STRICTNESS[b] ? a : b;
}

const STRICTNESS: Readonly<Record<FailMode, number>> = { allow: 0, ask: 1, deny: 2 };

/**
 * Prompt and forward rules: skipped when a static rule already denies (nothing can outrank it),
 * not run by simulate (no side effects), otherwise run in parallel under the request deadline.
 */
async function runPending(
  deps: HookDeps,
  options: HandleOptions,
  request: HookRequest,
  evaluation: Evaluation,
  input: RemoteInput,
): Promise<{ effects: RuleEffect[]; audit: RemoteAudit[] }> {
  const skip = (outcome: string, detail: string) => ({
    effects: [],
    audit: input.rules.map((r) => ({ rule: r.id, action: actionOf(r), outcome, ms: 0, detail })),
  });
  if (evaluation.enforced.some((m) => m.effect.decision === "deny" || m.effect.decision === "block")) {
    return skip("SKIPPED", "a static rule already denies");
  }
  if (options.runRemote === false || !deps.remote || !request.body.ok) {
    return skip("NOT_RUN", "simulate does not call models or downstream hooks");
  }
  return deps.remote.run(input);
}

/** What a run of remote rules gave: their effects, and how each call went. */
type RemoteResult = { readonly effects: readonly RuleEffect[]; readonly audit: readonly RemoteAudit[] };

const NO_REMOTE: RemoteResult = {
  effects: Object.freeze([]),
  // Shared by every audit record without remote rules: frozen, so none can change another's.
  audit: Object.freeze([]),
};

/** What each shadow rule's call decided, and how the call went. */
function shadowVerdicts(run: RemoteResult): Map<string, Omit<ShadowVerdict, "rule">> {
  // A skipped run has audits only, so the effect is found by rule, not by position.
  return new Map(
    run.audit.map((a) => [
      a.rule,
      {
        decision: run.effects.find((e) => e.ruleId === a.rule)?.decision ?? "none",
        outcome: a.outcome,
        ms: a.ms,
        ...(a.model === undefined ? {} : { model: a.model }),
        ...(a.detail === undefined ? {} : { detail: a.detail }),
      },
    ]),
  );
}

const forwards = (rule: CompiledRule): boolean => rule.action.kind === "forward";

/**
 * Whether a model's verdict can reach the client on this event: its "no" is sent as a deny or a
 * block (judge.ts verdictEffect), which Notification, SessionStart, SessionEnd and the other
 * events that take neither drop, and deepagents' legacy hooks read nothing back. A call there
 * spent the model's daily budget and concurrency slots, which the events it can decide then
 * lacked, and the hook's time, on a verdict dropped whatever it said.
 */
const verdictReachesClient = (event: HookEvent): boolean =>
  event.dialect !== "deepagents-legacy" && honouredDecision(event.name, "deny") !== undefined;

/**
 * The audit of the prompt rules among `rules` not called on this event (verdictReachesClient),
 * naming it as the audit line's `event` does (`auditName`): an unknown one is the agent's text.
 */
const unjudged = (
  event: HookEvent,
  rules: readonly CompiledRule[],
  secrets: readonly string[],
): RemoteAudit[] =>
  rules
    .filter((rule) => rule.action.kind === "prompt")
    .map((rule) => ({
      rule: rule.id,
      action: "prompt",
      outcome: "SKIPPED",
      ms: 0,
      detail: `no client acts on a model's verdict on ${auditName(event.name, secrets)}${
        event.dialect === "deepagents-legacy" ? " (deepagents' legacy hooks read nothing back)" : ""
      }: the model was not called`,
    }));

const actionOf = (rule: CompiledRule): "prompt" | "forward" =>
  rule.action.kind === "prompt" ? "prompt" : "forward";

/** What an evaluated event adds to its audit record. */
interface Decided {
  readonly team: string;
  readonly evaluation: Evaluation;
  readonly pending: readonly RemoteAudit[];
  /** What each shadow prompt or forward rule that ran decided (absent when none ran). */
  readonly shadowVerdicts: ReadonlyMap<string, Omit<ShadowVerdict, "rule">> | undefined;
  readonly decision: string;
  /** The rewritten input (`updatedInput`) the decision was sent with. */
  readonly rewrite?: Readonly<Record<string, unknown>> | undefined;
  readonly reason: string | undefined;
}

type Undecided = { readonly [K in keyof Decided]?: Decided[K] | undefined };

interface AuditFields extends Undecided {
  readonly client: Dialect | undefined;
  readonly event: string | undefined;
  readonly tool?: string | undefined;
  readonly sessionId?: string | undefined;
  readonly toolInput?: unknown;
  readonly updatedInput?: unknown;
  readonly prompt?: unknown;
  /** The event as received, for what the client does with the decision (clientDecision). */
  readonly payload?: Readonly<Record<string, unknown>> | undefined;
}

function eventFields(
  event: HookEvent,
  secrets: readonly string[],
  decided: Decided | undefined,
  bodyChars: number,
): AuditFields {
  const prompt = event.payload.prompt;
  return {
    client: event.dialect,
    event: event.name,
    payload: event.payload,
    tool: event.toolName,
    sessionId: event.sessionId,
    toolInput:
      event.toolInput === undefined
        ? undefined
        : auditToolInput(maskValue(event.toolInput, secrets), bodyChars),
    prompt: typeof prompt === "string" ? maskValue(prompt, secrets) : undefined,
    team: decided?.team,
    evaluation: decided?.evaluation,
    pending: decided?.pending,
    shadowVerdicts: decided?.shadowVerdicts,
    decision: decided?.decision,
    // Measured whatever the body's size: a server's rewrite may be larger than the call it got.
    updatedInput:
      decided?.rewrite === undefined
        ? undefined
        : auditToolInput(maskValue(decided.rewrite, secrets), Number.POSITIVE_INFINITY),
    // Cut as the event's own strings are: a forwarded hook's reason may be any size, and a
    // Worker's logs keep only 256 KB an invocation, so a huge audit line would crowd out the rest.
    reason: decided?.reason === undefined ? undefined : capString(decided.reason, AUDIT_REASON_CHARS),
  };
}

/** The longest reason an audit line keeps whole (the agent gets it whole). */
const AUDIT_REASON_CHARS = 4000;

/**
 * The longest event name, tool name and session id an audit line keeps whole: each is the
 * agent's to send, of any length within the body's limit (an unknown event is judged).
 */
const AUDIT_NAME_CHARS = 256;

/**
 * The most UTF-8 bytes of JSON an audit line gives its `toolInput`. Masking cuts each string at
 * 2,000 characters, but not an input's count of strings, keys or numbers: a 1 MiB body made a
 * 1 MiB line, past what CloudWatch keeps of one (256 KB, the rest split off as a line that is no
 * JSON) and what a Worker's logs keep of a whole invocation (256 KB).
 */
const AUDIT_TOOL_INPUT_BYTES = 32 * 1024;

/**
 * A masked tool input within AUDIT_TOOL_INPUT_BYTES: as it is when it fits; else cut by
 * truncate.ts `capToFit`, as a sink's payload is: its longest strings first, each ending in
 * TRUNCATION_MARKER; else, when even strings cut to nothing do not fit (thousands of numbers or
 * keys, or a key of any length), its JSON text, cut and marked, under the key `truncated`. Masked
 * JSON is at most about 6 times the body's length (a one-digit PIN becomes "[masked]"), so a body
 * of up to 1/8 of the budget is not measured: every decision writes this line.
 */
function auditToolInput(masked: unknown, bodyChars: number): unknown {
  if (bodyChars * 8 <= AUDIT_TOOL_INPUT_BYTES) return masked;
  const fits = (value: unknown) => withinUtf8Bytes(JSON.stringify(value), AUDIT_TOOL_INPUT_BYTES);
  if (fits(masked)) return masked;
  // No more characters than bytes fit, so the search runs over the budget's length, not the text's.
  const flatten = (value: unknown) => ({ truncated: JSON.stringify(value).slice(0, AUDIT_TOOL_INPUT_BYTES) });
  return capToFit(masked, fits, flatten);
}

/** A name the agent sent, masked and cut as a sink's message shows it (`maskedName`). */
function auditName(name: string | undefined, secrets: readonly string[]): string | undefined {
  return name === undefined ? undefined : maskedName(name, secrets, AUDIT_NAME_CHARS);
}

function auditRecord(
  decisionId: string,
  policy: Policy,
  fields: AuditFields,
  outcome: { answer: Answer; error?: RequestError | undefined; kind?: string },
  latencyMs: number,
  clientLeft: boolean,
): AuditRecord {
  const evaluation = fields.evaluation;
  const decision = fields.decision ?? outcome.kind ?? "none";
  const acted = clientDecision(
    decision,
    fields.event,
    fields.client,
    fields.payload,
    fields.updatedInput !== undefined,
  );
  return {
    decisionId,
    policy: policy.hash,
    team: fields.team,
    client: fields.client,
    event: auditName(fields.event, policy.secrets),
    tool: auditName(fields.tool, policy.secrets),
    sessionId: auditName(fields.sessionId, policy.secrets),
    rules: [
      ...(evaluation?.enforced ?? []).map((m) => m.rule.id),
      ...(evaluation?.pending ?? []).map((r) => r.id),
    ],
    shadow: (evaluation?.shadowed ?? []).map((m): ShadowVerdict => {
      const ran = fields.shadowVerdicts?.get(m.rule.id);
      return ran ? { rule: m.rule.id, ...ran } : { rule: m.rule.id, decision: m.effect.decision ?? "none" };
    }),
    pending: fields.pending ?? [],
    notify: (evaluation?.notify ?? []).flatMap((n) => n.sinks),
    decision,
    clientDecision: acted === decision ? undefined : acted,
    // A request error's message quotes what the request sent (a Content-Type of up to 16 KiB of
    // headers): cut as a rule's reason is.
    reason: fields.reason ?? (outcome.error && capString(outcome.error.message, AUDIT_REASON_CHARS)),
    answerTruncated: outcome.answer.truncated,
    error: outcome.error?.code,
    clientLeft: clientLeft ? true : undefined,
    latencyMs: Math.round(latencyMs * 1000) / 1000,
    // Undefined when the event has none: the JSON line leaves the key out.
    toolInput: fields.toolInput,
    updatedInput: fields.updatedInput,
    prompt: fields.prompt,
  };
}

/**
 * Only events that were parsed and authenticated are recorded: a request that failed before
 * evaluation has nothing a candidate policy could judge differently.
 */
function recordDecision(
  deps: HookDeps,
  recorder: Recorder,
  audit: AuditRecord,
  event: HookEvent,
  secrets: readonly string[],
): void {
  try {
    recorder({
      time: new Date(deps.clock.now()).toISOString(),
      decisionId: audit.decisionId,
      policy: audit.policy,
      client: event.dialect,
      team: audit.team ?? DEFAULT_TEAM,
      event: maskValue(event.payload, secrets),
      decision: audit.decision,
      ...(audit.reason !== undefined ? { reason: audit.reason } : {}),
      rules: audit.rules,
      shadow: audit.shadow,
    });
  } catch (e) {
    deps.logger.log("error", "recording the decision failed", {
      decisionId: audit.decisionId,
      error: describe(e),
    });
  }
}

function describe(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

/**
 * Whether the notifier has anything to do for an event: a notify rule applied, a tool call to
 * remember for a later permission prompt, or a deepagents legacy tool half to keep for the other
 * half's notification (notify.ts `correlate`). Only then is it called, so a Worker loads it only
 * for an event with notify work, and a policy that notifies nothing never does.
 */
function notifyWork(event: HookEvent, notified: boolean, plan: NotifyPlan): boolean {
  if (notified) return true;
  if (event.name === "PreToolUse")
    return plan.rememberTools && event.sessionId !== undefined && event.toolName !== undefined;
  return (
    plan.keepToolHalves &&
    event.dialect === "deepagents-legacy" &&
    (event.name === "tool.use" || event.name === "tool.result")
  );
}

interface NotifyPlan {
  /** Some rule notifies on Notification: PreToolUse calls are remembered for its enrichment. */
  readonly rememberTools: boolean;
  /** Some rule notifies on tool.use or tool.result: each half is kept for the other's. */
  readonly keepToolHalves: boolean;
}

const plans = new WeakMap<Policy, NotifyPlan>();

/** What a policy's notify rules need remembered, worked out once per policy. */
function notifyPlan(policy: Policy): NotifyPlan {
  let plan = plans.get(policy);
  if (plan === undefined) {
    const notifiesOn = (name: string) => policy.rulesFor(name).some(sendsNotifications);
    plan = {
      rememberTools: notifiesOn("Notification"),
      keepToolHalves: notifiesOn("tool.use") || notifiesOn("tool.result"),
    };
    plans.set(policy, plan);
  }
  return plan;
}
