#!/usr/bin/env node
// A team's own hook server, the kind a hookgate `forward` rule relays to: it speaks Claude Code's
// http-hook contract (a hook event in, a decision body or nothing out) and here refuses to let an
// agent delete a GitHub repository or change a branch's protection through MCP tools.
//   TEAM_HOOK_TOKEN=secret node examples/team-hook-server.mjs   (listens on 127.0.0.1:9797)
import { createServer } from "node:http";

const token = process.env.TEAM_HOOK_TOKEN ?? "";
const port = Number(process.env.PORT ?? 9797);
const refused = new Map([
  ["mcp__github__delete_repository", "Repositories are deleted by a person, never by an agent."],
  ["mcp__github__update_branch_protection", "Branch protection is managed in the platform repo."],
]);

const server = createServer((req, res) => {
  let body = "";
  req.on("data", (chunk) => {
    body += chunk;
  });
  req.on("end", () => {
    if (token && req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401).end();
      return;
    }
    let event;
    try {
      event = JSON.parse(body);
    } catch {
      res.writeHead(400).end();
      return;
    }
    const reason = refused.get(event.tool_name);
    if (!reason) {
      res.writeHead(200).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        hookSpecificOutput: {
          hookEventName: event.hook_event_name,
          permissionDecision: "deny",
          permissionDecisionReason: reason,
        },
      }),
    );
  });
});
// PORT=0 takes a free port; the line says which.
server.listen(port, "127.0.0.1", () =>
  console.log(`team hook server on http://127.0.0.1:${server.address().port}/hook`),
);
