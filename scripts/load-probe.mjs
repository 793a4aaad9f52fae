/**
 * Preloaded into the gateway by scripts/load.mjs (`node --import`), so the load run can read the
 * V8 heap, which /proc cannot show: once a second, one stderr line
 * `hookgate-load-probe {"heapUsed":...,"heapTotal":...,"external":...,"arrayBuffers":...}` (bytes).
 * The timer is unref'd: it never keeps `hookgate serve` alive after SIGTERM.
 */
const PREFIX = "hookgate-load-probe ";

setInterval(() => {
  const { heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  process.stderr.write(`${PREFIX}${JSON.stringify({ heapUsed, heapTotal, external, arrayBuffers })}\n`);
}, 1000).unref();
