import assert from "node:assert/strict";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import { dispatchCheckedMessages } from "../../lib/jsonrpc/mod.ts";

/** A protocol stand-in that records which of its handlers got each message, and a transport whose handler is the "SDK closure". */
function fixture(checks: boolean) {
  const seen: string[] = [];
  const protocol = {
    _onrequest: (m: JSONRPCMessage) => seen.push(`request ${JSON.stringify(m)}`),
    _onnotification: (m: JSONRPCMessage) => seen.push(`notification ${JSON.stringify(m)}`),
    _onresponse: (m: JSONRPCMessage) => seen.push(`response ${JSON.stringify(m)}`),
  };
  const sdk = (m: JSONRPCMessage) => void seen.push(`sdk ${JSON.stringify(m)}`);
  const transport = {
    start: () => Promise.resolve(),
    send: () => Promise.resolve(),
    close: () => Promise.resolve(),
    onmessage: sdk,
    ...(checks ? { checksMessages: true as const } : {}),
  } as Transport;
  return { seen, protocol, transport, sdk };
}

Deno.test("dispatchCheckedMessages() leaves a transport that does not check its messages on the SDK's path", () => {
  const { seen, protocol, transport, sdk } = fixture(false);
  assert.equal(dispatchCheckedMessages(protocol, transport), false);
  assert.equal(transport.onmessage, sdk);
  transport.onmessage!({ jsonrpc: "2.0", id: 1, method: "ping" } as JSONRPCMessage);
  assert.deepEqual(seen, ['sdk {"jsonrpc":"2.0","id":1,"method":"ping"}']);
});

Deno.test("dispatchCheckedMessages() sends each kind of a checked transport's messages to its own handler", () => {
  const { seen, protocol, transport } = fixture(true);
  assert.equal(dispatchCheckedMessages(protocol, transport), true);
  const send = (m: unknown) => transport.onmessage!(m as JSONRPCMessage);
  send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x" } });
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  send({ jsonrpc: "2.0", id: 2, result: {} });
  send({ jsonrpc: "2.0", id: 3, error: { code: -1, message: "no" } });
  send({ jsonrpc: "2.0", id: 4 });
  assert.deepEqual(seen, [
    'request {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}',
    'notification {"jsonrpc":"2.0","method":"notifications/initialized"}',
    'response {"jsonrpc":"2.0","id":2,"result":{}}',
    'response {"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}',
    'sdk {"jsonrpc":"2.0","id":4}',
  ]);
});
