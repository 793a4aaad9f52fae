/**
 * What `send` and `doctor` say of a TLS handshake with the gateway that failed on its certificate
 * (a proxy that inspects TLS, a private CA). A made error, as Node gives it: a certificate Node
 * does not trust needs one made by a library this repo does not have.
 */

import { describe, expect, it } from "vitest";
import { GATEWAY } from "../../src/adapters/gateway-client/node.js";
import { describeTlsFailure } from "../../src/core/tls-failure.js";

const failure = (code: string) => Object.assign(new Error("certificate refused"), { code });

describe("describeTlsFailure", () => {
  it.each(["SELF_SIGNED_CERT_IN_CHAIN", "UNABLE_TO_GET_ISSUER_CERT_LOCALLY", "DEPTH_ZERO_SELF_SIGNED_CERT"])(
    "gives a certificate failure (%s) a fix that names NODE_EXTRA_CA_CERTS and the CA's file",
    (code) => {
      // Without one, doctor added "start the gateway" to a gateway that answered.
      const described = describeTlsFailure(
        failure(code),
        new URL("https://gateway.example.test/v1/hooks"),
        GATEWAY,
      );
      expect(described?.error).toBe(`TLS to gateway.example.test failed (${code})`);
      expect(described?.fix).toMatch(/NODE_EXTRA_CA_CERTS/);
      expect(described?.fix).toMatch(/CA's certificate file/);
    },
  );

  it.each(["CERT_HAS_EXPIRED", "CERT_NOT_YET_VALID"])(
    "gives a certificate out of its dates (%s) the fix of renewing it, not of trusting its CA",
    (code) => {
      const described = describeTlsFailure(
        failure(code),
        new URL("https://gateway.example.test/v1/hooks"),
        GATEWAY,
      );
      expect(described).toEqual({
        error: `TLS to gateway.example.test failed (${code})`,
        fix: "renew the gateway's certificate, or set this machine's clock right",
      });
    },
  );
});
