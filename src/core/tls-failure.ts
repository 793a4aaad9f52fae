/**
 * What a failed TLS handshake most likely means, and what to change, in one wording for every
 * outbound path: the CLI's requests to the gateway (`send`, `doctor`) and to their proxy, and the
 * egress guard's forwards, sink deliveries and model calls. Node's and undici's own words name an
 * OpenSSL code or line, which says nothing of what to do.
 */
import { errorMessage } from "./errors.js";

export interface TlsFailure {
  /** One line: whose TLS failed, and how. */
  readonly error: string;
  /** What to change, where the failure says it. */
  readonly fix?: string;
}

/** The words of a fix that differ with who asked: where the URL is written, where Node starts. */
export interface TlsFixPlace {
  /** Where the URL is written, to change its host or scheme: "--url and in the hook URL". */
  readonly urlIn: string;
  /** Whose certificate it is: "the gateway's", "the proxy's", "the server's". */
  readonly whose: string;
  /** Where NODE_EXTRA_CA_CERTS is set: "the shell that runs hookgate and the agent". */
  readonly startedIn: string;
  /** Why http:// is right there, said after the fix of an https URL to plain http (may be ""). */
  readonly plainHttpWhy: string;
}

/**
 * A failed TLS handshake with `url`'s host, or undefined for another failure. node:https gives
 * EPROTO for a server speaking plain http, undici OpenSSL's own code (ERR_SSL_WRONG_VERSION_NUMBER):
 * the line's reason says it either way.
 */
export function describeTlsFailure(e: unknown, url: URL, place: TlsFixPlace): TlsFailure | undefined {
  const found = e instanceof Error ? (e as { code?: unknown }).code : undefined;
  const code = typeof found === "string" ? found : undefined;
  // OpenSSL's whole error line comes, its source file and a line break included.
  const reason = /SSL routines:[^:]*:([^:]+)/.exec(errorMessage(e))?.[1];
  if (reason !== undefined) {
    if (reason !== "wrong version number") return { error: `TLS to ${url.host} failed (${reason})` };
    return {
      error: `TLS to ${url.host} failed (${reason}): the server may speak plain http (try http://)`,
      fix: `use http:// in ${place.urlIn}${place.plainHttpWhy}`,
    };
  }
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID") return nameMismatch(e, url, place);
  const certificate = code !== undefined && isCertificateCode(code);
  if (!certificate && !code?.startsWith("ERR_TLS")) return undefined;
  const error = `TLS to ${url.host} failed (${code})`;
  if (code === "CERT_HAS_EXPIRED" || code === "CERT_NOT_YET_VALID")
    return { error, fix: `renew ${place.whose} certificate, or set this machine's clock right` };
  // Any other certificate code is one Node does not trust: a private CA, or a proxy inspecting TLS.
  return certificate ? { error, fix: privateCaFix(place) } : { error };
}

/**
 * OpenSSL's verify codes as Node gives them (`X509_V_ERR_` left off): most name a certificate;
 * UNABLE_TO_VERIFY_LEAF_SIGNATURE does not, and is the one a server signed by a private CA that
 * sends no chain gives.
 */
function isCertificateCode(code: string): boolean {
  return code.includes("CERT") || code === "UNABLE_TO_VERIFY_LEAF_SIGNATURE";
}

/**
 * A certificate Node trusts, made for other names than the URL's host. Node's error carries the
 * certificate, whose subjectAltName lists the names it holds (`DNS:a.example, IP Address:10.0.0.1`).
 */
function nameMismatch(e: unknown, url: URL, place: TlsFixPlace): TlsFailure {
  const names = (e as { cert?: { subjectaltname?: unknown } }).cert?.subjectaltname;
  const holds = typeof names === "string" && names !== "" ? names : undefined;
  const host = url.hostname;
  return {
    error: `TLS to ${url.host} failed (ERR_TLS_CERT_ALTNAME_INVALID): ${place.whose} certificate is not for ${host}${holds === undefined ? "" : `; it holds ${holds}`}`,
    fix: `${holds === undefined ? "use a name the certificate holds" : "use one of those names"} as the host in ${place.urlIn}, or have ${place.whose} certificate made for ${host} too`,
  };
}

function privateCaFix(place: TlsFixPlace): string {
  return `if a proxy inspects TLS, or ${place.whose} certificate comes from a private CA, set NODE_EXTRA_CA_CERTS to the path of that CA's certificate file (PEM) in ${place.startedIn}: Node reads it only as it starts`;
}
