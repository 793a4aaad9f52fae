/**
 * Reads a request body as UTF-8 text, up to a byte limit, without trusting Content-Length.
 * An oversized body is not read further; its first bytes are kept so the event can still be
 * named in the answer.
 */
import type { RequestError } from "../core/errors.js";
import { sniffEventName } from "../core/events.js";

const SNIFF_BYTES = 64 * 1024;

export type BodyResult =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly error: RequestError };

export async function readBody(request: Request, maxBytes: number): Promise<BodyResult> {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  const reader = request.body?.getReader();
  if (!reader) return { ok: true, text: "" };
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
      if (size > maxBytes || declared > maxBytes) {
        await reader.cancel().catch(() => undefined);
        return tooLarge(chunks, Math.max(size, Number.isFinite(declared) ? declared : 0), maxBytes);
      }
    }
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return {
      ok: false,
      error: { code: "BODY_UNREADABLE", message: `the request body could not be read (${why})` },
    };
  }
  const bytes = concat(chunks, size);
  try {
    return { ok: true, text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
  } catch {
    return {
      ok: false,
      error: {
        code: "BODY_NOT_UTF8",
        message: "the request body is not valid UTF-8",
        eventName: sniffEventName(new TextDecoder().decode(bytes.subarray(0, SNIFF_BYTES))),
      },
    };
  }
}

function tooLarge(chunks: Uint8Array[], size: number, maxBytes: number): BodyResult {
  const head = concat(chunks, Math.min(size, SNIFF_BYTES)).subarray(0, SNIFF_BYTES);
  return {
    ok: false,
    error: {
      code: "BODY_TOO_LARGE",
      message: `the request body is ${size > maxBytes ? `over ${maxBytes}` : size} bytes; this gateway reads at most ${maxBytes} (defaults.maxBodyBytes)`,
      eventName: sniffEventName(new TextDecoder().decode(head)),
    },
  };
}

function concat(chunks: Uint8Array[], limit: number): Uint8Array {
  const out = new Uint8Array(limit);
  let offset = 0;
  for (const chunk of chunks) {
    if (offset >= limit) break;
    const part = chunk.subarray(0, limit - offset);
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}
