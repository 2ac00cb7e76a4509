/**
 * Wire formats of the hosted-model APIs the agent CLIs speak, reduced to what the stand-in model
 * needs: read the tools offered and the tool results sent back, and answer one turn (a tool call
 * or text), streaming (server-sent events) when the request asks for it.
 * Shapes follow the public API references: Anthropic Messages (`/v1/messages`), OpenAI chat
 * completions (`/v1/chat/completions`) and responses (`/v1/responses`), Gemini
 * (`/v1beta/models/<m>:generateContent`, `:streamGenerateContent?alt=sse`).
 *
 * @module
 */

/** The model APIs the stand-in speaks. */
export type WireApi = "anthropic" | "openai-chat" | "openai-responses" | "gemini";

/** What the stand-in reads from one request. */
export interface ParsedRequest {
  api: WireApi;
  stream: boolean;
  /** A token-count request (answered with a fixed count, not recorded). */
  countOnly: boolean;
  model: string;
  tools: string[];
  /** Call id → the tool result text the agent sent back for it. */
  results: Record<string, string>;
  /** Gemini only: the response is a JSON array when streaming without `alt=sse`. */
  sse: boolean;
  /**
   * Responses API only: tools offered inside a namespace group, by qualified name
   * (`mcp__symposium__execute` → `{ namespace: "mcp__symposium", name: "execute" }`); a call names both.
   */
  namespaced: Record<string, { namespace: string; name: string }>;
}

/** One answer of the stand-in. */
export type ModelTurn =
  | { kind: "tool"; id: string; name: string; args: Record<string, unknown> }
  | { kind: "text"; text: string };

type Json = Record<string, unknown>;

const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const asObject = (
  v: unknown,
): Json => (typeof v === "object" && v !== null && !Array.isArray(v) ? v as Json : {});

/** Text of a tool-result payload: strings as they are, text parts joined, anything else as JSON. */
function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((part) => {
      const p = asObject(part);
      return typeof p.text === "string" ? p.text : JSON.stringify(part);
    }).join("\n");
  }
  return JSON.stringify(content);
}

/**
 * Tool names from an OpenAI-style tool list. A namespace group (`{ type: "namespace", name, tools }`,
 * as Codex sends MCP servers) contributes `<namespace>__<tool>` names, recorded in `namespaced`.
 */
function openAiToolNames(tools: unknown, namespaced: ParsedRequest["namespaced"] = {}): string[] {
  return asArray(tools).flatMap((t) => {
    const tool = asObject(t);
    if (Array.isArray(tool.tools) && typeof tool.name === "string") {
      const namespace = tool.name;
      return openAiToolNames(tool.tools).map((name) => {
        const qualified = namespace.endsWith("_") ? `${namespace}${name}` : `${namespace}__${name}`;
        namespaced[qualified] = { namespace, name };
        return qualified;
      });
    }
    const name = asObject(tool.function).name ?? tool.name;
    return typeof name === "string" ? [name] : [];
  });
}

/**
 * Reads a request of any of the four APIs.
 *
 * @param url The request URL (the API is told by the path's suffix, so any base-URL prefix works).
 * @returns `undefined` for a path that is none of them.
 */
export function parseRequest(url: URL, body: unknown): ParsedRequest | undefined {
  const path = url.pathname;
  const b = asObject(body);
  const model = typeof b.model === "string" ? b.model : "stand-in";
  const stream = b.stream === true;
  if (path.endsWith("/messages") || path.endsWith("/messages/count_tokens")) {
    const results: Record<string, string> = {};
    for (const m of asArray(b.messages)) {
      for (const block of asArray(asObject(m).content)) {
        const c = asObject(block);
        if (c.type === "tool_result" && typeof c.tool_use_id === "string") {
          results[c.tool_use_id] = resultText(c.content);
        }
      }
    }
    const tools = asArray(b.tools).map((t) => asObject(t).name).filter((n): n is string =>
      typeof n === "string"
    );
    return {
      api: "anthropic",
      stream,
      countOnly: path.endsWith("count_tokens"),
      model,
      tools,
      results,
      sse: true,
      namespaced: {},
    };
  }
  if (path.endsWith("/chat/completions")) {
    const results: Record<string, string> = {};
    for (const m of asArray(b.messages)) {
      const msg = asObject(m);
      if (msg.role === "tool" && typeof msg.tool_call_id === "string") {
        results[msg.tool_call_id] = resultText(msg.content);
      }
    }
    return {
      api: "openai-chat",
      stream,
      countOnly: false,
      model,
      tools: openAiToolNames(b.tools),
      results,
      sse: true,
      namespaced: {},
    };
  }
  if (path.endsWith("/responses")) {
    const results: Record<string, string> = {};
    for (const item of asArray(b.input)) {
      const i = asObject(item);
      if (i.type === "function_call_output" && typeof i.call_id === "string") {
        results[i.call_id] = resultText(i.output);
      }
    }
    const namespaced: ParsedRequest["namespaced"] = {};
    const tools = openAiToolNames(b.tools, namespaced);
    return {
      api: "openai-responses",
      stream,
      countOnly: false,
      model,
      tools,
      results,
      sse: true,
      namespaced,
    };
  }
  const gemini = /\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/.exec(path);
  if (gemini) {
    const results: Record<string, string> = {};
    for (const c of asArray(b.contents)) {
      for (const part of asArray(asObject(c).parts)) {
        const fr = asObject(asObject(part).functionResponse);
        if (typeof fr.name !== "string") continue;
        const id = typeof fr.id === "string" ? fr.id : fr.name;
        results[id] = resultText(fr.response);
      }
    }
    const tools = asArray(b.tools).flatMap((t) =>
      asArray(asObject(t).functionDeclarations).map((d) => asObject(d).name)
    ).filter((n): n is string => typeof n === "string");
    return {
      api: "gemini",
      stream: gemini[2] === "streamGenerateContent",
      countOnly: gemini[2] === "countTokens",
      model: gemini[1]!,
      tools,
      results,
      sse: url.searchParams.get("alt") === "sse",
      namespaced: {},
    };
  }
  return undefined;
}

/** Server-sent events: `event:` (when named) and `data:` lines per event. */
function sse(events: { event?: string; data: unknown }[]): Response {
  const text = events.map((e) => `${e.event ? `event: ${e.event}\n` : ""}data: ${JSON.stringify(e.data)}\n\n`)
    .join("");
  return new Response(text, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
  });
}

function anthropic(req: ParsedRequest, turn: ModelTurn, id: string): Response {
  const block = turn.kind === "tool"
    ? { type: "tool_use", id: turn.id, name: turn.name, input: turn.args }
    : { type: "text", text: turn.text };
  const stopReason = turn.kind === "tool" ? "tool_use" : "end_turn";
  const usage = {
    input_tokens: 10,
    output_tokens: 5,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
  const message = { id, type: "message", role: "assistant", model: req.model, stop_sequence: null };
  if (!req.stream) return Response.json({ ...message, content: [block], stop_reason: stopReason, usage });
  const start = turn.kind === "tool" ? { ...block, input: {} } : { ...block, text: "" };
  const delta = turn.kind === "tool"
    ? { type: "input_json_delta", partial_json: JSON.stringify(turn.args) }
    : { type: "text_delta", text: turn.text };
  return sse([
    {
      event: "message_start",
      data: { type: "message_start", message: { ...message, content: [], stop_reason: null, usage } },
    },
    { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: start } },
    { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta } },
    { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
    {
      event: "message_delta",
      data: { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage },
    },
    { event: "message_stop", data: { type: "message_stop" } },
  ]);
}

function openAiChat(req: ParsedRequest, turn: ModelTurn, id: string): Response {
  const created = Math.floor(Date.now() / 1000);
  const call = turn.kind === "tool"
    ? { id: turn.id, type: "function", function: { name: turn.name, arguments: JSON.stringify(turn.args) } }
    : undefined;
  const finish = turn.kind === "tool" ? "tool_calls" : "stop";
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  const head = { id, created, model: req.model };
  if (!req.stream) {
    const message = call
      ? { role: "assistant", content: null, tool_calls: [call] }
      : { role: "assistant", content: turn.kind === "text" ? turn.text : "" };
    return Response.json({
      ...head,
      object: "chat.completion",
      choices: [{ index: 0, message, finish_reason: finish }],
      usage,
    });
  }
  const chunk = (delta: unknown, finishReason: string | null, extra: Json = {}) => ({
    data: {
      ...head,
      object: "chat.completion.chunk",
      choices: [{ index: 0, delta, finish_reason: finishReason }],
      ...extra,
    },
  });
  const body = call
    ? chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, ...call }] }, null)
    : chunk({ role: "assistant", content: turn.kind === "text" ? turn.text : "" }, null);
  const text =
    [body, chunk({}, finish, { usage })].map((e) => `data: ${JSON.stringify(e.data)}\n\n`).join("") +
    "data: [DONE]\n\n";
  return new Response(text, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
  });
}

function openAiResponses(req: ParsedRequest, turn: ModelTurn, id: string): Response {
  const grouped = turn.kind === "tool" ? req.namespaced[turn.name] : undefined;
  const item = turn.kind === "tool"
    ? {
      type: "function_call",
      id: `fc_${turn.id}`,
      call_id: turn.id,
      ...(grouped ? { namespace: grouped.namespace, name: grouped.name } : { name: turn.name }),
      arguments: JSON.stringify(turn.args),
      status: "completed",
    }
    : {
      type: "message",
      id: `msg_${id}`,
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: turn.text, annotations: [] }],
    };
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15,
  };
  const response = {
    id,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status: "completed",
    model: req.model,
    output: [item],
    usage,
  };
  if (!req.stream) return Response.json(response);
  const added = item.type === "function_call"
    ? { ...item, arguments: "", status: "in_progress" }
    : { ...item, content: [], status: "in_progress" };
  const events: { event: string; data: Json }[] = [
    { event: "response.created", data: { response: { ...response, status: "in_progress", output: [] } } },
    { event: "response.output_item.added", data: { output_index: 0, item: added } },
  ];
  if (turn.kind === "text") {
    events.push({
      event: "response.output_text.delta",
      data: { item_id: item.id, output_index: 0, content_index: 0, delta: turn.text },
    });
  } else {
    events.push({
      event: "response.function_call_arguments.delta",
      data: { item_id: item.id, output_index: 0, delta: JSON.stringify(turn.args) },
    });
  }
  events.push(
    { event: "response.output_item.done", data: { output_index: 0, item } },
    { event: "response.completed", data: { response } },
  );
  return sse(
    events.map((e, n) => ({ event: e.event, data: { type: e.event, sequence_number: n, ...e.data } })),
  );
}

function gemini(req: ParsedRequest, turn: ModelTurn): Response {
  const part = turn.kind === "tool"
    ? { functionCall: { id: turn.id, name: turn.name, args: turn.args } }
    : { text: turn.text };
  const chunk = {
    candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: req.model,
  };
  if (!req.stream) return Response.json(chunk);
  if (!req.sse) return Response.json([chunk]);
  return new Response(`data: ${JSON.stringify(chunk)}\r\n\r\n`, {
    headers: { "content-type": "text/event-stream" },
  });
}

/** The HTTP response for `turn` in the API and mode of `req`; `id` names the response. */
export function renderResponse(req: ParsedRequest, turn: ModelTurn, id: string): Response {
  switch (req.api) {
    case "anthropic":
      return anthropic(req, turn, id);
    case "openai-chat":
      return openAiChat(req, turn, id);
    case "openai-responses":
      return openAiResponses(req, turn, id);
    case "gemini":
      return gemini(req, turn);
  }
}
