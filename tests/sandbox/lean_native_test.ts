// The prelude's `native` host function on the lean path (`_lean_native.ts`): its calls skip quickjs-emscripten's
// generic C → JS trampoline (generators and a scope per call, ~40 % of the guest's CPU per tool call), and keep
// its contract: the value returned, errors thrown in QuickJS, argument handles dead after the call, other
// host functions of the context on the generic path.
import assert from "node:assert/strict";
import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";
import { newLeanFunction } from "../../lib/sandbox/guest/_lean_native.ts";
import { testEngine } from "../_fakes_sandbox.ts";

type Trampoline = (...args: number[]) => number;

/** A fresh context whose generic trampoline counts the calls it serves. */
async function countingContext(): Promise<{ ctx: QuickJSContext; genericCalls: () => number }> {
  const { module } = await testEngine();
  const ctx = module.module.newRuntime().newContext();
  const callbacks = (ctx as unknown as { cToHostCallbacks: { callFunction: Trampoline } }).cToHostCallbacks;
  const generic = callbacks.callFunction;
  let calls = 0;
  callbacks.callFunction = (...args) => {
    calls++;
    return generic(...args);
  };
  return { ctx, genericCalls: () => calls };
}

function evalNumber(ctx: QuickJSContext, code: string): number {
  const result = ctx.evalCode(code);
  if (result.error) {
    const error = ctx.dump(result.error);
    result.error.dispose();
    throw new Error(JSON.stringify(error));
  }
  const value = ctx.getNumber(result.value);
  result.value.dispose();
  return value;
}

function free(ctx: QuickJSContext): void {
  const rt = ctx.runtime;
  ctx.dispose();
  rt.dispose();
}

Deno.test("the lean function's calls skip the generic trampoline; other host functions still take it", async () => {
  const { ctx, genericCalls } = await countingContext();
  const lean = newLeanFunction(ctx, "lean", (a, b) => ctx.newNumber(ctx.getNumber(a!) + ctx.getNumber(b!)));
  const plain = ctx.newFunction("plain", (a) => ctx.newNumber(ctx.getNumber(a!) * 10));
  ctx.setProp(ctx.global, "lean", lean);
  ctx.setProp(ctx.global, "plain", plain);
  lean.dispose();
  plain.dispose();
  assert.equal(evalNumber(ctx, "lean(1, 2) + lean(3, 4) + lean(5, 6)"), 21);
  assert.equal(genericCalls(), 0, "the lean function went through the generic trampoline");
  assert.equal(evalNumber(ctx, "plain(4) + lean(1, 1)"), 42);
  assert.equal(genericCalls(), 1);
  free(ctx);
});

Deno.test("the lean function throws in QuickJS what it throws or answers as { error }", async () => {
  const { ctx } = await countingContext();
  const lean = newLeanFunction(ctx, "lean", (mode) => {
    const how = ctx.getString(mode!);
    if (how === "throw") throw new RangeError("too many");
    if (how === "error") return { error: ctx.newError({ name: "TypeError", message: "refused" }) };
    return undefined;
  });
  ctx.setProp(ctx.global, "lean", lean);
  lean.dispose();
  const caught = (mode: string) => {
    const result = ctx.evalCode(
      `(() => { try { lean(${
        JSON.stringify(mode)
      }); return "none"; } catch (e) { return e.name + ": " + e.message; } })()`,
    );
    const text = ctx.getString(ctx.unwrapResult(result));
    return text;
  };
  assert.equal(caught("throw"), "RangeError: too many");
  assert.equal(caught("error"), "TypeError: refused");
  assert.equal(evalNumber(ctx, "lean('nothing') === undefined ? 1 : 0"), 1);
  free(ctx);
});

Deno.test("the lean function's argument handles are dead once it returned", async () => {
  const { ctx } = await countingContext();
  let kept: QuickJSHandle | undefined;
  const lean = newLeanFunction(ctx, "lean", (a) => {
    kept = a;
    return ctx.newString(ctx.getString(a!).toUpperCase());
  });
  ctx.setProp(ctx.global, "lean", lean);
  lean.dispose();
  const result = ctx.unwrapResult(ctx.evalCode("lean('abc')"));
  assert.equal(ctx.getString(result), "ABC");
  result.dispose();
  assert.equal(kept?.alive, false);
  assert.throws(() => ctx.getString(kept!));
  free(ctx);
});
