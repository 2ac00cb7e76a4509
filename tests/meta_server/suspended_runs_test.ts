import assert from "node:assert/strict";
import type { CallToolResult } from "@modelcontextprotocol/server";
import {
  type InputRequiredAnswer,
  MAX_INPUT_RESPONSES_BYTES,
  MAX_INPUT_ROUNDS_PER_RUN,
  type RunHooks,
  SuspendedRuns,
} from "../../lib/meta_server/suspended_runs.ts";
import { requestDigest, RequestStateCodec } from "../../lib/meta_server/_request_state.ts";

const QUESTION = {
  method: "elicitation/create" as const,
  params: { mode: "form", message: "[fx] Pick", requestedSchema: { type: "object", properties: {} } },
};
const ACCEPT = { action: "accept", content: {} };

const text = (value: unknown): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value) }],
});

/** A run that asks once through the server `fx` (one call in flight) and returns the answer's action. */
function askingOnce(started: { count: number }) {
  return async (hooks: RunHooks): Promise<CallToolResult> => {
    started.count++;
    const ended = hooks.callStarted("fx");
    try {
      const answer = await hooks.ask("fx", QUESTION, { signal: hooks.signal }) as { action: string };
      return text(answer.action);
    } catch (error) {
      return { ...text((error as Error).message), isError: true };
    } finally {
      ended();
    }
  };
}

function request(extra: Record<string, unknown> = {}) {
  return { tool: "execute", script: "s", timeoutMs: 60_000, signal: new AbortController().signal, ...extra };
}

function asInputRequired(answer: unknown): InputRequiredAnswer {
  assert.equal((answer as InputRequiredAnswer).resultType, "input_required", JSON.stringify(answer));
  return answer as InputRequiredAnswer;
}

Deno.test("SuspendedRuns resumes the same run with the answers; the script is started once", async () => {
  const runs = new SuspendedRuns({ gatherMs: 0 });
  const started = { count: 0 };
  const first = asInputRequired(await runs.answer(request(), askingOnce(started)));
  assert.deepEqual(Object.keys(first.inputRequests), ["fx/1"]);
  assert.equal(runs.callingRun("fx") !== undefined, true, "the waiting call is still in flight");
  const done = await runs.answer(
    request({ requestState: first.requestState, inputResponses: { "fx/1": ACCEPT, unknown: ACCEPT } }),
    askingOnce(started),
  );
  assert.deepEqual(done, text("accept"));
  assert.equal(started.count, 1);
  assert.equal(runs.size, 0);
});

Deno.test("SuspendedRuns asks again for a question the retry left unanswered", async () => {
  const runs = new SuspendedRuns({ gatherMs: 0 });
  const started = { count: 0 };
  const first = asInputRequired(await runs.answer(request(), askingOnce(started)));
  const again = asInputRequired(
    await runs.answer(request({ requestState: first.requestState, inputResponses: {} }), askingOnce(started)),
  );
  assert.deepEqual(again.inputRequests, first.inputRequests);
  const done = await runs.answer(
    request({ requestState: again.requestState, inputResponses: { "fx/1": { action: "decline" } } }),
    askingOnce(started),
  );
  assert.deepEqual(done, text("decline"));
});

Deno.test("SuspendedRuns refuses a tampered, foreign, expired or misshapen retry with -32602", async () => {
  const codec = new RequestStateCodec();
  const runs = new SuspendedRuns({ gatherMs: 0, codec });
  const other = new SuspendedRuns({ gatherMs: 0, codec });
  const started = { count: 0 };
  const first = asInputRequired(await runs.answer(request(), askingOnce(started)));
  const refused = async (on: SuspendedRuns, extra: Record<string, unknown>, pattern: RegExp) => {
    await assert.rejects(
      on.answer(request(extra), askingOnce(started)),
      (error: Error & { code: number }) => {
        assert.equal(error.code, -32602);
        assert.match(error.message, pattern);
        return true;
      },
    );
  };
  const [payload, mac] = first.requestState.split(".");
  const forged = JSON.parse(atob(payload!.replace(/-/g, "+").replace(/_/g, "/")));
  forged.e += 3_600_000;
  const forgedPayload = btoa(JSON.stringify(forged)).replace(/\+/g, "-").replace(/\//g, "_").replace(
    /=+$/,
    "",
  );
  await refused(
    runs,
    { requestState: `${forgedPayload}.${mac}` },
    /not issued by this server process or was altered/,
  );
  await refused(runs, { requestState: "not a state" }, /not issued by this server process or was altered/);
  await refused(runs, { requestState: 42 }, /not one this server issued/);
  await refused(other, { requestState: first.requestState }, /another session/);
  await refused(runs, { requestState: first.requestState, script: "t" }, /another request/);
  await refused(runs, { inputResponses: {} }, /without requestState/);
  await refused(runs, { requestState: first.requestState, inputResponses: [] }, /must be an object/);
  await refused(
    runs,
    { requestState: first.requestState, inputResponses: { "fx/1": { action: "maybe" } } },
    /not a result of elicitation\/create/,
  );
  await refused(
    runs,
    { requestState: first.requestState, inputResponses: { big: "x".repeat(MAX_INPUT_RESPONSES_BYTES) } },
    /MAX_INPUT_RESPONSES_BYTES/,
  );
  // None of the refusals touched the run: the genuine state still resumes it.
  const done = await runs.answer(
    request({ requestState: first.requestState, inputResponses: { "fx/1": ACCEPT } }),
    askingOnce(started),
  );
  assert.deepEqual(done, text("accept"));
  // The same state again, once the run answered, says it ended and not that a deadline passed.
  await refused(
    runs,
    { requestState: first.requestState, inputResponses: { "fx/1": ACCEPT } },
    /already answered/,
  );
  // A state past its expiry (the script's deadline) is refused as expired.
  const state = await codec.issue({
    session: runs.session,
    run: "r",
    request: await requestDigest("execute", "s"),
    expiresAtMs: Date.now() - 1,
  });
  await refused(runs, { requestState: state }, /expired/);
  // A state whose run has ended is refused.
  const ended = await codec.issue({
    session: runs.session,
    run: "gone",
    request: await requestDigest("execute", "s"),
    expiresAtMs: Date.now() + 60_000,
  });
  await refused(runs, { requestState: ended }, /has ended/);
});

Deno.test("SuspendedRuns: a run past MAX_SUSPENDED_RUNS_PER_SESSION has its question fail and goes on", async () => {
  const runs = new SuspendedRuns({ gatherMs: 0, maxSuspended: 1 });
  const started = { count: 0 };
  const first = asInputRequired(await runs.answer(request({ script: "a" }), askingOnce(started)));
  const second = await runs.answer(request({ script: "b" }), askingOnce(started));
  assert.equal((second as CallToolResult).isError, true);
  assert.match(JSON.stringify(second), /already wait for the agent \(MAX_SUSPENDED_RUNS_PER_SESSION\)/);
  const done = await runs.answer(
    request({ script: "a", requestState: first.requestState, inputResponses: { "fx/1": ACCEPT } }),
    askingOnce(started),
  );
  assert.deepEqual(done, text("accept"));
});

Deno.test("SuspendedRuns: past MAX_INPUT_ROUNDS_PER_RUN the run's question fails and the run ends", async () => {
  const runs = new SuspendedRuns({ gatherMs: 0 });
  const started = { count: 0 };
  let answer = await runs.answer(request(), askingOnce(started));
  let rounds = 0;
  while ((answer as InputRequiredAnswer).resultType === "input_required") {
    rounds++;
    const state = (answer as InputRequiredAnswer).requestState;
    answer = await runs.answer(request({ requestState: state, inputResponses: {} }), askingOnce(started));
  }
  assert.equal(rounds, MAX_INPUT_ROUNDS_PER_RUN);
  assert.match(JSON.stringify(answer), /more than 16 times \(MAX_INPUT_ROUNDS_PER_RUN\)/);
});

Deno.test("SuspendedRuns: a question no run calls for has no run; cancelling the request cancels the run", async () => {
  const runs = new SuspendedRuns({ gatherMs: 0 });
  assert.equal(runs.callingRun("fx"), undefined);
  const controller = new AbortController();
  const started = { count: 0 };
  const answering = runs.answer(request({ signal: controller.signal }), async (hooks) => {
    started.count++;
    const ended = hooks.callStarted("fx");
    await new Promise((resolve) => hooks.signal.addEventListener("abort", resolve));
    ended();
    return text("cancelled");
  });
  controller.abort();
  assert.deepEqual(await answering, text("cancelled"));
  assert.equal(runs.callingRun("fx"), undefined);
});

Deno.test("SuspendedRuns lets one retry at a time resume a run", async () => {
  const runs = new SuspendedRuns({ gatherMs: 0 });
  const started = { count: 0 };
  const first = asInputRequired(await runs.answer(request(), askingOnce(started)));
  const retry = () =>
    runs.answer(request({ requestState: first.requestState, inputResponses: {} }), askingOnce(started));
  const [a, b] = await Promise.allSettled([retry(), retry()]);
  const refused = [a, b].filter((r) => r.status === "rejected") as PromiseRejectedResult[];
  assert.equal(refused.length, 1);
  assert.match(String(refused[0]!.reason), /another request is resuming this run/);
  const resumed = [a, b].find((r) => r.status === "fulfilled") as PromiseFulfilledResult<unknown>;
  const again = asInputRequired(resumed.value);
  const done = await runs.answer(
    request({ requestState: again.requestState, inputResponses: { "fx/1": ACCEPT } }),
    askingOnce(started),
  );
  assert.deepEqual(done, text("accept"));
});

Deno.test("SuspendedRuns matches a server's questions to the calls to it in the order the calls were sent", async () => {
  const runs = new SuspendedRuns({ gatherMs: 0 });
  const calls: Record<string, () => void> = {};
  const hooksOf: Record<string, RunHooks> = {};
  const open = (name: string, delayMs: number) => (hooks: RunHooks): Promise<CallToolResult> => {
    hooksOf[name] = hooks;
    setTimeout(() => calls[name] = hooks.callStarted("fx"), delayMs);
    return new Promise<CallToolResult>(() => {}); // never ends by itself
  };
  const signal = new AbortController();
  // Run one starts first, but its call to fx is sent after run two's.
  void runs.answer(request({ script: "one", signal: signal.signal }), open("one", 20)).catch(() => {});
  void runs.answer(request({ script: "two", signal: signal.signal }), open("two", 0)).catch(() => {});
  await new Promise((resolve) => setTimeout(resolve, 50));
  // The first question is taken to be for the first call sent (run two's), the next for run one's.
  const first = runs.callingRun("fx")!;
  assert.equal(first, hooksOf.two);
  void first.ask("fx", QUESTION, { signal: signal.signal }).catch(() => {});
  assert.equal(runs.callingRun("fx"), hooksOf.one);
  calls.two!();
  assert.equal(runs.callingRun("fx"), hooksOf.one);
  calls.one!();
  assert.equal(runs.callingRun("fx"), undefined);
  runs.close();
  signal.abort();
});
