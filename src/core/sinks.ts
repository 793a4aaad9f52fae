/**
 * Sinks: the HTTP request each sink type expects for one notification, and how its answer is
 * read. Pure and runtime-free: no network, no clock (time comes in as arguments), signing through
 * an `HmacSha256` port whose default is the global WebCrypto `crypto.subtle`, and base64 through
 * `atob` / `btoa`, which Node 20 and Workers both provide. Sending, pacing and the retry
 * schedule live in app/deliver.ts.
 *
 * Limits and wire shapes: reference/fanout.md B3 (Slack), B4 (Discord: its Execute Webhook
 * endpoint), B5 (GitHub) and (c) (Standard Webhooks).
 */
import { discordWaitsInMilliseconds, discordWebhookUrl, isDiscordSlackEndpoint } from "./discord-url.js";
import { describeRawTarget, withoutUrlBlanks } from "./egress/target.js";
import { escapedUnits, escapeInvisibleCode, escapeInvisibleControls } from "./escape-controls.js";
import { isRecord } from "./json-object.js";
import { maskString, scrubbedAcrossControls } from "./mask.js";
import type { HmacSha256 } from "./ports.js";
import { readWebhookKey } from "./secret-ref.js";
import {
  asJsonText,
  capString,
  capToFit,
  flattenFreeText,
  shorten,
  sliceCodePoints,
  TRUNCATION_MARKER,
  wellFormed,
  withinUtf8Bytes,
} from "./truncate.js";

/** What one delivery is about: built from a hook event when a rule's notify applies. */
export interface Notification {
  /** Stable event id (e.g. "evt_..."), reused on every retry: the webhook-id. */
  readonly id: string;
  /** Epoch ms when hookgate received the event. */
  readonly createdAt: number;
  readonly team: string;
  /** claude-code | deepcode | deepagents | deepagents-legacy */
  readonly client: string;
  /** PreToolUse, Notification, SessionEnd, tool.use, ... */
  readonly eventName: string;
  /** allow | deny | ask | defer | block | none */
  readonly decision: string;
  /**
   * `none` when the client acts on no such decision on this event (a deepcode block on
   * ConfigChange, an ask or defer to deepcode: event-capabilities.ts `clientDecision`), so the
   * message does not read as enforced; absent when the client acts on `decision`.
   */
  readonly clientDecision?: string | undefined;
  readonly reason?: string | undefined;
  readonly ruleId: string;
  /** The hook event as received, ALREADY masked. */
  readonly event: Readonly<Record<string, unknown>>;
  /** Enrichment: the PreToolUse seen before a permission_prompt Notification in the same session. */
  readonly relatedTool?: { readonly toolName: string; readonly summary: string } | undefined;
  /** deepagents legacy: the other half of a tool call (tool.use ↔ tool.result), matched by tool_id. */
  readonly correlation?: Correlation | undefined;
}

export interface Correlation {
  readonly toolId: string;
  readonly toolUse?:
    | { readonly toolName: string; readonly toolArgs: Readonly<Record<string, unknown>> }
    | undefined;
  readonly toolResult?: { readonly status: string; readonly output: string } | undefined;
}

/** A sink of the policy (policy-schema.ts `SinkSchema`) with every `env:` secret read. */
export type ResolvedSink =
  | { readonly type: "slack"; readonly url: string; readonly link?: string | undefined }
  | { readonly type: "discord"; readonly url: string; readonly link?: string | undefined }
  | { readonly type: "webhook"; readonly url: string; readonly secret?: string | undefined }
  | {
      readonly type: "github-dispatch";
      readonly repo: string;
      /** Sent as it is: the policy schema refuses one longer than GitHub's 100 characters. */
      readonly eventType: string;
      readonly token: string;
      readonly url?: string | undefined;
    };

/** The same thing under the name the delivery design uses. */
export type SinkTarget = ResolvedSink;

export interface SinkRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export type SinkVerdict =
  | { readonly kind: "delivered" }
  | {
      readonly kind: "retry";
      readonly retryAfterMs?: number | undefined;
      readonly reason: string;
      /** A rate limit: every delivery to the URL waits `retryAfterMs`, not only this one. */
      readonly rateLimited?: true | undefined;
    }
  | { readonly kind: "permanent"; readonly reason: string };

/** Appended wherever a string was cut to fit a size limit, so the cut is visible, never silent. */
export { TRUNCATION_MARKER };

/** Above this a generic webhook body has its largest event strings cut (the spec asks < 20 KB; events are masked to a few KB per string already). */
export const WEBHOOK_MAX_BYTES = 64 * 1024;
/** GitHub wants the whole dispatch JSON under 64 KB; kept a margin below it. */
export const GITHUB_MAX_BYTES = 60_000;
/** A session id is kept whole in a dispatch up to this length (a real one is a 36-character UUID). */
const GITHUB_SESSION_ID_MAX = 1000;

/** Slack Block Kit limits (api.slack.com/reference/block-kit/blocks) and our own budget per piece. */
export const SLACK_LIMITS = {
  blocks: 50,
  headerText: 150,
  sectionText: 3000,
  fieldText: 2000,
  fields: 10,
  contextElements: 10,
  /** `msg_blocks_too_long` fires near 13 k characters of block text (bolt-js#2509). */
  totalBlockText: 8000,
} as const;
const SHOWN_DETAIL = 1500;
const SHOWN_MESSAGE = 1000;
const SHOWN_REASON = 400;
const SHOWN_FIELD = 200;
const SHOWN_CONTEXT = 200;
const SHOWN_LINK = 1000;
const FALLBACK_TEXT_MAX = 3000;

// ---------------------------------------------------------------------------------------------
// Requests

/**
 * The HTTP request that delivers `notification` to `sink`; `attemptAt` is this attempt's epoch ms,
 * `hmac` signs a webhook that has a secret.
 */
export async function buildSinkRequest(
  sink: ResolvedSink,
  notification: Notification,
  attemptAt: number,
  hmac: HmacSha256 = webCryptoHmacSha256,
): Promise<SinkRequest> {
  switch (sink.type) {
    case "slack":
      return {
        url: sink.url,
        headers: jsonHeaders(),
        body: sinkJson(renderSlackMessage(notification, sink.link)),
      };
    case "discord":
      return {
        url: deliveryUrl(sink),
        headers: jsonHeaders(),
        body: sinkJson(renderDiscordMessage(notification, sink.link)),
      };
    case "webhook":
      return webhookRequest(sink.url, sink.secret, notification, attemptAt, hmac);
    case "github-dispatch":
      return githubDispatchRequest(sink, notification);
  }
}

/**
 * A sink's JSON body with every lone surrogate of its strings and keys as U+FFFD, as I-JSON
 * (RFC 7493 §2.1) asks: JSON.stringify writes one as a `\udXXX` escape, which parsers that
 * decode to UTF-8 refuse (PHP's json_decode, Rust's serde_json), so an agent's broken text
 * would have the whole message refused with a 400 and dead-lettered.
 */
function sinkJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item === "string") return wellFormed(item);
    if (item === null || typeof item !== "object" || Array.isArray(item)) return item;
    const keys = Object.keys(item);
    if (keys.every((key) => key.isWellFormed())) return item;
    return Object.fromEntries(Object.entries(item).map(([key, inner]) => [wellFormed(key), inner]));
  });
}

function jsonHeaders(): Record<string, string> {
  return { "content-type": "application/json", "user-agent": "hookgate" };
}

/**
 * Where a delivery to the sink goes: its URL, Discord's Execute Webhook endpoint for a Discord
 * sink (discord-url.ts), the repository's dispatches endpoint for a GitHub one. `hookgate check`
 * judges this URL. Blanks around the URL (a pasted variable's) are dropped first, as a URL's
 * parser drops them: spliced onto, they went into the path, and every delivery failed. Only
 * those: a Slack or webhook sink's URL is sent as written, and `hookgate check` judges the URL sent.
 */
export function deliveryUrl(sink: {
  readonly type: string;
  readonly url?: string | undefined;
  readonly repo?: string | undefined;
}): string {
  const url = sink.url === undefined ? undefined : withoutUrlBlanks(sink.url);
  if (sink.type === "discord") return discordWebhookUrl(url ?? "");
  if (sink.type !== "github-dispatch") return url ?? "";
  const base = (url ?? "https://api.github.com").replace(/\/+$/, "");
  return `${base}/repos/${sink.repo}/dispatches`;
}

/** Standard Webhooks event types are `[a-zA-Z0-9_]` segments joined by dots. */
function webhookEventType(eventName: string): string {
  const safe = eventName.replace(/[^A-Za-z0-9_.]/g, "_");
  return `hook.${safe === "" ? "unknown" : safe}`;
}

async function webhookRequest(
  url: string,
  secret: string | undefined,
  n: Notification,
  attemptAt: number,
  hmac: HmacSha256,
): Promise<SinkRequest> {
  const type = webhookEventType(n.eventName);
  const timestamp = new Date(n.createdAt).toISOString();
  // Only the free text is cut to fit (the event, the reason, a correlated call's arguments and
  // output): the ids (team, rule, tool id) stay whole, as fitDeliveryJob keeps them.
  const { correlation } = n;
  const free = {
    event: n.event,
    reason: n.reason,
    args: correlation?.toolUse?.toolArgs,
    output: correlation?.toolResult?.output,
  };
  const body = fitJson(
    free,
    (fitted) => {
      const { event, reason, args, output } = fitted as typeof free;
      const data = {
        team: n.team,
        client: n.client,
        decision: n.decision,
        ...(n.clientDecision !== undefined ? { clientDecision: n.clientDecision } : {}),
        ...(reason !== undefined ? { reason } : {}),
        rule: n.ruleId,
        ...(correlation
          ? {
              correlation: {
                ...correlation,
                ...(correlation.toolUse && { toolUse: { ...correlation.toolUse, toolArgs: args } }),
                ...(correlation.toolResult && { toolResult: { ...correlation.toolResult, output } }),
              },
            }
          : {}),
        event,
      };
      return sinkJson({ type, timestamp, data });
    },
    WEBHOOK_MAX_BYTES,
    flattenFreeText,
  );
  const seconds = Math.floor(attemptAt / 1000);
  // Added to jsonHeaders()'s own object, not spread from it with these after: see
  // bench/HISTORY.md, "A spread then a property".
  const headers = jsonHeaders();
  headers["webhook-id"] = n.id;
  headers["webhook-timestamp"] = String(seconds);
  if (secret !== undefined)
    headers["webhook-signature"] = await signStandardWebhook(secret, n.id, seconds, body, hmac);
  return { url, headers, body };
}

function githubDispatchRequest(
  sink: Extract<ResolvedSink, { type: "github-dispatch" }>,
  n: Notification,
): SinkRequest {
  const sessionId = sessionIdOf(n.event);
  const cwd = stringAt(n.event, "cwd");
  const tool = toolPayload(n);
  // Only the free text is cut to fit (the reason, the cwd, the tool's name and input): the ids a
  // workflow keys on (the event id, the session id, team, rule) stay whole, as the webhook's do. A
  // session id is the agent's text, so it is capped on its own at a length no real one reaches.
  const free = { reason: n.reason, cwd, tool };
  const session = sessionId === undefined ? undefined : capString(sessionId, GITHUB_SESSION_ID_MAX);
  const body = fitJson(
    free,
    (fitted) => {
      const { reason, cwd: shownCwd, tool: shownTool } = fitted as typeof free;
      // At most 10 top-level keys (GitHub's limit): these are exactly the 10 we may send.
      const clientPayload: Record<string, unknown> = {
        id: n.id,
        team: n.team,
        client: n.client,
        event: n.eventName,
        decision: n.decision,
        ...(reason !== undefined ? { reason } : {}),
        rule: n.ruleId,
        ...(session !== undefined ? { session_id: session } : {}),
        ...(shownCwd !== undefined ? { cwd: shownCwd } : {}),
        ...(shownTool !== undefined ? { tool: shownTool } : {}),
      };
      return sinkJson({ event_type: sink.eventType, client_payload: clientPayload });
    },
    GITHUB_MAX_BYTES,
    (value) => {
      const fitted = value as typeof free;
      const input = fitted.tool?.input;
      return input === undefined ? fitted : { ...fitted, tool: { ...fitted.tool, input: asJsonText(input) } };
    },
  );
  return {
    url: deliveryUrl(sink),
    headers: {
      accept: "application/vnd.github+json",
      authorization: `Bearer ${sink.token}`,
      "content-type": "application/json",
      "user-agent": "hookgate",
      "x-github-api-version": "2022-11-28",
    },
    body,
  };
}

/** The tool of the event (name and masked input), else the related PreToolUse of a Notification. */
function toolPayload(n: Notification): Record<string, unknown> | undefined {
  const name = stringAt(n.event, "tool_name");
  if (name !== undefined) {
    const input = toolInputOf(n.event);
    return input === undefined ? { name } : { name, input };
  }
  if (n.relatedTool) return { name: n.relatedTool.toolName, summary: n.relatedTool.summary };
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Size limits

/**
 * `value` serialised, within `maxBytes` (UTF-8) by truncate.ts `capToFit` when it is over (as
 * core/delivery.ts `fitDeliveryJob` fits a queue's limit): a body over the limit would be refused
 * by GitHub (422) and lose the whole notification.
 */
function fitJson(
  value: unknown,
  serialize: (value: unknown) => string,
  maxBytes: number,
  flatten: (value: unknown) => unknown,
): string {
  const fits = (candidate: unknown) => withinUtf8Bytes(serialize(candidate), maxBytes);
  const whole = serialize(value);
  return withinUtf8Bytes(whole, maxBytes) ? whole : serialize(capToFit(value, fits, flatten));
}

// ---------------------------------------------------------------------------------------------
// Slack

interface DecisionStyle {
  /** Slack shortcode, for the blocks. */
  readonly emoji: string;
  /** The same as a Unicode character, for the `text` fallback and Discord's embed title. */
  readonly glyph: string;
  readonly label: string;
}

const DECISION_STYLES: ReadonlyMap<string, DecisionStyle> = new Map([
  ["deny", { emoji: ":no_entry:", glyph: "⛔", label: "Denied" }],
  ["block", { emoji: ":no_entry:", glyph: "⛔", label: "Blocked" }],
  ["ask", { emoji: ":warning:", glyph: "⚠️", label: "Needs approval" }],
  ["defer", { emoji: ":hourglass_flowing_sand:", glyph: "⏳", label: "Deferred" }],
  ["allow", { emoji: ":white_check_mark:", glyph: "✅", label: "Allowed" }],
]);
const NO_DECISION = { emoji: ":bell:", glyph: "🔔" } as const;

/**
 * Headlines for events that carry no decision; others show their own name. deepcode says
 * `permission` for Claude Code's `permission_prompt` (clients.md §5.3); deepagents v2 sends
 * `agent_needs_input` and `agent_completed` (§8).
 */
const NOTIFICATION_TYPES: ReadonlyMap<string, string> = new Map([
  ["permission_prompt", "Permission needed"],
  ["permission", "Permission needed"],
  ["idle_prompt", "Waiting for input"],
  ["agent_needs_input", "Waiting for input"],
  ["agent_completed", "Task complete"],
  ["elicitation_dialog", "Input requested"],
  ["auth_success", "Signed in"],
]);
const EVENT_HEADLINES: ReadonlyMap<string, string> = new Map([
  ["SessionEnd", "Session ended"],
  ["session.end", "Session ended"],
  ["Stop", "Turn finished"],
  ["task.complete", "Task complete"],
  ["input.required", "Waiting for input"],
  ["permission.request", "Permission needed"],
]);

/** Input fields that say what a tool call does, most telling first (Bash, files, URLs, searches). */
const DETAIL_KEYS = [
  "command",
  "file_path",
  "notebook_path",
  "url",
  "pattern",
  "path",
  "query",
  "description",
];

/**
 * The Block Kit message for a notification: a header with the decision (or a bell), the tool
 * call, the Notification message, the reason; then event, team, rule, client and an optional
 * link as fields; then session, cwd, time and event id as context. Every user string is escaped
 * (`&`, `<`, `>`) and cut to its budget, so no section exceeds 3 000 characters and the whole
 * stays far below Slack's ~13 k `msg_blocks_too_long` threshold. `link` is the sink's template;
 * `{session_id}` in it is replaced (and the link left out when the event has no session id).
 */
export function renderSlackMessage(n: Notification, link?: string): { text: string; blocks: unknown[] } {
  const { style, headline, tool, sessionId, cwd, message, notificationType, ended } = messageParts(n);
  const target = link === undefined ? undefined : linkTarget(link, sessionId);
  const url = target === undefined ? undefined : slackLinkUrl(target);
  const emoji = style?.emoji ?? NO_DECISION.emoji;
  const glyph = style?.glyph ?? NO_DECISION.glyph;

  const lines: string[] = [];
  if (tool?.detail !== undefined) lines.push(codeSpan(tool.detail, SHOWN_DETAIL));
  if (message !== undefined) lines.push(quote(escapeCut(message, SHOWN_MESSAGE)));
  if (n.reason !== undefined && n.reason !== "") lines.push(`*Reason:* ${escapeCut(n.reason, SHOWN_REASON)}`);
  const ignored = notEnforced(n, escapeCut);
  if (ignored !== undefined) lines.push(`*Not enforced:* ${ignored}`);
  if (ended !== undefined) lines.push(`*Ended because:* ${escapeCut(ended, SHOWN_REASON)}`);

  const fields = [
    field("Event", escapeCut(n.eventName, SHOWN_FIELD)),
    field("Team", escapeCut(n.team, SHOWN_FIELD)),
    field("Rule", codeSpan(n.ruleId, SHOWN_FIELD)),
    field("Client", escapeCut(n.client, SHOWN_FIELD)),
  ];
  if (notificationType !== undefined) fields.push(field("Type", escapeCut(notificationType, SHOWN_FIELD)));
  if (url !== undefined) fields.push(field("Link", `<${url}|Open>`));

  const context: string[] = [];
  // The first 8 characters, never half of one.
  if (sessionId !== undefined)
    context.push(`Session ${codeSpan(sliceCodePoints(sessionId, 8), SHOWN_CONTEXT)}`);
  if (cwd !== undefined) context.push(codeSpan(cwd, SHOWN_CONTEXT));
  if (Number.isFinite(n.createdAt)) {
    const seconds = Math.floor(n.createdAt / 1000);
    const iso = new Date(n.createdAt).toISOString();
    context.push(`<!date^${seconds}^{date_short_pretty} {time_secs}|${iso}>`);
  }
  context.push(escapeCut(n.id, SHOWN_CONTEXT));

  const blocks: unknown[] = [
    {
      type: "header",
      text: {
        type: "plain_text",
        text: cutPlainWithEllipsis(`${emoji} ${headline}`, SLACK_LIMITS.headerText),
        emoji: true,
      },
    },
  ];
  if (lines.length > 0) {
    blocks.push({ type: "section", text: mrkdwn(cutSection(lines.join("\n"))) });
  }
  blocks.push({ type: "section", fields: fields.slice(0, SLACK_LIMITS.fields).map(mrkdwn) });
  blocks.push({ type: "context", elements: context.slice(0, SLACK_LIMITS.contextElements).map(mrkdwn) });

  const text = fallbackText(n, glyph, headline, tool, message, url);
  return { text, blocks };
}

/** What every chat message shows of a notification, as the agent wrote it: each renderer escapes it. */
interface MessageParts {
  readonly style: DecisionStyle | undefined;
  /** The decision's word or the event's short name, then the tool's name when there is one. */
  readonly headline: string;
  readonly tool: ToolLine | undefined;
  readonly sessionId: string | undefined;
  readonly cwd: string | undefined;
  readonly message: string | undefined;
  /** A Notification's type, shown as its own field. */
  readonly notificationType: string | undefined;
  /** The reason a SessionEnd carries. */
  readonly ended: string | undefined;
}

function messageParts(n: Notification): MessageParts {
  const style = DECISION_STYLES.get(n.decision);
  const tool = toolLine(n);
  const type = stringAt(n.event, "notification_type");
  const notificationType = n.eventName === "Notification" ? type : undefined;
  const subject = style
    ? style.label
    : ((notificationType !== undefined ? NOTIFICATION_TYPES.get(notificationType) : undefined) ??
      EVENT_HEADLINES.get(n.eventName) ??
      n.eventName);
  return {
    style,
    headline: tool ? `${subject}: ${tool.name}` : subject,
    tool,
    // An empty session id or cwd is a missing one: no empty code span, no link to `…/sessions/`.
    sessionId: sessionIdOf(n.event) || undefined,
    cwd: stringAt(n.event, "cwd") || undefined,
    message: stringAt(n.event, "message"),
    notificationType,
    ended: n.eventName === "SessionEnd" ? stringAt(n.event, "reason") : undefined,
  };
}

/**
 * Why a decision the header shows did not hold, when the client does not act on it (a deepcode
 * block on ConfigChange goes ahead, deepagents drops an allow sent with a rewritten input): a
 * channel reading "Blocked" would think it did.
 */
function notEnforced(n: Notification, escapeText: (raw: string, max: number) => string): string | undefined {
  if (n.clientDecision !== "none" || !DECISION_STYLES.has(n.decision)) return undefined;
  return `${escapeText(n.client, 100)} does not act on this ${escapeText(n.decision, 100)}`;
}

/** The plain `text`: what notifications and screen readers show. */
function fallbackText(
  n: Notification,
  glyph: string,
  headline: string,
  tool: ToolLine | undefined,
  message: string | undefined,
  url: string | undefined,
): string {
  const lines = [
    `${glyph} ${escapeCut(headline, SLACK_LIMITS.headerText)} (${escapeCut(n.eventName, 100)}, team ${escapeCut(n.team, 100)})`,
  ];
  if (tool?.detail !== undefined) lines.push(codeSpan(tool.detail, 300));
  if (message !== undefined) lines.push(escapeCut(message, 300));
  if (n.reason !== undefined && n.reason !== "") lines.push(`Reason: ${escapeCut(n.reason, 300)}`);
  const ignored = notEnforced(n, escapeCut);
  if (ignored !== undefined) lines.push(`Not enforced: ${ignored}`);
  // A rule id is code, as in the section (codeSpan): its joiners are written as escapes too.
  lines.push(`Rule: ${escapeCut(n.ruleId, 100, escapeInvisibleCode)}`);
  // The link goes last and whole, since a cut one is broken; it is left out if it would take over
  // half the text.
  const open = url === undefined ? "" : `\n<${url}|Open>`;
  if (open.length > FALLBACK_TEXT_MAX / 2) return cutSection(lines.join("\n"), FALLBACK_TEXT_MAX);
  return cutSection(lines.join("\n"), FALLBACK_TEXT_MAX - open.length) + open;
}

interface ToolLine {
  readonly name: string;
  readonly detail?: string | undefined;
}

/** The tool call an event is about: its own `tool_name` / input, else the related PreToolUse. */
function toolLine(n: Notification): ToolLine | undefined {
  const name = stringAt(n.event, "tool_name");
  if (name !== undefined) {
    const own = toolInputOf(n.event);
    // A deepagents tool.result that its client could not correlate carries tool_args {}.
    const input = own && Object.keys(own).length > 0 ? own : (n.correlation?.toolUse?.toolArgs ?? own);
    return { name, detail: input === undefined ? undefined : describeInput(input) };
  }
  if (n.relatedTool) return { name: n.relatedTool.toolName, detail: n.relatedTool.summary || undefined };
  return undefined;
}

function describeInput(input: Readonly<Record<string, unknown>>): string | undefined {
  for (const key of DETAIL_KEYS) {
    const value = input[key];
    if (typeof value === "string" && value !== "") return value;
  }
  if (Object.keys(input).length === 0) return undefined;
  const json = JSON.stringify(input);
  return shorten(json, 300);
}

/**
 * A mrkdwn text object. `verbatim: true` (Block Kit's text object, mrkdwn only) keeps Slack from
 * parsing the already-escaped text again: no automatic links, channel names or mentions.
 */
function mrkdwn(text: string): { type: "mrkdwn"; text: string; verbatim: true } {
  return { type: "mrkdwn", text, verbatim: true };
}

function field(label: string, value: string): string {
  return `*${label}*\n${value}`;
}

function quote(text: string): string {
  return text
    .split("\n")
    .map((line) => `>${line}`)
    .join("\n");
}

/**
 * User text inside a code span (one line) or a code block (several). Backticks cannot be escaped
 * in Slack mrkdwn, so they become U+02CB (ˋ), which looks the same and cannot end the span.
 */
function codeSpan(raw: string, max: number): string {
  const clean = raw.replaceAll("`", "ˋ");
  if (clean.includes("\n")) return `\`\`\`${escapeCut(clean, max - 6, escapeInvisibleCode)}\`\`\``;
  return `\`${escapeCut(clean, max - 2, escapeInvisibleCode)}\``;
}

/**
 * What Discord strips from a message before it reads its mentions (discord-api-docs#1189, #1241):
 * control characters (but a line break or tab), format characters and combining marks, so that
 * `@\u0001everyone` or `@every\u0000one` pings as `@everyone` does. A zero-width space is kept,
 * which is why it defuses one. Allowed between the characters of each pattern below.
 */
const STRIPPED = "[\\p{Cf}\\p{M}\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f]*";
const spread = (word: string) => [...word].join(STRIPPED);
/** `@everyone`, `@here`, `@channel`: the zero-width space goes right after the @. */
const SPECIAL_MENTION = new RegExp(
  `@(?=${STRIPPED}(?:${["everyone", "here", "channel"].map(spread).join("|")})(?![a-z]))`,
  "giu",
);
/**
 * A Discord user or role mention's `@` (`<@id>`, `<@!id>`, `<@&id>`; ids are 17 to 20 digits).
 * No two runs of STRIPPED side by side: every split between them would be tried, and a long run
 * of such characters would take quadratic time.
 */
const NUMBERED_MENTION = new RegExp(`@(?=${STRIPPED}(?:[!&]${STRIPPED})?\\d(?:${STRIPPED}\\d){16,19})`, "gu");
/** A masked link's `](`: the zero-width space goes between them. */
const MASKED_LINK = new RegExp(`\\](?=${STRIPPED}\\()`, "gu");
/**
 * `@everyone`, `@here` or `@channel` ending the text, not already defused: where a cut ends
 * `@herefoo` (left whole, a letter follows) after its `@here`, which the `…` after it leaves live.
 */
const SPECIAL_MENTION_AT_END = new RegExp(
  `@(?!\u200b)(?=${STRIPPED}(?:${["everyone", "here", "channel"].map(spread).join("|")})${STRIPPED}$)`,
  "iu",
);

/**
 * The head of a cut text, with a mention the cut completed at its end defused, within `max`
 * characters: where the zero-width space does not fit, the head loses its last character instead,
 * which leaves a word no mention is.
 */
function defuseCutEnd(head: string, max: number): string {
  let text = head;
  while (SPECIAL_MENTION_AT_END.test(text)) {
    if (text.length < max) return text.replace(SPECIAL_MENTION_AT_END, "@\u200b");
    text = sliceCodePoints(text, text.length - 1);
  }
  return text;
}

/**
 * Slack's three control characters escaped (api.slack.com "Escaping text"), `@channel`,
 * `@everyone` and `@here` in any case and followed by anything but a letter defused (a
 * zero-width space after the @; `x@hereford.gov` is left whole), so are Discord-style user and
 * role mentions (`<@id>`, `<@!id>`, `<@&id>`) and masked links (`[text](url)`, a zero-width space
 * before the `(`), also with characters Discord strips inside them (`STRIPPED`), so that a Slack
 * message relayed onward to Discord cannot ping or hide a link either. Cut to `max` characters
 * of escaped text with a trailing "…", never inside an entity or a surrogate pair, nor so that
 * a mention a letter kept whole ends the text (`defuseCutEnd`).
 */
function escapeCut(raw: string, max: number, escapeInvisible = escapeInvisibleControls): string {
  const defused = escapeInvisible(raw)
    .replace(SPECIAL_MENTION, "@\u200b")
    .replace(NUMBERED_MENTION, "@\u200b")
    .replace(MASKED_LINK, "]\u200b");
  const full = escapeSlack(defused);
  if (full.length <= max) return full;
  return `${defuseCutEnd(headWithin(unitsOf(defused, escapeSlack), max - 1), max - 1)}…`;
}

function escapeSlack(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/** A last guard on text we assembled from already-escaped pieces, cut never inside an entity or escape. */
function cutSection(text: string, max: number = SLACK_LIMITS.sectionText): string {
  if (text.length <= max) return text;
  let head = headWithin(unitsOf(text), max - 1);
  const entity = head.lastIndexOf("&");
  if (entity >= 0 && !head.slice(entity).includes(";")) head = head.slice(0, entity);
  return `${defuseCutEnd(head, max - 1)}…`;
}

/** `raw` with its invisible characters escaped, cut to `max` with a "…", never inside an escape. */
function cutPlainWithEllipsis(raw: string, max: number, escapeInvisible = escapeInvisibleControls): string {
  const text = escapeInvisible(raw);
  return text.length <= max ? text : `${headWithin(unitsOf(text), max - 1)}…`;
}

/**
 * The longest start of `pieces` joined that is within `max` characters: every cut of a sink's
 * text falls between two pieces, each an escape or a character as written (`unitsOf`).
 */
function headWithin(pieces: Iterable<string>, max: number): string {
  let head = "";
  for (const piece of pieces) {
    if (head.length + piece.length > max) break;
    head += piece;
  }
  return head;
}

/** `text`'s `escapedUnits`, each as `show` writes it, so that a cut keeps an entity or escape whole. */
function* unitsOf(text: string, show: (unit: string) => string = (unit) => unit): Generator<string> {
  for (const unit of escapedUnits(text)) yield show(unit);
}

/** The sink's link with `{session_id}` filled in; only http(s), at most 1 000 characters. */
function linkTarget(template: string, sessionId: string | undefined): string | undefined {
  if (template.includes("{session_id}") && sessionId === undefined) return undefined;
  // A lone surrogate as U+FFFD, as the WHATWG URL parser encodes it: encodeURIComponent throws on
  // one, and the whole message, never built, was dead-lettered for the agent's session id.
  const encoded = encodeURIComponent(wellFormed(sessionId ?? ""));
  const url = template.replaceAll("{session_id}", encoded);
  // A cut URL is a broken one: a link that does not fit is left out.
  if (!/^https?:\/\/\S+$/i.test(url) || url.length > SHOWN_LINK) return undefined;
  return url;
}

/** A link target as Slack's `<url|text>` syntax takes it. */
function slackLinkUrl(url: string): string {
  return url.replaceAll("&", "&amp;").replaceAll("<", "%3C").replaceAll(">", "%3E").replaceAll("|", "%7C");
}

// ---------------------------------------------------------------------------------------------
// Discord (its own Execute Webhook endpoint)

/**
 * Discord's limits on a message and its embeds (discord-api-docs, Message Resource, Embed Limits):
 * counted in characters, which a JS string's length never undercounts. Past one, the message is
 * refused with a 400.
 */
export const DISCORD_LIMITS = {
  content: 2000,
  embeds: 10,
  title: 256,
  description: 4096,
  fields: 25,
  fieldName: 256,
  fieldValue: 1024,
  footerText: 2048,
  /** Title, description, field names and values, footer text and author name of all embeds. */
  total: 6000,
} as const;

/** An embed's side colour for each decision; Discord's own red, yellow, green, grey and blurple. */
const DISCORD_COLORS: ReadonlyMap<string, number> = new Map([
  ["deny", 0xed4245],
  ["block", 0xed4245],
  ["ask", 0xfee75c],
  ["defer", 0x99aab5],
  ["allow", 0x57f287],
]);
const DISCORD_NO_DECISION_COLOR = 0x5865f2;

interface DiscordEmbed {
  title: string;
  url?: string;
  color: number;
  description?: string;
  fields: { name: string; value: string; inline: true }[];
  footer: { text: string };
  timestamp?: string;
}

/**
 * The Execute Webhook body for a notification: one embed with what the Slack message shows (the
 * decision and tool as its title, linked to the sink's `link`; the tool call, message and reasons
 * as its description; event, team, rule, client and type as fields; session, cwd and event id in
 * its footer, its time as the embed's timestamp, which Discord shows in the reader's time zone).
 * The agent's text is Discord-markdown escaped or in a code span it cannot leave, so it cannot
 * format, mask a link or mention (a bare URL in it is left as written, which Discord links as it
 * shows it); and `allowed_mentions` with no `parse` keeps any mention that an
 * escape missed from pinging (mentions in an embed never ping either). Within Discord's limits.
 */
function renderDiscordMessage(
  n: Notification,
  link?: string,
): { embeds: DiscordEmbed[]; allowed_mentions: { parse: [] } } {
  const { style, headline, tool, sessionId, cwd, message, notificationType, ended } = messageParts(n);
  const url = link === undefined ? undefined : linkTarget(link, sessionId);
  const glyph = style?.glyph ?? NO_DECISION.glyph;

  const lines: string[] = [];
  if (tool?.detail !== undefined) lines.push(discordCode(tool.detail, SHOWN_DETAIL));
  if (message !== undefined) lines.push(discordQuote(escapeMarkdown(message, SHOWN_MESSAGE)));
  if (n.reason !== undefined && n.reason !== "")
    lines.push(`**Reason:** ${escapeMarkdown(n.reason, SHOWN_REASON)}`);
  const ignored = notEnforced(n, escapeMarkdown);
  if (ignored !== undefined) lines.push(`**Not enforced:** ${ignored}`);
  if (ended !== undefined) lines.push(`**Ended because:** ${escapeMarkdown(ended, SHOWN_REASON)}`);

  const fields = [
    discordField("Event", escapeMarkdown(n.eventName, SHOWN_FIELD)),
    discordField("Team", escapeMarkdown(n.team, SHOWN_FIELD)),
    discordField("Rule", discordCode(n.ruleId, SHOWN_FIELD)),
    discordField("Client", escapeMarkdown(n.client, SHOWN_FIELD)),
  ];
  if (notificationType !== undefined)
    fields.push(discordField("Type", escapeMarkdown(notificationType, SHOWN_FIELD)));

  // Footer text is plain: no markdown to escape.
  const footer: string[] = [];
  if (sessionId !== undefined) footer.push(`Session ${escapeInvisibleCode(sliceCodePoints(sessionId, 8))}`);
  if (cwd !== undefined) footer.push(cutPlainWithEllipsis(cwd, SHOWN_CONTEXT, escapeInvisibleCode));
  footer.push(cutPlainWithEllipsis(n.id, SHOWN_CONTEXT, escapeInvisibleCode));

  const title = cutMarkdown(
    `${glyph} ${escapeMarkdown(headline, DISCORD_LIMITS.title, false)}`,
    DISCORD_LIMITS.title,
  );
  const footerText = cutPlainWithEllipsis(footer.join(" · "), DISCORD_LIMITS.footerText);
  const fieldChars = fields.reduce((sum, f) => sum + f.name.length + f.value.length, 0);
  // The budgets above keep the total near 5,300; the description gives way if it ever is not.
  const room = Math.min(
    DISCORD_LIMITS.description,
    DISCORD_LIMITS.total - title.length - fieldChars - footerText.length,
  );
  const embed: DiscordEmbed = {
    title,
    ...(url !== undefined ? { url } : {}),
    color: DISCORD_COLORS.get(n.decision) ?? DISCORD_NO_DECISION_COLOR,
    ...(lines.length > 0 ? { description: cutMarkdown(lines.join("\n"), room) } : {}),
    fields: fields.slice(0, DISCORD_LIMITS.fields),
    footer: { text: footerText },
  };
  const at = new Date(n.createdAt);
  // Discord takes an ISO 8601 timestamp; a year past 9999 has no such form.
  if (at.getUTCFullYear() >= 1970 && at.getUTCFullYear() <= 9999) embed.timestamp = at.toISOString();
  return { embeds: [embed], allowed_mentions: { parse: [] } };
}

/**
 * What Discord leaves of a field's value, nothing, when it holds only white space, control and
 * format characters: it strips control characters from what it is sent (discord-api-docs#1189)
 * and trims the rest.
 */
const INVISIBLE = /^[\s\p{Cc}\p{Cf}]*$/u;

/**
 * A field's value may not be empty once Discord has stripped and trimmed it (it refuses the whole
 * message with a 400, and the notification is dead-lettered): such a one shows as a dash.
 */
function discordField(name: string, value: string): { name: string; value: string; inline: true } {
  return { name, value: INVISIBLE.test(value) ? "-" : value, inline: true };
}

/**
 * Discord's markdown characters, each escaped with a backslash (discord-api-docs, Message
 * Formatting; a `\` before punctuation shows it as typed): emphasis, underline, strikethrough,
 * spoilers, code, masked links (`[text](url)`), mentions, channels, emoji and timestamps (`<…>`),
 * quotes, headings, lists and subtext at a line's start (`>`, `#`, `-`).
 */
const DISCORD_MARKDOWN = /[\\*_~`|[\]()<>#-]/g;

/**
 * A bare http(s) URL, as Discord links it in a description or a field: it reads no markdown in
 * one, and keeps a backslash there as part of the link, so `no\-rm\_root` showed and linked to
 * `no/-rm/_root` (discord.js#4356). Its run stops at what could start a mention, code, spoiler
 * or masked link (`< > [ ] ` | \`), and its last character is never one Discord leaves out of a
 * link (`. , : ; " ' )`): what it leaves unescaped is inside the link Discord makes, but for
 * those it leaves out right after it. A `)` there is left as written too (`(https://x/y).`), as
 * Discord would put the backslash of `\)` in the link, and the `[` a masked link needs is escaped.
 */
const BARE_URL = /https?:\/\/[^\s<>[\]`|\\]+[^\s<>[\]`|\\.,:;"')][.,:;"')]*/g;

/**
 * Agent text escaped for Discord markdown and cut to `max` characters, never inside an escape.
 * A bare URL is left as it is (`BARE_URL`), but in the title (`urls` false), whose link is the sink's.
 */
function escapeMarkdown(agentText: string, max: number, urls = true): string {
  const raw = escapeInvisibleControls(agentText);
  const pieces: { readonly text: string; readonly url: boolean }[] = [];
  let from = 0;
  for (const match of urls ? raw.matchAll(BARE_URL) : []) {
    pieces.push({ text: raw.slice(from, match.index), url: false }, { text: match[0], url: true });
    from = match.index + match[0].length;
  }
  pieces.push({ text: raw.slice(from), url: false });
  const shown = (text: string, url: boolean) => (url ? text : text.replace(DISCORD_MARKDOWN, "\\$&"));
  const full = pieces.map((piece) => shown(piece.text, piece.url)).join("");
  if (full.length <= max) return full;
  // A URL cut short still ends in a character Discord links (`…`), so its head stays unescaped.
  const units = function* () {
    for (const piece of pieces) yield* unitsOf(piece.text, (unit) => shown(unit, piece.url));
  };
  return `${headWithin(units(), max - 1)}…`;
}

/**
 * Agent text as code, where Discord reads no markdown, mention or link: a code span, or a code
 * block for several lines, its fence on a line of its own so that the text's first word is not
 * taken for a language. Backticks become U+02CB (ˋ), as for Slack, so the text cannot end it.
 */
function discordCode(raw: string, max: number): string {
  const clean = raw.replaceAll("`", "ˋ");
  if (clean.includes("\n"))
    return `\`\`\`\n${cutPlainWithEllipsis(clean, max - 8, escapeInvisibleCode)}\n\`\`\``;
  return `\`${cutPlainWithEllipsis(clean, max - 2, escapeInvisibleCode)}\``;
}

function discordQuote(text: string): string {
  return text
    .split("\n")
    .map((line) => `> ${line}`)
    .join("\n");
}

/**
 * A last guard on text assembled from escaped pieces: cut, never between a backslash and what it
 * escapes nor inside a `\uXXXX`, and a code block left open by the cut is closed.
 */
function cutMarkdown(text: string, max: number): string {
  if (text.length <= max) return text;
  let head = headWithin(unitsOf(text), Math.max(0, max - 5));
  const slashes = /\\+$/.exec(head)?.[0].length ?? 0;
  if (slashes % 2 === 1) head = head.slice(0, -1);
  const fences = head.split("```").length - 1;
  return fences % 2 === 1 ? `${head}…\n\`\`\`` : `${head}…`;
}

// ---------------------------------------------------------------------------------------------
// Event fields

function stringAt(event: Readonly<Record<string, unknown>>, key: string): string | undefined {
  const value = Object.hasOwn(event, key) ? event[key] : undefined;
  return typeof value === "string" ? value : undefined;
}

/** `session_id`, or `thread_id` in deepagents' legacy events. */
function sessionIdOf(event: Readonly<Record<string, unknown>>): string | undefined {
  return stringAt(event, "session_id") ?? stringAt(event, "thread_id");
}

/** `tool_input`, or `tool_args` in deepagents' legacy events. */
function toolInputOf(
  event: Readonly<Record<string, unknown>>,
): Readonly<Record<string, unknown>> | undefined {
  for (const key of ["tool_input", "tool_args"]) {
    const value = Object.hasOwn(event, key) ? event[key] : undefined;
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      return value as Readonly<Record<string, unknown>>;
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Responses

/** Transient by nature (RFC 9110; Standard Webhooks: 429/502/504 mean throttle). */
const RETRY_STATUSES: ReadonlySet<number> = new Set([408, 425, 500, 502, 503, 504]);
/** Server errors that will answer the same tomorrow. */
const PERMANENT_5XX: ReadonlySet<number> = new Set([501, 505]);

/** Slack's documented incoming-webhook error codes (changelog 2016-05-17) and common ones seen since. */
const SLACK_ERRORS: ReadonlyMap<string, string> = new Map([
  ["invalid_payload", "Slack rejected the message as malformed"],
  ["user_not_found", "Slack cannot find the user"],
  ["action_prohibited", "a Slack admin restricted posting to this channel"],
  ["channel_not_found", "the Slack channel no longer exists"],
  ["channel_is_archived", "the Slack channel is archived"],
  ["no_service", "the Slack webhook was removed or disabled"],
  ["no_active_hooks", "the Slack webhook was removed or disabled"],
  ["invalid_token", "the Slack webhook was revoked"],
  ["no_team", "the Slack workspace no longer exists"],
]);

const DELIVERED: SinkVerdict = { kind: "delivered" };

const GITHUB_SECONDARY_LIMIT = /secondary rate limit|abuse detection/i;
const GITHUB_SECONDARY_WAIT_MS = 60_000;
/**
 * The wait after Slack's `{"ok":false,"error":"ratelimited"}` (Web API, HTTP 200) that names no
 * Retry-After: the 30 s of Slack's own rate-limit example (api.slack.com/docs/rate-limits).
 */
const SLACK_RATE_LIMIT_WAIT_MS = 30_000;

/**
 * How a sink's HTTP answer is read. 2xx is delivered (Slack also needs its `ok` body); 429 and
 * 408/425/500/502/503/504 (and other 5xx but 501/505) are retried, with the delay the server
 * asked for when it said (Retry-After seconds or HTTP date against `now`; Slack/Discord JSON
 * `retry_after` seconds as a fallback; GitHub's rate-limit reset); redirects are never followed,
 * so 3xx is permanent, as are 410 and every other 4xx. A GitHub 403 that is a rate limit
 * (Retry-After, x-ratelimit-remaining 0, or a message naming a secondary rate limit, waited for a
 * minute at least) is retried: GitHub answers rate limits with 403 too. So is a Discord 403 with
 * code 40333 (Cloudflare blocking this host). Slack's HTTP 200 `ratelimited` is retried as a 429
 * is. A rate limit's verdict is `rateLimited`: it holds the URL. `secrets` (`Policy.secrets`) are
 * scrubbed from what a reason quotes of the answer. `url`, where the request went, says the units
 * of a Discord rate limit's waits (`retryAfterMs`), a Slack sink's at Discord's Slack-compatible
 * endpoint too; without it, they are read in seconds, as Discord's docs give them.
 */
export function classifySinkResponse(
  sink: ResolvedSink["type"],
  status: number,
  headers: Readonly<Record<string, string>>,
  body: string,
  now: number,
  secrets: readonly string[] = [],
  url?: string,
): SinkVerdict {
  const header = headerReader(headers);
  const waitOf = (json: JsonBody) => retryAfterMs(sink, header, json, now, url);
  if (status >= 200 && status < 300)
    return sink === "slack" ? classifySlackSuccess(status, body, header, now, secrets) : DELIVERED;
  // Read once, for the reason, the wait and the hint alike.
  const json = parseJsonObject(body);
  const detail = describeBody(sink, body, json, secrets);
  // A secondary rate limit may come with neither header; GitHub then asks for at least a minute's
  // wait, and says so only in its message ("You have exceeded a secondary rate limit").
  if (sink === "github-dispatch" && (status === 403 || status === 429) && GITHUB_SECONDARY_LIMIT.test(body)) {
    return rateLimited(
      `HTTP ${status} GitHub secondary rate limit${detail}`,
      waitOf(json) ?? GITHUB_SECONDARY_WAIT_MS,
    );
  }
  if (status === 429) {
    const what = answersAsDiscord(sink, url) ? discordRateLimit(header, json) : "rate limited";
    return rateLimited(`HTTP 429 ${what}${detail}`, waitOf(json));
  }
  if (
    sink === "github-dispatch" &&
    status === 403 &&
    (header("retry-after") !== undefined || header("x-ratelimit-remaining")?.trim() === "0")
  ) {
    return rateLimited(`HTTP 403 GitHub rate limit${detail}`, waitOf(json));
  }
  // Discord's code 40333 is Cloudflare blocking this host (its address, or a user agent it
  // distrusts: discord-api-docs, JSON Error Codes), said only as "internal network error"
  // (discord-api-docs#6473). Not the webhook's rights, and it lifts (an address block ends; it
  // was Discord's own fault for hours in May 2024): retried on the schedule, never held for.
  if (status === 403 && answersAsDiscord(sink, url) && json?.code === 40333) {
    return retry(
      `HTTP 403 blocked by Cloudflare in front of Discord (this host's address or user agent, not the webhook)${detail}`,
      waitOf(json),
    );
  }
  if (RETRY_STATUSES.has(status) || (status >= 500 && status < 600 && !PERMANENT_5XX.has(status))) {
    return retry(`HTTP ${status}${detail}`, waitOf(json));
  }
  if (status >= 300 && status < 400) {
    const location = header("location");
    // Shown as refused egress targets are, origin and `/…`: the path or query may be a secret.
    const where = location === undefined ? "" : ` to ${describeRawTarget(location)}`;
    return { kind: "permanent", reason: `HTTP ${status} redirect${where} (redirects are not followed)` };
  }
  if (status >= 400 && status < 600)
    return { kind: "permanent", reason: `HTTP ${status}${hint(sink, status, body, json)}${detail}` };
  return retry(`unexpected HTTP status ${status}`, undefined);
}

/**
 * What the words of an answer with this status must say before a permanent verdict on it holds:
 * Slack's 2xx its "ok", GitHub's 403 whether it is a secondary rate limit (said only in its
 * message), Discord's 403 whether it is Cloudflare's block (its code 40333; at `url`, a Slack
 * sink's too). Undefined where the status alone decides. An answer whose body broke off before it
 * said so is retried: neither refused nor known to be delivered.
 */
export function awaitedInBody(sink: ResolvedSink["type"], status: number, url?: string): string | undefined {
  if (sink === "slack" && status >= 200 && status < 300) return `Slack said "ok"`;
  if (sink === "github-dispatch" && status === 403) return "GitHub said whether it is a secondary rate limit";
  if (status === 403 && answersAsDiscord(sink, url))
    return "Discord said whether Cloudflare blocks this host";
  return undefined;
}

function classifySlackSuccess(
  status: number,
  body: string,
  header: (name: string) => string | undefined,
  now: number,
  secrets: readonly string[],
): SinkVerdict {
  if (body.trim() === "ok") return DELIVERED;
  const json = parseJsonObject(body);
  if (json?.ok === true) return DELIVERED;
  const error = typeof json?.error === "string" ? json.error : undefined;
  // The Web API (chat.postMessage) answers a rate limit with HTTP 200 and `ratelimited`: the
  // same limit as a 429, so it holds the URL as a 429 does, for a default wait if none is named.
  if (error === "rate_limited" || error === "ratelimited") {
    return rateLimited(
      `Slack rate limited (HTTP ${status})`,
      retryAfterMs("slack", header, json, now, undefined) ?? SLACK_RATE_LIMIT_WAIT_MS,
    );
  }
  return {
    kind: "permanent",
    reason: `HTTP ${status} but Slack did not answer "ok"${describeBody("slack", body, json, secrets)}`,
  };
}

function retry(reason: string, retryAfter: number | undefined): SinkVerdict {
  return retryAfter === undefined
    ? { kind: "retry", reason }
    : { kind: "retry", retryAfterMs: retryAfter, reason };
}

function rateLimited(reason: string, retryAfter: number | undefined): SinkVerdict {
  return retryAfter === undefined
    ? { kind: "retry", reason, rateLimited: true }
    : { kind: "retry", retryAfterMs: retryAfter, reason, rateLimited: true };
}

function hint(sink: ResolvedSink["type"], status: number, body: string, json: JsonBody): string {
  if (status === 410) return " gone (the endpoint asks to be disabled)";
  if (sink === "discord") {
    const hinted = discordHint(status, json?.code);
    if (hinted !== undefined) return hinted;
  }
  if (status === 401) return " unauthorized (token or webhook invalid)";
  if (sink === "github-dispatch" && status === 404)
    return " repository not found, or the token cannot see it";
  if (sink === "github-dispatch" && status === 422) return " GitHub rejected event_type or client_payload";
  if (sink === "github-dispatch" && status === 403) return " forbidden (the token needs Contents: write)";
  // What the operator can change: the sink's URL, or the receiver's own limits and access rules.
  // Slack's error codes say it themselves (`channel_not_found`, `action_prohibited`).
  if (sink === "slack" && SLACK_ERRORS.has(body.trim())) return "";
  if (status === 403)
    return " forbidden (the receiver refuses hookgate: check its access rules and the sink's url)";
  if (status === 404) return " not found (nothing answers at the sink's url: check it)";
  if (status === 405) return " method not allowed (the sink's url takes no POST: check it)";
  if (status === 413) {
    return sink === "webhook"
      ? ` payload too large (the receiver takes less than the ${WEBHOOK_MAX_BYTES / 1024} KB a body may reach: raise its limit)`
      : " payload too large (a proxy in front of the sink may limit bodies)";
  }
  return "";
}

/**
 * A short, masked, one-line description of an error body (`json`, when it is a JSON object) for
 * the reason: masked whole, then cut, so a cut never leaves the start of a secret.
 */
function describeBody(
  sink: ResolvedSink["type"],
  body: string,
  json: JsonBody,
  secrets: readonly string[],
): string {
  const trimmed = body.trim();
  if (trimmed === "") return "";
  if (sink === "slack") {
    const known = SLACK_ERRORS.get(trimmed);
    if (known !== undefined) return `: ${trimmed} (${known})`;
  }
  const message = json?.message ?? json?.error;
  let text = typeof message === "string" ? message : trimmed;
  if (sink === "discord" && json !== undefined) text = describeDiscordError(text, json);
  // Read across the body's controls: a line end its server's wrapping put inside a secret it
  // echoes would be a space between the two halves here.
  const line = maskString(scrubbedAcrossControls(text, secrets).replace(/\s+/g, " "));
  return `: ${shorten(line, sink === "discord" ? 400 : 200)}`;
}

/**
 * Discord's rate limit as a reason: a global one (`"global": true`, `X-RateLimit-Global`) holds
 * every request from this address, not only this webhook's (discord-api-docs, Rate Limits).
 */
function discordRateLimit(header: (name: string) => string | undefined, json: JsonBody): string {
  const global = json?.global === true || header("x-ratelimit-global")?.trim() === "true";
  const scope = header("x-ratelimit-scope")?.trim();
  if (global) return "rate limited by Discord (global: every webhook posting from this address waits)";
  return scope === undefined || scope === ""
    ? "rate limited by Discord"
    : `rate limited by Discord (scope ${scope})`;
}

/** What to fix for a Discord error, by status and its JSON error code (discord-api-docs, JSON Error Codes). */
function discordHint(status: number, code: unknown): string | undefined {
  if (status === 400) return " Discord refused the message";
  if (status === 401)
    return " unauthorized (the webhook token in the sink's url is wrong: copy the webhook's URL again)";
  if (status === 403)
    return " forbidden (Discord does not let the webhook post there: check the channel or thread it posts in)";
  // 10003 Unknown Channel: the `thread_id` of the url names no thread of the webhook's channel.
  if (status === 404 && code === 10003)
    return " unknown channel (the thread_id in the sink's url names no thread the webhook posts in)";
  if (status === 404)
    return " unknown webhook (it was deleted in Discord: make a new one and put its URL in the sink's url)";
  return undefined;
}

/**
 * Discord's error body (`{"code": 50035, "message": "Invalid Form Body", "errors": {…}}`) as one
 * line: its message and code, then each field it refused, by its path in the body we sent
 * (`embeds.0.description: Must be 4096 or fewer in length. (BASE_TYPE_MAX_LENGTH)`).
 */
function describeDiscordError(message: string, json: Readonly<Record<string, unknown>>): string {
  // API v6 (an unversioned URL, Discord's default) states a refused field in its older form,
  // without `message` or `code`: `{"content": ["Must be 2000 or fewer in length."]}`.
  if (json.message === undefined && json.code === undefined) {
    const fields = discordFieldErrors(json, [], []);
    if (fields.length > 0) return fields.join("; ");
  }
  const code = typeof json.code === "number" ? ` (code ${json.code})` : "";
  const fields = discordFieldErrors(json.errors, [], []);
  return fields.length === 0 ? `${message}${code}` : `${message}${code}: ${fields.join("; ")}`;
}

/**
 * The first few refused fields of Discord's nested `errors` object, each with its path: its
 * `_errors` (API v8 and later), or, in API v6's older form, a field's list of messages, where a
 * list's refused items are named by their indexes alone (`{"embeds": ["0"]}`, the first embed).
 */
function discordFieldErrors(errors: unknown, path: readonly string[], out: string[]): string[] {
  if (!isRecord(errors) || path.length > 12) return out;
  for (const [key, value] of Object.entries(errors)) {
    if (out.length >= 3) break;
    if (key === "_errors") {
      for (const error of Array.isArray(value) ? value : []) {
        if (!isRecord(error) || out.length >= 3) continue;
        const said = typeof error.message === "string" ? error.message : "refused";
        const named = typeof error.code === "string" ? ` (${error.code})` : "";
        out.push(`${path.length === 0 ? "the body" : path.join(".")}: ${said}${named}`);
      }
    } else if (Array.isArray(value)) {
      for (const said of value) {
        if (typeof said !== "string" || out.length >= 3) continue;
        out.push(
          /^\d+$/.test(said)
            ? `${[...path, key, said].join(".")}: refused`
            : `${[...path, key].join(".")}: ${said}`,
        );
      }
    } else {
      discordFieldErrors(value, [...path, key], out);
    }
  }
  return out;
}

function headerReader(headers: Readonly<Record<string, string>>): (name: string) => string | undefined {
  const lower = new Map<string, string>();
  for (const [key, value] of Object.entries(headers)) lower.set(key.toLowerCase(), value);
  return (name) => lower.get(name);
}

/**
 * The wait the server asked for, in ms: Retry-After as delay-seconds or an HTTP date
 * (RFC 9110 §10.2.3) measured from `now`; for Slack and Discord the JSON `retry_after` seconds
 * (Discord's may be a float); for GitHub the rate-limit reset when the quota is spent. Discord's
 * two are milliseconds where `url` is one of its API v6 or v7 (`discordWaitsInMilliseconds`), a
 * Slack sink's at Discord's `/slack` as well, and the answer is its rate limiter's, which always
 * gives `retry_after`: Cloudflare's 429 in front of it (an IP blocked for a while) gives none, and
 * its Retry-After counts seconds (discord-api-docs#1463).
 */
function retryAfterMs(
  sink: ResolvedSink["type"],
  header: (name: string) => string | undefined,
  json: JsonBody,
  now: number,
  url: string | undefined,
): number | undefined {
  const discordMs =
    answersAsDiscord(sink, url) &&
    typeof json?.retry_after === "number" &&
    url !== undefined &&
    discordWaitsInMilliseconds(url);
  const unitMs = discordMs ? 1 : 1000;
  const fromHeader = parseRetryAfter(header("retry-after"), now, unitMs);
  if (fromHeader !== undefined) return fromHeader;
  if (sink === "slack" || sink === "discord") {
    const wait = json?.retry_after;
    if (typeof wait === "number" && Number.isFinite(wait) && wait >= 0) return Math.ceil(wait * unitMs);
  }
  // Discord's own header for when the route's limit resets, in seconds (a float).
  if (answersAsDiscord(sink, url)) {
    const resetAfter = header("x-ratelimit-reset-after")?.trim();
    if (resetAfter !== undefined && /^\d+(?:\.\d+)?$/.test(resetAfter))
      return Math.ceil(Number(resetAfter) * 1000);
  }
  if (sink === "github-dispatch" && header("x-ratelimit-remaining")?.trim() === "0") {
    const reset = header("x-ratelimit-reset")?.trim();
    if (reset !== undefined && /^\d+$/.test(reset)) return Math.max(0, Number(reset) * 1000 - now);
  }
  return undefined;
}

/** Whether Discord's rate limiter answers at `url`: a Discord sink, or a Slack one at Discord's `/slack`. */
function answersAsDiscord(sink: ResolvedSink["type"], url: string | undefined): boolean {
  return sink === "discord" || (sink === "slack" && url !== undefined && isDiscordSlackEndpoint(url));
}

/** asctime's date form (`Sun Nov  6 08:49:37 1994`), the one HTTP date without its zone. */
const ASCTIME = /^[A-Za-z]{3} [A-Za-z]{3} [ \d]?\d \d{2}:\d{2}:\d{2} \d{4}$/;

/**
 * A Retry-After in ms; `unitMs` is what its number counts (a second, but for old Discord APIs).
 * A header sent twice arrives joined by ", " (RFC 9110 §5.3; so does a proxy's merged with the
 * server's): each value is read, an HTTP date's own comma after its day name kept, and the
 * longest wait taken, since a retry before it is only refused again.
 */
export function parseRetryAfter(value: string | undefined, now: number, unitMs = 1000): number | undefined {
  if (value === undefined) return undefined;
  const parts = value.split(",");
  let longest: number | undefined;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]?.trim() ?? "";
    // IMF-fixdate's and RFC 850's day name ends at a comma (`Fri, 21 Aug 2026 …`).
    const one = /^[A-Za-z]{3,9}$/.test(part) && i + 1 < parts.length ? `${part},${parts[++i]}` : part;
    const ms = retryAfterValueMs(one.trim(), now, unitMs);
    if (ms !== undefined && (longest === undefined || ms > longest)) longest = ms;
  }
  return longest;
}

/** One Retry-After value in ms: seconds (or `unitMs`), or an HTTP date. */
function retryAfterValueMs(text: string, now: number, unitMs: number): number | undefined {
  if (/^\d+(?:\.\d+)?$/.test(text)) return Math.ceil(Number(text) * unitMs);
  // HTTP dates start with a day name: IMF-fixdate, RFC 850 and asctime forms.
  if (!/^[A-Za-z]{3}/.test(text)) return undefined;
  // Every HTTP date is GMT (RFC 9110 §5.6.7), but asctime's form does not say so, and Date.parse
  // reads a date that names no zone in the host's own: a server on UTC, a laptop hours off.
  const at = Date.parse(ASCTIME.test(text) ? `${text} GMT` : text);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/** An answer's body read as a JSON object, once per answer; undefined when it is none. */
type JsonBody = Readonly<Record<string, unknown>> | undefined;

function parseJsonObject(body: string): JsonBody {
  const text = body.trim();
  if (!text.startsWith("{")) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Standard Webhooks v1 (reference/fanout.md (c); standard-webhooks spec 1.0.0)

/** Accepted clock difference between a signature's timestamp and now, each way. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/**
 * The `webhook-signature` entry for one message: "v1," + base64(HMAC-SHA256(key, `${id}.${ts}.${body}`)),
 * key = base64-decode(secret without "whsec_"), missing padding tolerated. Throws on an empty or
 * non-base64 secret, and on a timestamp that is not a non-negative integer.
 */
export async function signStandardWebhook(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
  hmac: HmacSha256 = webCryptoHmacSha256,
): Promise<string> {
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new RangeError(`webhook timestamp must be whole seconds, got ${timestampSeconds}`);
  }
  return `v1,${await hmac(webhookKey(secret), `${id}.${timestampSeconds}.${body}`)}`;
}

/**
 * Whether `headers` (webhook-id, webhook-timestamp, webhook-signature) sign `body` with `secret`
 * at epoch ms `now`: all three present, the timestamp an integer within 300 s of now either way,
 * and one space-separated `v1,` entry equal to the expected signature (constant-time compare;
 * other versions are skipped). Throws, like signing, on an unusable secret.
 */
export async function verifyStandardWebhook(
  secret: string,
  headers: { id?: string; timestamp?: string; signature?: string },
  body: string,
  now: number,
  hmac: HmacSha256 = webCryptoHmacSha256,
): Promise<boolean> {
  const key = webhookKey(secret);
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature) return false;
  if (!/^\d{1,15}$/.test(timestamp)) return false;
  const nowSeconds = Math.floor(now / 1000);
  const sentAt = Number(timestamp);
  if (nowSeconds - sentAt > WEBHOOK_TOLERANCE_SECONDS || sentAt - nowSeconds > WEBHOOK_TOLERANCE_SECONDS)
    return false;
  // Signed over the timestamp exactly as sent, the bytes the sender signed.
  const expected = await hmac(key, `${id}.${timestamp}.${body}`);
  let matched = false;
  for (const entry of signature.split(" ")) {
    const comma = entry.indexOf(",");
    if (comma < 0 || entry.slice(0, comma) !== "v1") continue;
    if (constantTimeEqual(entry.slice(comma + 1), expected)) matched = true;
  }
  return matched;
}

/** The raw key of a Standard Webhooks secret. */
function webhookKey(secret: string): Uint8Array<ArrayBuffer> {
  const key = readWebhookKey(secret);
  if (typeof key === "string") throw new Error(`webhook secret ${key}`);
  return key;
}

/** The HmacSha256 port through WebCrypto, on any runtime (Workers use it; Node passes its own). */
export const webCryptoHmacSha256: HmacSha256 = async (key, message) => {
  const imported = await crypto.subtle.importKey(
    "raw",
    new Uint8Array(key),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", imported, new TextEncoder().encode(message));
  return toBase64(new Uint8Array(mac));
};

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Time depends only on the expected signature's length, never on where the inputs differ. */
function constantTimeEqual(actual: string, expected: string): boolean {
  let diff = actual.length ^ expected.length;
  for (let i = 0; i < expected.length; i++) diff |= (actual.charCodeAt(i) | 0) ^ expected.charCodeAt(i);
  return diff === 0;
}
