/**
 * An HTTP answer's header fields as hookgate's Node clients read them, the egress guard's
 * (adapters/egress/undici.ts) and the CLI's for a gateway (adapters/gateway-client): one string a
 * name, the codings a header names (RFC 9110 §8.4), and the words for a body that does not decode
 * as they say, which the Workers egress uses too. The egress guard decodes those codings
 * (undici.ts `decoded`); the CLI decodes as the agent's client does (gateway-client/node.ts
 * `codingsRead`) and names the ones that client leaves on an answer (`leftCoded`).
 */
import { errorMessage } from "./errors.js";

/**
 * Node's header record (an array for a field that came more than once) as one string a name, the
 * lines of a field joined as RFC 9110 §5.3 combines them.
 */
export function flatHeaders(
  headers: Readonly<Record<string, string | readonly string[] | undefined>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = typeof value === "string" ? value : value.join(", ");
  }
  return out;
}

/** The header that names a coding. */
export type CodingHeader = "Content-Encoding" | "Transfer-Encoding";

/**
 * The codings a header names, in the order the server applied them: lower case, without
 * `identity` (no coding), and of a Transfer-Encoding without `chunked`, which the HTTP client has
 * taken off already. Node gives a header field that came twice as an array.
 */
export function codingsOf(value: string | readonly string[] | undefined, header: CodingHeader): string[] {
  return [value ?? []]
    .flat()
    .flatMap((h) => h.split(","))
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity" && !(header === "Transfer-Encoding" && c === "chunked"));
}

/**
 * How a body that did not decode from `coding` is said: the coding, the header that named it,
 * and the decoder's failure by its code and message on one line (zlib's end in a period, and
 * others may break a line).
 */
export function undecodedAs(coding: string, error: unknown, header: CodingHeader): string {
  const code = (error as { code?: unknown })?.code;
  const message = errorMessage(error).replace(/\s+/g, " ").trim().replace(/\.$/, "");
  return `does not decode as its ${header} ${coding} says (${typeof code === "string" ? `${code}: ` : ""}${message})`;
}
