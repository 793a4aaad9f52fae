#!/usr/bin/env bash
# What teams run today in place of a gateway, measured by bench/command-hook.js: a Claude Code
# command hook applying bench/policy.json's rule `no-rm-root` (deny a Bash command that starts
# with `rm -rf /`), in its leanest usual form: one jq to read the event, printf to answer.
#
# Claude Code runs a command hook as `sh -c COMMAND` with the event's JSON on stdin, and reads
# stdout when it exits 0: a JSON object there is the hook's answer, no output means no opinion
# (exit 2 would block with stderr as the reason, but only the JSON form carries a
# permissionDecision and its reason).
set -euo pipefail

command=$(jq -r 'select(.hook_event_name == "PreToolUse" and .tool_name == "Bash") | .tool_input.command // empty')
if [[ $command == "rm -rf /"* ]]; then
  printf '%s\n' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Deleting from / is never allowed"}}'
fi
exit 0
