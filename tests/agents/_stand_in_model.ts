/**
 * A scripted stand-in for a hosted model, on 127.0.0.1 only, for driving real agent CLIs in
 * `deno task test:agents`. Whatever the wire protocol (Anthropic Messages, OpenAI chat completions
 * or responses, Gemini generateContent; streaming or not, see `_model_wire.ts`), every request is
 * answered by one plan: call `list_tools`, then `execute` with the given script, then answer in
 * text. The tools are found by name suffix among the tools the agent offers (`mcp__symposium__execute`,
 * `symposium_execute`, `mcp_symposium_execute`…). Every request is recorded: the tools offered and
 * the tool results the agent sent back, which is what the tests check.
 *
 * @module
 */
import {
  type ModelTurn,
  type ParsedRequest,
  parseRequest,
  renderResponse,
  type WireApi,
} from "./_model_wire.ts";

/** One request the stand-in received. */
export interface RecordedRequest {
  api: WireApi;
  path: string;
  /** Names of the tools the agent offered, as the agent spells them. */
  tools: string[];
  /** Tool results in the conversation so far: our call id → the text the agent sent back. */
  results: Record<string, string>;
  /** What the stand-in answered. */
  turn: ModelTurn;
}

/** Options of {@link startStandInModel}. */
export interface StandInOptions {
  /** The `execute` script the plan sends. */
  script: string;
  /** Final text once both results are in. @default "stand-in: done" */
  finalText?: string;
  /** Writes each request body to `<dir>/<n>-<api>.json` when set (debugging a new agent). */
  dumpDir?: string | undefined;
}

/** A running stand-in; `close()` stops it. */
export interface StandInModel {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  baseUrl: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Call ids of the plan's two calls; every wire format carries them back with the results. */
export const LIST_TOOLS_CALL_ID = "call_symposium_list_tools";
/** See {@link LIST_TOOLS_CALL_ID}. */
export const EXECUTE_CALL_ID = "call_symposium_execute";

/** Largest request body read, in bytes (agents send their whole prompt and tool list). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

/**
 * The plan's next turn for one request: a tool call while a result is missing, else text.
 * A request that offers no `…list_tools`/`…execute` pair (title generation, quota probes) gets text.
 */
export function nextTurn(request: ParsedRequest, options: StandInOptions): ModelTurn {
  const listTools = request.tools.find((t) => /(^|[^a-z])list_tools$/.test(t));
  const execute = request.tools.find((t) => /(^|[^a-z])execute$/.test(t) && t !== listTools);
  const finalText = options.finalText ?? "stand-in: done";
  if (listTools === undefined || execute === undefined) return { kind: "text", text: finalText };
  if (request.results[LIST_TOOLS_CALL_ID] === undefined) {
    return { kind: "tool", id: LIST_TOOLS_CALL_ID, name: listTools, args: { detail: "names" } };
  }
  if (request.results[EXECUTE_CALL_ID] === undefined) {
    return { kind: "tool", id: EXECUTE_CALL_ID, name: execute, args: { script: options.script } };
  }
  return { kind: "text", text: finalText };
}

/**
 * Starts the stand-in on `127.0.0.1` (a free port).
 *
 * @returns The running stand-in; its `requests` grow as the agent talks to it.
 */
export function startStandInModel(options: StandInOptions): Promise<StandInModel> {
  const requests: RecordedRequest[] = [];
  let count = 0;
  const { promise: listening, resolve } = Promise.withResolvers<number>();
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: ({ port }) => resolve(port),
  }, async (req) => {
    const url = new URL(req.url);
    if (req.method === "GET") {
      // Model listings (OpenAI-compatible clients ask before the first turn).
      return Response.json({ object: "list", data: [{ id: "stand-in", object: "model", owned_by: "test" }] });
    }
    const text = await readBounded(req);
    if (text === undefined) return new Response("request too large", { status: 413 });
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return new Response("not JSON", { status: 400 });
    }
    const parsed = parseRequest(url, body);
    if (parsed === undefined) return new Response(`no such endpoint: ${url.pathname}`, { status: 404 });
    const n = ++count;
    if (options.dumpDir) {
      await Deno.writeTextFile(`${options.dumpDir}/${String(n).padStart(3, "0")}-${parsed.api}.json`, text);
    }
    if (parsed.countOnly) return Response.json({ input_tokens: 10, totalTokens: 10 });
    const turn = nextTurn(parsed, options);
    requests.push({
      api: parsed.api,
      path: url.pathname,
      tools: parsed.tools,
      results: parsed.results,
      turn,
    });
    return renderResponse(parsed, turn, `stand-in-${n}`);
  });
  return listening.then((port) => ({
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () => server.shutdown(),
  }));
}

async function readBounded(req: Request): Promise<string | undefined> {
  if (!req.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of req.body) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return new TextDecoder().decode(all);
}
