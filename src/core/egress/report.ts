/**
 * What a composition root does with each egress refusal: one warning line and one count. The
 * target is shown as its origin and `/…` (a webhook's path is its secret), the reason masked. A
 * call given up because its client left (`clientLeft`) or `serve` is stopping (`gatewayStopping`)
 * is no refusal: a debug line, no count.
 */
import { maskString } from "../mask.js";
import type { Logger, Metrics } from "../ports.js";
import type { EgressRefusal } from "./refusal.js";
import { describeRawTarget } from "./target.js";

export function reportRefusals(
  logger: Logger,
  metrics: Metrics | undefined,
): (refusal: EgressRefusal, url: string) => void {
  return (refusal, url) => {
    // Given up because its hook's client left (a cancelled tool call, an Esc): nothing is wrong
    // with the target, and an alert on refusals or timeouts must not fire on every one.
    if (refusal.clientLeft) {
      logger.log("debug", "egress call given up: its client left", {
        code: refusal.code,
        stage: refusal.stage,
        url: describeRawTarget(url),
      });
      return;
    }
    // Given up because serve is stopping (SIGTERM, a deploy's restart): the target had its time
    // cut short, and a timeout counted at every restart alarms whoever alerts on them.
    if (refusal.gatewayStopping) {
      logger.log("debug", "egress call given up: the gateway is stopping", {
        code: refusal.code,
        stage: refusal.stage,
        url: describeRawTarget(url),
      });
      return;
    }
    logger.log("warn", "egress refused", {
      code: refusal.code,
      stage: refusal.stage,
      reason: maskString(refusal.reason),
      url: describeRawTarget(url),
    });
    metrics?.increment("hookgate_egress_refused_total", { code: refusal.code });
  };
}
