/**
 * bench/coldstart.js's baseline: the smallest Hono Lambda handler, bundled by the benchmark with
 * the options scripts/build-lambda.mjs uses and cold-started the same way as hookgate's.
 */
import { Hono } from "hono";
import { handle } from "hono/aws-lambda";

const app = new Hono();
app.post("*", (c) => c.json({ ok: true }));
export const handler = handle(app);
