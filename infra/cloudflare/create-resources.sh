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

npx wrangler queues create hookgate-jobs --message-retention-period-secs "$retention"
npx wrangler queues create hookgate-jobs-dlq --message-retention-period-secs "$retention"
npx wrangler kv namespace create hookgate-sessions --binding HOOKGATE_SESSIONS
