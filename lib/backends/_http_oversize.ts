/**
 * The streamable HTTP transport of the SDK only logs an SSE stream that fails (the request then
 * waits for its timeout). When the stream failed because an event passed the message budget, the
 * request the POST carried gets a made-up error answer saying its answer was too large, so the
 * caller learns it at once and why. In the modern era (2026-07-28, no stream resumption) a response
 * stream that breaks for any other reason is reported the same way, as a broken stream: the request is
 * not sent again with a new id, since a tool call may already have run and a second one could repeat
 * its effects; the script sees the error and decides.
 *
 * @module
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { MessageTooLargeError, sniffMessage, type TooLargeData } from "../jsonrpc/mod.ts";
import { ANSWER_TOO_LARGE_CODE } from "./_stdio_streams.ts";

/** JSON-RPC code of the made-up answer to a request whose response stream broke (`Internal error`). */
export const STREAM_BROKEN_CODE = -32603;

/** Bytes looked at from each end of a request body to find its `id` (no full parse). */
const SNIFF_BYTES = 4096;

/**
 * Wraps an SSE `response` to a POST whose `body` is one JSON-RPC request: the same bytes, and
 * when the stream fails with {@link MessageTooLargeError}, `deliver` gets an error answer to that
 * request (after the SDK has seen the failure). Other responses are returned as they are.
 *
 * @param body The request body as the SDK sent it (a JSON string).
 * @param deliver Hands a message to the SDK client as if the server had sent it.
 * @param reportBreaks Whether any other failure of the stream is answered too (modern era). @default false
 */
export function failOversizeEvents(
  response: Response,
  body: BodyInit | null | undefined,
  deliver: (message: JSONRPCMessage) => void,
  reportBreaks = false,
): Response {
  if (typeof body !== "string" || response.body === null) return response;
  if (!/^\s*text\/event-stream\b/i.test(response.headers.get("content-type") ?? "")) return response;
  const { id, keys } = sniffMessage(body.slice(0, SNIFF_BYTES), body.slice(-SNIFF_BYTES));
  if (id === null || !keys.includes("method")) return response;
  const reader = response.body.getReader();
  const watched = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await reader.read();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      } catch (error) {
        controller.error(error);
        if (!(error instanceof MessageTooLargeError)) {
          if (!reportBreaks) return;
          const why = error instanceof Error ? error.message : String(error);
          const message = `the response stream broke before the result (${why}); the request was not ` +
            "sent again, as a tool call may have run already";
          setTimeout(() => deliver({ jsonrpc: "2.0", id, error: { code: STREAM_BROKEN_CODE, message } }), 0);
          return;
        }
        const data: TooLargeData = { tooLarge: { bytes: error.bytes, maxBytes: error.maxBytes } };
        setTimeout(
          () =>
            deliver({
              jsonrpc: "2.0",
              id,
              error: { code: ANSWER_TOO_LARGE_CODE, message: error.message, data },
            }),
          0,
        );
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(watched, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
