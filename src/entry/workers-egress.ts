/**
 * The Worker's egress guard (DoH resolver and fetch) and what it does with a refusal, which
 * workers.ts loads together on first use. One module, not two import()s: then errors.ts and
 * mask.ts, which the two import, are reached from the same entry points, and esbuild puts them in
 * one chunk of the main module instead of two (scripts/build-worker.mjs).
 */
export { createDohResolver, createWorkersEgress } from "../adapters/egress/workers-fetch.js";
export { reportRefusals } from "../core/egress/report.js";
