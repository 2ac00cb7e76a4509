/**
 * End to end, a script that waits for the agent's answer (MCP 2026-07-28 multi round-trip requests): a
 * modern agent drives `mcp-serve` over stdio with raw JSON lines carrying `_meta` (no `initialize`), over
 * the protocol fixture (`testdata/servers/protocol_fixture.ts`), which elicits in `ask` and records every
 * tool call it gets. `execute` answers `input_required`; the retry with `inputResponses` and
 * `requestState` resumes the same run.
 */
import assert from "node:assert/strict";
import { treeCpuOver, treePids } from "../_fakes_sandbox.ts";
import {
  denoServerToml,
  makeRawWorld,
  type RawMessage,
  RawServe,
  type RawWorld,
} from "../../bench/_raw_serve.ts";

const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "modern-agent", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} }, sampling: {} },
};

interface ModernWorld {
  world: RawWorld;
  serve: RawServe;
  calls: string;
}

async function withModern(config: string, fn: (w: ModernWorld) => Promise<void>): Promise<void> {
  const callsDir = await Deno.makeTempDir({ prefix: "symposium-mrtr-" });
  const calls = `${callsDir}/calls.txt`;
  const world = await makeRawWorld(
    denoServerToml("fx", "protocol_fixture.ts", [`--calls-file=${calls}`]) +
      denoServerToml("fy", "protocol_fixture.ts", [`--calls-file=${calls}`, "--no-resources"]),
    config,
  );
  const serve = RawServe.start({ home: world.home, cwd: world.ws });
  try {
    // The handlers are in place before the first execute (whose capabilities its servers are offered).
    const listed = await serve.request("tools/list", { _meta: MODERN_META });
    assert.ok(listed.result, JSON.stringify(listed));
    await fn({ world, serve, calls });
  } finally {
    await serve.close().catch(() => undefined);
    await world.remove();
    await Deno.remove(callsDir, { recursive: true });
  }
}

/** A modern `execute` (with `extra` params such as `requestState`): its result, or its error. */
async function execute(
  serve: RawServe,
  script: string,
  extra: Record<string, unknown> = {},
): Promise<RawMessage> {
  return await serve.request("tools/call", {
    name: "execute",
    arguments: { script },
    _meta: MODERN_META,
    ...extra,
  });
}

interface InputRequired {
  resultType: "input_required";
  inputRequests: Record<string, { method: string; params: { message: string } }>;
  requestState: string;
}

function inputRequired(reply: RawMessage): InputRequired {
  const result = reply.result as InputRequired | undefined;
  assert.equal(result?.resultType, "input_required", JSON.stringify(reply));
  return result!;
}

function valueOf(reply: RawMessage): unknown {
  const result = reply.result as { structuredContent?: { result: unknown }; isError?: boolean } | undefined;
  assert.ok(result && !result.isError && result.structuredContent, JSON.stringify(reply));
  return result.structuredContent.result;
}

async function callsMade(path: string): Promise<string[]> {
  return (await Deno.readTextFile(path).catch(() => "")).split("\n").filter((l) => l !== "");
}

const ASK_SCRIPT = 'await fx.touch_note({ name: "before" }); return await fx.ask();';

Deno.test("a modern agent's retry resumes the same run: the side effect before the question happens once", async () => {
  await withModern("", async ({ serve, calls }) => {
    const first = inputRequired(await execute(serve, ASK_SCRIPT));
    const [key, ...others] = Object.keys(first.inputRequests);
    assert.deepEqual(others, []);
    assert.equal(first.inputRequests[key!]!.method, "elicitation/create");
    assert.equal(first.inputRequests[key!]!.params.message, "[fx] Pick a color");
    assert.equal(
      serve.unmatched.filter((m) => m.method !== undefined).length,
      0,
      "a request reached the agent",
    );
    const done = await execute(serve, ASK_SCRIPT, {
      requestState: first.requestState,
      inputResponses: { [key!]: { action: "accept", content: { color: "red" } } },
    });
    assert.deepEqual(valueOf(done), { action: "accept", content: { color: "red", shade: "light" } });
    assert.deepEqual(await callsMade(calls), ["touch_note", "ask"]);
    // The run is over: its state resumes nothing.
    const again = await execute(serve, ASK_SCRIPT, { requestState: first.requestState, inputResponses: {} });
    assert.equal((again.error as { code: number }).code, -32602);
  });
});

Deno.test("while one call waits for the agent, the rest of the script goes on", async () => {
  await withModern("", async ({ serve, calls }) => {
    const script = 'const first = fx.ask(); await fx.read_note({ name: "meanwhile" }); ' +
      "const second = fx.ask(); return [(await first).content.color, (await second).content.color];";
    const asked = inputRequired(await execute(serve, script));
    // The backing server sees the second question's call while the first is still unanswered.
    for (let i = 0; i < 100 && (await callsMade(calls)).length < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.deepEqual(await callsMade(calls), ["ask", "read_note", "ask"]);
    const both = inputRequired(
      await execute(serve, script, { requestState: asked.requestState, inputResponses: {} }),
    );
    const keys = Object.keys(both.inputRequests);
    assert.equal(keys.length, 2);
    const colors = ["red", "blue"];
    const done = await execute(serve, script, {
      requestState: both.requestState,
      inputResponses: Object.fromEntries(
        keys.map((k, i) => [k, { action: "accept", content: { color: colors[i] } }]),
      ),
    });
    assert.deepEqual(valueOf(done), colors);
  });
});

Deno.test("questions of both kinds reach a modern agent as inputRequests, and their answers come back", async () => {
  await withModern("", async ({ serve }) => {
    const script = 'return await Promise.all([fx.ask(), fx.summarize({ text: "long text" })]);';
    let reply = await execute(serve, script);
    const methods = new Set<string>();
    for (
      let round = 0;
      round < 3 && (reply.result as InputRequired)?.resultType === "input_required";
      round++
    ) {
      const asked = inputRequired(reply);
      const inputResponses: Record<string, unknown> = {};
      for (const [key, request] of Object.entries(asked.inputRequests)) {
        methods.add(request.method);
        inputResponses[key] = request.method === "elicitation/create"
          ? { action: "accept", content: { color: "green" } }
          : { role: "assistant", model: "m", content: { type: "text", text: "short" } };
      }
      reply = await execute(serve, script, { requestState: asked.requestState, inputResponses });
    }
    assert.deepEqual([...methods].sort(), ["elicitation/create", "sampling/createMessage"]);
    const [answer, sampled] = valueOf(reply) as [{ content: unknown }, { content: unknown }];
    assert.deepEqual(answer.content, { color: "green", shade: "light" });
    assert.deepEqual(sampled.content, { type: "text", text: "short" });
    assert.equal(
      serve.unmatched.filter((m) => m.method !== undefined).length,
      0,
      "a request reached the agent",
    );
  });
});

Deno.test("each request of a waiting run gets the progress made while it is the one waiting", async () => {
  await withModern("", async ({ serve }) => {
    // Each request lasts past the throttle's first 100 ms (PROGRESS_INTERVAL_MS), so it hears its report.
    const script = 'await fx.read_note({ name: "n" }); await new Promise((r) => setTimeout(r, 300)); ' +
      "const answer = await fx.ask(); await new Promise((r) => setTimeout(r, 300)); return answer;";
    const withToken = (token: string) => ({ _meta: { ...MODERN_META, progressToken: token } });
    const first = inputRequired(await execute(serve, script, withToken("first")));
    const key = Object.keys(first.inputRequests)[0]!;
    const done = await execute(serve, script, {
      ...withToken("second"),
      requestState: first.requestState,
      inputResponses: { [key]: { action: "decline" } },
    });
    assert.deepEqual(valueOf(done), { action: "decline" });
    const messages = (token: string) =>
      serve.notifications
        .filter((n) => (n.params as { progressToken?: string } | undefined)?.progressToken === token)
        .map((n) => (n.params as { message: string }).message);
    assert.deepEqual(messages("first"), ["fx.read_note done (1 call completed)"]);
    assert.deepEqual(messages("second"), ["fx.ask done (2 calls completed)"]);
  });
});

Deno.test("a tampered, foreign-request or malformed requestState is refused, saying why", async () => {
  await withModern("", async ({ serve }) => {
    const first = inputRequired(await execute(serve, ASK_SCRIPT));
    const state = first.requestState;
    const flipped = `${state.slice(0, 5)}${state[5] === "A" ? "B" : "A"}${state.slice(6)}`;
    const tampered = await execute(serve, ASK_SCRIPT, { requestState: flipped, inputResponses: {} });
    assert.equal((tampered.error as { code: number }).code, -32602);
    assert.match(
      (tampered.error as { message: string }).message,
      /not issued by this server process or was altered/,
    );
    const other = await execute(serve, "return await fx.ask()", { requestState: state, inputResponses: {} });
    assert.match((other.error as { message: string }).message, /issued for another request/);
    const noState = await execute(serve, ASK_SCRIPT, { inputResponses: {} });
    assert.match((noState.error as { message: string }).message, /inputResponses came without requestState/);
    // The genuine state still resumes the run.
    const key = Object.keys(first.inputRequests)[0]!;
    const done = await execute(serve, ASK_SCRIPT, {
      requestState: state,
      inputResponses: { [key]: { action: "decline" } },
    });
    assert.deepEqual(valueOf(done), { action: "decline" });
  });
});

Deno.test("two runs wait for the agent at once; each retry resumes its own run", async () => {
  await withModern("", async ({ serve, calls }) => {
    // Two servers: a stdio server's question does not say which of two calls to it it belongs to.
    const script = (server: string) =>
      `const a = await ${server}.ask(); return { server: "${server}", color: a.content?.color };`;
    const [one, two] = await Promise.all([execute(serve, script("fx")), execute(serve, script("fy"))]);
    const [a, b] = [inputRequired(one), inputRequired(two)];
    assert.notEqual(a.requestState, b.requestState);
    assert.deepEqual([Object.keys(a.inputRequests), Object.keys(b.inputRequests)], [["fx/1"], ["fy/1"]]);
    const answer = (state: InputRequired, color: string) =>
      Object.fromEntries(
        Object.keys(state.inputRequests).map((k) => [k, { action: "accept", content: { color } }]),
      );
    const doneTwo = await execute(serve, script("fy"), {
      requestState: b.requestState,
      inputResponses: answer(b, "blue"),
    });
    const doneOne = await execute(serve, script("fx"), {
      requestState: a.requestState,
      inputResponses: answer(a, "green"),
    });
    assert.deepEqual([valueOf(doneOne), valueOf(doneTwo)], [{ server: "fx", color: "green" }, {
      server: "fy",
      color: "blue",
    }]);
    assert.deepEqual(await callsMade(calls), ["ask", "ask"]);
  });
});

Deno.test("a run whose question is never answered ends at its deadline; its state is then expired", async () => {
  const config = "script-timeout-secs = 3\ntool-call-timeout-secs = 2\nmax-concurrent-scripts = 1";
  await withModern(config, async ({ serve }) => {
    // The script computes on a timer while its call waits, and after the call gave up (the call's own
    // timeout is below the script's) it waits on: the deadline ends it all.
    const script = "const spin = () => { for (let i = 0; i < 100000; i++); setTimeout(spin, 5); }; spin(); " +
      "try { return await fx.ask(); } catch { await new Promise(() => {}); }";
    const first = inputRequired(await execute(serve, script));
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    const late = await execute(serve, script, { requestState: first.requestState, inputResponses: {} });
    assert.equal((late.error as { code: number }).code, -32602);
    assert.match((late.error as { message: string }).message, /expired|ended/);
    // Nothing of the run computes any more (mcp-serve, the backing server and the sandbox process idle).
    const { existingMs } = await treeCpuOver(serve.pid, 2_000, await treePids(serve.pid));
    assert.ok(existingMs <= 400, `${existingMs} ms of CPU after the deadline`);
    // The one sandbox slot is free again: the waiting run holds nothing.
    assert.deepEqual(valueOf(await execute(serve, "return 2")), 2);
  });
});

Deno.test("confirm-tools asks a modern agent through input_required, and the call is made once accepted", async () => {
  await withModern('confirm-tools = "writes"', async ({ serve, calls }) => {
    const script = 'return await fx.deploy({ name: "prod" });';
    const first = inputRequired(await execute(serve, script));
    const [key] = Object.keys(first.inputRequests);
    assert.match(key!, /^symposium\//);
    assert.match(
      first.inputRequests[key!]!.params.message,
      /^\u27E6symposium\u27E7 A script wants to call deploy/,
    );
    assert.deepEqual(await callsMade(calls), []);
    const done = await execute(serve, script, {
      requestState: first.requestState,
      inputResponses: { [key!]: { action: "accept", content: { remember: false } } },
    });
    assert.deepEqual(valueOf(done), { tool: "deploy", name: "prod" });
    assert.deepEqual(await callsMade(calls), ["deploy"]);
  });
});

Deno.test("a modern agent and a modern-only backing server: its input_required reaches the agent, roots never do", async () => {
  const dir = await Deno.makeTempDir({ prefix: "symposium-mrtr-modern-" });
  const wire = `${dir}/wire.jsonl`;
  const world = await makeRawWorld(
    denoServerToml("mo", "modern_server.ts", ["--stdio=modern", `--wire=${wire}`]),
    "",
  );
  const serve = RawServe.start({ home: world.home, cwd: world.ws });
  try {
    const script = "await mo.echo({ text: 'before' }); return await mo.ask({ question: 'colour?' });";
    const first = inputRequired(await execute(serve, script));
    const keys = Object.keys(first.inputRequests);
    assert.equal(keys.length, 1, JSON.stringify(first));
    const asked = first.inputRequests[keys[0]!]!;
    assert.equal(asked.method, "elicitation/create");
    assert.match(asked.params.message, /^\[mo\] .*colour\?/);
    const done = await execute(serve, script, {
      requestState: first.requestState,
      inputResponses: { [keys[0]!]: { action: "accept", content: { value: "green" } } },
    });
    const wsUri = `file://${encodeURI(await Deno.realPath(world.ws))}`;
    assert.equal(valueOf(done), `green @ ${wsUri}`);
    assert.equal(
      serve.unmatched.filter((m) => m.method !== undefined).length,
      0,
      "a request reached the agent",
    );
    const received = (await Deno.readTextFile(wire)).trim().split("\n").map((l) => JSON.parse(l));
    const methods = received.map((m) => m.method);
    assert.ok(!methods.includes("initialize"), methods.join(", "));
    // The run was resumed, not re-run: one echo; `ask` retried by us with the server's own state.
    const calls = received.filter((m) => m.method === "tools/call").map((m) => m.params.name);
    assert.equal(calls.filter((n: string) => n === "echo").length, 1, calls.join(", "));
    assert.ok(calls.filter((n: string) => n === "ask").length >= 3, calls.join(", "));
    const states = received.filter((m) => m.method === "tools/call" && m.params.name === "ask")
      .map((m) => m.params.requestState).filter((s) => s !== undefined);
    assert.ok(
      states.length >= 2 && states.every((s: string) => s.startsWith("state-")),
      JSON.stringify(states),
    );
  } finally {
    await serve.close().catch(() => undefined);
    await world.remove();
    await Deno.remove(dir, { recursive: true });
  }
});
