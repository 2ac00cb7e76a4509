import assert from "node:assert/strict";
import {
  MAX_BEFORE_SEND_ROUNDS,
  type ResolvedCall,
  settleBeforeSend,
} from "../../lib/catalog/_before_send.ts";
import type { ServerSpec } from "../../lib/plugins/server_spec.ts";
import type { BackendConnection, Tool } from "../../lib/backends/connection.ts";
import { BackendError } from "../../lib/backends/connection.ts";

const spec = { name: "fx" } as ServerSpec;
const connection = {} as BackendConnection;
const writer = (annotations: Tool["annotations"]): ResolvedCall => ({
  connection,
  definition: { name: "write", inputSchema: { type: "object" }, ...(annotations ? { annotations } : {}) },
  toolNames: ["write"],
});

Deno.test("settleBeforeSend() checks again when the listing changed during the check, and sends what it checked", async () => {
  // The listing the check saw said read-only; while the user was asked it became destructive.
  const listings = [writer({ destructiveHint: true }), writer({ destructiveHint: true })];
  const seen: unknown[] = [];
  const sent = await settleBeforeSend(
    spec,
    writer({ readOnlyHint: true }),
    (_spec, definition) => {
      seen.push(definition.annotations);
      return Promise.resolve();
    },
    () => Promise.resolve(listings.shift()!),
  );
  assert.deepEqual(seen, [{ readOnlyHint: true }, { destructiveHint: true }]);
  assert.deepEqual(sent.definition.annotations, { destructiveHint: true });
});

Deno.test("settleBeforeSend() gives up on a tool that keeps changing while it is checked", async () => {
  let n = 0;
  await assert.rejects(
    settleBeforeSend(
      spec,
      writer({}),
      () => Promise.resolve(),
      () => Promise.resolve(writer({ title: `v${n++}` })),
    ),
    (e: unknown) =>
      e instanceof BackendError && e.code === "REQUEST_FAILED" && /changed 3 times/.test(e.message),
  );
  assert.equal(n, MAX_BEFORE_SEND_ROUNDS);
});

Deno.test("settleBeforeSend() resolves again when the listing it got was overtaken by a change, and checks what is current", async () => {
  // The re-resolve got a listing whose request predates a tools/list_changed (stale: read-only); the
  // current one says destructive, so that is what is checked and sent.
  const stale = { ...writer({ readOnlyHint: true }), isCurrent: () => false };
  const listings = [stale, writer({ destructiveHint: true }), writer({ destructiveHint: true })];
  const seen: unknown[] = [];
  const sent = await settleBeforeSend(
    spec,
    writer({ readOnlyHint: true }),
    (_spec, definition) => {
      seen.push(definition.annotations);
      return Promise.resolve();
    },
    () => Promise.resolve(listings.shift()!),
  );
  assert.deepEqual(seen, [{ readOnlyHint: true }, { destructiveHint: true }]);
  assert.deepEqual(sent.definition.annotations, { destructiveHint: true });
});
