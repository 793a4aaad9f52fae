/**
 * Where a Discord sink posts: Discord's own Execute Webhook endpoint, the webhook URL itself
 * (discord-api-docs, Execute Webhook). String-based so that a malformed URL is passed on for the
 * egress guard to refuse, never thrown here. A module of its own so that the policy's load, which
 * warns about a URL given with `/slack`, does not load the sink renderers.
 */

/** The URL without its fragment, split at its query: `[path, query]`. */
function splitUrl(url: string): [string, string] {
  const hash = url.indexOf("#");
  const withoutHash = hash < 0 ? url : url.slice(0, hash);
  const question = withoutHash.indexOf("?");
  return question < 0 ? [withoutHash, ""] : [withoutHash.slice(0, question), withoutHash.slice(question + 1)];
}

const SLACK_SUFFIX = /\/slack\/*$/;

/**
 * Whether the URL names Discord's Slack-compatible endpoint (`…/slack`), which hookgate posted to
 * before and which takes no `allowed_mentions`: the policy's load warns that it is left out.
 */
export function endsInSlackEndpoint(url: string): boolean {
  return SLACK_SUFFIX.test(splitUrl(url)[0]);
}

const DISCORD_SLACK_ENDPOINT = /\/api\/(?:v\d+\/)?webhooks\/[^/]+\/[^/]+\/slack\/*$/;

/**
 * Whether a Slack sink's URL is Discord's Slack-compatible endpoint
 * (`/api/webhooks/{id}/{token}/slack`, discord-api-docs, Execute Slack-Compatible Webhook): Discord's
 * rate limiter answers there, its waits in the units of the URL's API version.
 */
export function isDiscordSlackEndpoint(url: string): boolean {
  return DISCORD_SLACK_ENDPOINT.test(splitUrl(url)[0]);
}

/**
 * The Execute Webhook URL for a Discord sink's URL: a trailing `/slack` and slashes dropped, the
 * query kept (`thread_id=…` posts into a thread) with `wait=true`, so that Discord answers with
 * the message or an error instead of a 204 for everything.
 */
export function discordWebhookUrl(url: string): string {
  const [rawPath, query] = splitUrl(url);
  const path = rawPath.replace(SLACK_SUFFIX, "").replace(/\/+$/, "");
  const params = query.split("&").filter((p) => p !== "" && !/^wait(?:=|$)/.test(p));
  params.push("wait=true");
  return `${path}?${params.join("&")}`;
}

/**
 * Whether Discord counts a 429's waits at this URL (its `Retry-After` and the body's `retry_after`)
 * in milliseconds rather than seconds. A path without an API version (`/api/webhooks/…`, what
 * Discord's Copy Webhook URL gives) is served by Discord's default version, 6, which counts them
 * in milliseconds, as v7 does; v8 and later count seconds (discord-api-docs, API Versioning and
 * the v8 changelog; seen on webhooks in discord-api-docs#1454, #2360 and #4722).
 */
export function discordWaitsInMilliseconds(url: string): boolean {
  const version = /\/api\/v(\d+)\//.exec(splitUrl(url)[0])?.[1];
  return version === undefined || Number(version) < 8;
}
