import assert from "node:assert/strict";
import {
  Client,
  InMemoryTransport,
  ProtocolError,
  SdkError,
  SdkErrorCode,
} from "@modelcontextprotocol/client";
import type { JSONRPCMessage, JSONRPCRequest } from "@modelcontextprotocol/client";
import { LeanClient } from "../../lib/backends/_lean_client.ts";
import { CALL_RESULT_ENVELOPE } from "../../lib/backends/_call_result.ts";

/** A scripted server on the other end of an in-memory pair: answers `initialize`, hands on the rest. */
async function rawPair(onRequest: (request: JSONRPCRequest, send: (m: JSONRPCMessage) => void) => void) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const received: JSONRPCMessage[] = [];
  const send = (m: JSONRPCMessage) => void serverSide.send(m).catch(() => {}); // after close: dropped
  serverSide.onmessage = (message) => {
    received.push(message);
    const m = message as JSONRPCRequest;
    if (m.method === "initialize") {
      send({
        jsonrpc: "2.0",
        id: m.id,
        result: {
          protocolVersion: (m.params as { protocolVersion: string }).protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "raw", version: "1" },
        },
      });
    } else if ("id" in m && typeof m.method === "string") onRequest(m, send);
  };
  await serverSide.start();
  const client = new LeanClient({ name: "t", version: "1" });
  const errors: Error[] = [];
  client.onerror = (e) => errors.push(e);
  await client.connect(clientSide);
  return { client, received, errors, send, close: () => client.close() };
}

const call = (client: Client, options: Record<string, unknown>) =>
  client.request(
    { method: "tools/call", params: { name: "t", arguments: {} } },
    CALL_RESULT_ENVELOPE,
    options,
  );

Deno.test("the SDK internals LeanClient relies on are still there (SDK upgrade check)", () => {
  const protocol = Object.getPrototypeOf(Client.prototype) as Record<string, unknown>;
  for (const method of ["_setupTimeout", "_resetTimeout", "_cleanupTimeout", "_onresponse", "_onclose"]) {
    assert.equal(typeof protocol[method], "function", `Protocol.prototype.${method}`);
  }
  const client = new Client({ name: "t", version: "1" }) as unknown as Record<string, unknown>;
  for (const field of ["_timeoutInfo", "_responseHandlers", "_progressHandlers"]) {
    assert.ok(client[field] instanceof Map, `Protocol#${field} is a Map`);
  }
  // The request funnel arms its timeout through _setupTimeout and answers through _responseHandlers.
  const funnel = String((protocol as { _requestWithSchemaViaCodec: () => void })._requestWithSchemaViaCodec);
  assert.match(funnel, /this\._setupTimeout\(messageId, timeout, options\?\.maxTotalTimeout, timeoutHandler/);
  assert.match(funnel, /this\._responseHandlers\.set\(messageId/);
  assert.match(
    String(protocol._onprogress),
    /this\._timeoutInfo\.get\(messageId\)[\s\S]*this\._resetTimeout/,
  );
});

Deno.test("LeanClient: sequential requests share one timer; answers reach the caller", async () => {
  const pair = await rawPair((request, send) =>
    send({
      jsonrpc: "2.0",
      id: request.id,
      result: { content: [{ type: "text", text: String(request.id) }] },
    })
  );
  const armedAtConnect = pair.client.timersArmed; // initialize's (60 s default)
  for (let i = 0; i < 50; i++) {
    const result = await call(pair.client, { timeout: 10_000 });
    assert.equal((result.content[0] as { text: string }).text.length > 0, true);
  }
  // One re-arm for the first 10 s deadline (earlier than initialize's); the SDK's own path arms 50 timers.
  assert.equal(pair.client.timersArmed - armedAtConnect, 1);
  const internals = pair.client as unknown as { _timeoutInfo: Map<number, unknown> };
  assert.equal(internals._timeoutInfo.size, 0);
  await pair.close();
});

Deno.test("LeanClient: a request times out with the SDK's error and the server hears notifications/cancelled", async () => {
  const pair = await rawPair(() => {});
  const started = performance.now();
  await assert.rejects(call(pair.client, { timeout: 120 }), (e: unknown) => {
    assert.ok(e instanceof SdkError);
    assert.equal(e.code, SdkErrorCode.RequestTimeout);
    assert.equal(e.message, "Request timed out");
    assert.deepEqual(e.data, { timeout: 120 });
    return true;
  });
  assert.ok(performance.now() - started >= 110, "not before its deadline");
  const cancelled = pair.received.find((m) =>
    (m as { method?: string }).method === "notifications/cancelled"
  );
  assert.ok(cancelled, "notifications/cancelled sent");
  await pair.close();
});

Deno.test("LeanClient: a shorter timeout after a longer one still fires at its own deadline", async () => {
  const pair = await rawPair(() => {});
  const long = call(pair.client, { timeout: 5_000 });
  long.catch(() => {});
  const started = performance.now();
  await assert.rejects(call(pair.client, { timeout: 100 }), { message: "Request timed out" });
  assert.ok(performance.now() - started < 2_000, "the 100 ms request did not wait for the 5 s timer");
  await pair.close();
  await assert.rejects(
    long,
    (e: unknown) => e instanceof SdkError && e.code === SdkErrorCode.ConnectionClosed,
  );
});

Deno.test("LeanClient: progress pushes the deadline back, up to maxTotalTimeout", async () => {
  const ticks: ReturnType<typeof setInterval>[] = [];
  const progress = (request: JSONRPCRequest, send: (m: JSONRPCMessage) => void, times: number) => {
    const token = (request.params as { _meta: { progressToken: number } })._meta.progressToken;
    let i = 0;
    const tick = setInterval(() => {
      if (++i <= times) {
        send({
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken: token, progress: i },
        });
      } else {
        clearInterval(tick);
        send({ jsonrpc: "2.0", id: request.id, result: { content: [] } });
      }
    }, 40);
    ticks.push(tick);
  };
  const pair = await rawPair((request, send) => progress(request, send, 8));
  const seen: number[] = [];
  const result = await call(pair.client, {
    timeout: 100,
    resetTimeoutOnProgress: true,
    onprogress: (p: { progress: number }) => seen.push(p.progress),
  });
  assert.deepEqual(result.content, []);
  assert.deepEqual(seen, [1, 2, 3, 4, 5, 6, 7, 8]); // 360 ms in all, with a 100 ms timeout
  await assert.rejects(
    call(pair.client, {
      timeout: 100,
      resetTimeoutOnProgress: true,
      maxTotalTimeout: 150,
      onprogress: () => {},
    }),
    { message: "Maximum total timeout exceeded" },
  );
  for (const tick of ticks) clearInterval(tick); // the second tool would go on reporting
  await pair.close();
});

Deno.test("LeanClient: error answers, off-shape answers and unknown ids take the SDK's own path", async () => {
  const pair = await rawPair((request, send) => {
    const name = (request.params as { name: string }).name;
    if (name === "err") send({ jsonrpc: "2.0", id: request.id, error: { code: -32001, message: "nope" } });
    else send({ jsonrpc: "2.0", id: request.id, result: { content: "not a list" } });
  });
  const named = (name: string) =>
    pair.client.request({ method: "tools/call", params: { name } }, CALL_RESULT_ENVELOPE, { timeout: 5_000 });
  await assert.rejects(
    named("err"),
    (e: unknown) => e instanceof ProtocolError && e.message.includes("nope"),
  );
  await assert.rejects(named("bad"), /tools\/call result content is not a list/);
  pair.send({ jsonrpc: "2.0", id: 999, result: {} });
  await new Promise((r) => setTimeout(r, 10));
  assert.match(String(pair.errors.at(-1)), /Received a response for an unknown message ID/);
  await pair.close();
});

Deno.test("LeanClient: closing settles the requests in flight and stops the shared timer", async () => {
  const pair = await rawPair(() => {});
  const pending = call(pair.client, { timeout: 60_000 });
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(pair.client.timerArmed, true);
  await pair.close();
  assert.equal(pair.client.timerArmed, false, "the 60 s timer does not outlive the connection");
  await assert.rejects(
    pending,
    (e: unknown) => e instanceof SdkError && e.code === SdkErrorCode.ConnectionClosed,
  );
});

Deno.test("LeanClient: the shared timer does not keep the process alive once no request waits", async () => {
  // A process that answered one request and never closes its connection exits at once, not when the
  // request's 60 s deadline would have passed.
  const leanClient = new URL("../../lib/backends/_lean_client.ts", import.meta.url).href;
  const callResult = new URL("../../lib/backends/_call_result.ts", import.meta.url).href;
  const code = `
    import { InMemoryTransport } from "@modelcontextprotocol/client";
    import { LeanClient } from ${JSON.stringify(leanClient)};
    import { CALL_RESULT_ENVELOPE } from ${JSON.stringify(callResult)};
    const [c, s] = InMemoryTransport.createLinkedPair();
    s.onmessage = (m) => {
      if (m.method === "initialize") {
        s.send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: {},
          serverInfo: { name: "raw", version: "1" } } });
      } else if (m.id !== undefined) s.send({ jsonrpc: "2.0", id: m.id, result: { content: [] } });
    };
    await s.start();
    const client = new LeanClient({ name: "t", version: "1" });
    await client.connect(c);
    await client.request({ method: "tools/call", params: { name: "t" } }, CALL_RESULT_ENVELOPE, { timeout: 60000 });
    if (!client.timerArmed) throw new Error("expected the shared timer to stay armed");
    console.log("answered");
  `;
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--config", new URL("../../deno.json", import.meta.url).pathname, code],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const killer = setTimeout(() => child.kill(), 30_000);
  const out = await child.output();
  clearTimeout(killer);
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  assert.match(new TextDecoder().decode(out.stdout), /answered/);
  assert.ok(performance.now() - started < 25_000, "exited long before the 60 s deadline");
});
