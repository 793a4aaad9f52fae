#!/usr/bin/env bash
# Creates, once per account, the Cloudflare resources wrangler.toml binds: the notify queue, its
# dead-letter queue and the session KV namespace. Run from the repository root, logged in
# (`npx wrangler login` or CLOUDFLARE_API_TOKEN). Then put the printed KV id into wrangler.toml
# (the snippet it prints names the binding HOOKGATE_SESSIONS, as wrangler.toml does).
#
#   infra/cloudflare/create-resources.sh            # Workers Paid: 14-day retention
#   RETENTION_SECONDS=86400 infra/cloudflare/create-resources.sh   # Workers Free caps it at 1 day
set -euo pipefail
retention="${RETENTION_SECONDS:-1209600}"
# No usage metrics or error reports to Cloudflare (wrangler sends metrics unless told not to), and
# no fetch of the request `cf` object, unless the caller set these otherwise.
export WRANGLER_SEND_METRICS="${WRANGLER_SEND_METRICS:-false}"
export WRANGLER_SEND_ERROR_REPORTS="${WRANGLER_SEND_ERROR_REPORTS:-false}"
export CLOUDFLARE_CF_FETCH_ENABLED="${CLOUDFLARE_CF_FETCH_ENABLED:-false}"

npx wrangler queues create hookgate-jobs --message-retention-period-secs "$retention"
npx wrangler queues create hookgate-jobs-dlq --message-retention-period-secs "$retention"
npx wrangler kv namespace create hookgate-sessions --binding HOOKGATE_SESSIONS
