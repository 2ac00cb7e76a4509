/**
 * A host function for the prelude's `native` (every tool call, console line and timer of a script crosses it)
 * whose calls skip quickjs-emscripten's generic C -> JS trampoline. That trampoline wraps each call in three
 * generators, a `Scope` (a `Set` and a lifetime) and a managed lifetime per argument, to support async host
 * functions we never make: measured in the sandbox (`bench` SEQ_200's script in process, 2026-12-07), it was
 * about 40 % of the guest's CPU per tool call (79 -> 45 µs with this path). The lean path keeps its contract:
 * weak argument handles dead after the call, the returned handle duplicated for QuickJS and disposed, a
 * thrown error thrown in QuickJS as the generic path converts it. Any other host function of the context
 * still takes the generic path.
 *
 * It reaches members quickjs-emscripten keeps private (`QuickJSContext.cToHostCallbacks`, `ctx`, `ffi`,
 * `memory`, `errorToHandle`, `getFunction`); when they are missing (another version), the function is a
 * plain `newFunction` and works as before.
 *
 * @module
 */
import { Lifetime, WeakLifetime } from "quickjs-emscripten-core";
import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";

/**
 * A host function's body as the lean path calls it: argument handles in; out a handle (or nothing), or
 * `{ error }`, thrown in QuickJS (as `newFunction`'s bodies may answer).
 */
export type LeanHostFunction = (
  ...args: QuickJSHandle[]
) => QuickJSHandle | { error: QuickJSHandle } | undefined;

/** The private members of a `QuickJSContext` the lean path uses (checked at run time). */
interface ContextInternals {
  ctx?: { value: number };
  cToHostCallbacks?: { callFunction?: CToHostCall };
  ffi?: {
    QTS_ArgvGetJSValueConstPointer(argv: number, index: number): number;
    QTS_DupValuePointer(ctx: number, value: number): number;
    QTS_Throw(ctx: number, error: number): number;
  };
  memory?: { copyJSValue: (value: number) => number; freeJSValue: (value: number) => void };
  errorToHandle?: (error: unknown) => QuickJSHandle;
  getFunction?: (fnId: number) => unknown;
}

type CToHostCall = (ctx: number, thisPtr: number, argc: number, argv: number, fnId: number) => number;

/**
 * Makes host function `name` in `ctx` (as `ctx.newFunction(name, fn)`), its calls served by the lean path.
 * `fn` is called without a `this`.
 *
 * @returns The function's handle (the caller owns it).
 */
export function newLeanFunction(ctx: QuickJSContext, name: string, fn: LeanHostFunction): QuickJSHandle {
  const handle = ctx.newFunction(name, fn);
  const internals = ctx as unknown as ContextInternals;
  const callbacks = internals.cToHostCallbacks;
  const generic = callbacks?.callFunction;
  const { ffi, memory } = internals;
  const ctxPtr = internals.ctx?.value;
  if (
    !callbacks || !generic || !ffi || !memory || !internals.errorToHandle || !internals.getFunction ||
    typeof ctxPtr !== "number"
  ) {
    return handle;
  }
  const rt = ctx.runtime;
  let leanId: number | undefined;
  callbacks.callFunction = (calledCtx, thisPtr, argc, argv, fnId) => {
    if (fnId !== leanId) {
      if (leanId !== undefined || calledCtx !== ctxPtr || internals.getFunction!(fnId) !== fn) {
        return generic(calledCtx, thisPtr, argc, argv, fnId);
      }
      leanId = fnId;
    }
    const args = new Array<QuickJSHandle>(argc);
    for (let i = 0; i < argc; i++) {
      const pointer = ffi.QTS_ArgvGetJSValueConstPointer(argv, i);
      args[i] = new WeakLifetime(
        pointer,
        memory.copyJSValue,
        memory.freeJSValue,
        rt,
      ) as unknown as QuickJSHandle;
    }
    try {
      const result = fn(...args);
      if (!result) return 0;
      if (!(result instanceof Lifetime)) throw result.error;
      const held: QuickJSHandle = result;
      const duplicated = ffi.QTS_DupValuePointer(ctxPtr, held.value);
      held.dispose();
      return duplicated;
    } catch (error) {
      const thrown = internals.errorToHandle!(error);
      try {
        return ffi.QTS_Throw(ctxPtr, thrown.value);
      } finally {
        thrown.dispose();
      }
    } finally {
      for (const arg of args) arg.dispose();
    }
  };
  return handle;
}
