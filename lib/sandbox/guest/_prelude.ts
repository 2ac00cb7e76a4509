/**
 * The guest-side half of the sandbox: JavaScript evaluated in each fresh QuickJS context before the script
 * (ahead of the run that will use the context, see `_prepared_context.ts`). Only a small core is compiled per run: it
 * installs `console`, `setTimeout`/`clearTimeout`, the `Promise.reject` and `Array.prototype.join` patches,
 * the helper global (`symposium`) and the session state global (`$session`, a getter of part 3's object), and
 * returns the internal functions the host drives (`install`, which adds one namespace object per server once
 * the run is known, `run`, `serialize`, `release`, `describe`, `unobserved`, `settle`, `fireTimer`). The rarely needed rest (tool calls, timers, formatting and error
 * reports; see `_prelude_parts.ts`) is compiled in the same context on first need.
 * Everything any part needs later is captured up front by the core and handed to the parts as one frozen
 * object, so a script that patches or deletes built-ins only breaks itself, before or after a part loads.
 *
 * @module
 */
import { preludeParts } from "./_prelude_parts.ts";
import {
  HELPER_GLOBAL,
  MAX_SCRIPTS_DEPTH,
  SCRIPTS_GLOBAL,
  SESSION_GLOBAL,
  UNREACHABLE_TOOL_KEYS,
} from "../protocol/globals.ts";

/** The session state global's name as a JavaScript string literal, for the core's source. */
const SESSION_JSON = JSON.stringify(SESSION_GLOBAL);

/** File name the prelude is compiled under; its frames are dropped from the stacks shown to the agent. */
export const PRELUDE_FILE = "sandbox-prelude.js";

/**
 * The operations of the one native function the core is given (`native(op, a, b, c)`), by code:
 * `call(ns, key, argsJson) -> id | error to reject with`, `log(line)`, `startTimer(id, delayMs) -> boolean`,
 * `cancelTimer(id)`, `load(part) -> factory` (the source of {@link PRELUDE_PART_SOURCES}`[part]`, evaluated).
 */
export const NativeOp = Object.freeze({ call: 0, log: 1, startTimer: 2, cancelTimer: 3, load: 4 });

/**
 * Indices of the array the core returns (`[install, run, serialize, release, describe, unobserved, settle,
 * fireTimer, part, define]`; `part(index)` loads a part ahead; `define(target, key, value)` defines a
 * writable, configurable, non-enumerable property without running any setter of the script's, for the
 * host's error objects); the host fetches each function on first use.
 */
export const Internal = Object.freeze({
  install: 0,
  run: 1,
  serialize: 2,
  release: 3,
  describe: 4,
  unobserved: 5,
  settle: 6,
  fireTimer: 7,
  part: 8,
  define: 9,
});

/**
 * `source` without comment lines, indentation and blank lines (a line break stays between statements, so
 * no statement is joined to the next): QuickJS compiles less text. The prelude sources keep comments on
 * their own lines for this.
 */
export function compactSource(source: string): string {
  return source.split("\n").map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("//"))
    .join("\n");
}

/**
 * Source of the core, a function `(native) => internals` (see {@link NativeOp} and {@link Internal});
 * `internals[Internal.install](namespacesJson, heapLimitBytes)` defines the namespaces.
 */
export const PRELUDE_SOURCE = compactSource(String.raw`(function (native) {
  "use strict";
  const G = globalThis, P = Promise, apply = Reflect.apply, create = Object.create, freeze = Object.freeze;
  const defineProperty = Object.defineProperty, stringify = JSON.stringify, parse = JSON.parse;
  const StringCtor = String, ErrorCtor = Error, ProxyCtor = Proxy, WeakMapCtor = WeakMap;
  const isArray = Array.isArray, originalJoin = Array.prototype.join, weakSet = WeakMapCtor.prototype.set;
  const OutOfMemory = typeof InternalError === "function" ? InternalError : ErrorCtor;
  // The heap limit of the run (set by install): a join whose separators alone pass it fails at once as
  // out of memory, instead of walking a billion holes for a minute before the heap fills.
  let heapBudgetBytes = Infinity;
  // Freed when the script ends, so the host can read the outcome even when the script filled the heap.
  let reserve = new ArrayBuffer(1048576);
  // BigInt has no JSON form: it crosses as its decimal string, in results, logs and tool arguments alike.
  const replacer = function (key, value) { return typeof value === "bigint" ? StringCtor(value) : value; };
  const toJson = function (value) { return stringify(value, replacer); };
  // Tool-call promises (and Promise.reject) records: whether anything observed them, for the report of a
  // rejection nobody handled and of a call still pending when the script returned. Null-prototype lists:
  // a script's setters on Array.prototype never see them.
  const records = create(null), parts = create(null), namespaceLabels = new WeakMapCtor();
  records.length = 0;
  const namespaceHandlers = create(null);
  namespaceHandlers.length = 0;
  // The parts compiled on first need (see _prelude_parts.ts), by index.
  // The host answers undefined when the heap has no room to compile the part.
  const part = function (index) {
    const loaded = parts[index];
    if (loaded !== undefined) return loaded;
    const factory = native(4, index);
    if (typeof factory !== "function") throw new OutOfMemory("out of memory");
    return (parts[index] = factory(I));
  };
  const I = freeze({
    native: native, records: records, handlers: namespaceHandlers, namespaceLabels: namespaceLabels, toJson: toJson, P: P,
    then: P.prototype.then, originalReject: P.reject, species: Symbol.species, toPrimitive: Symbol.toPrimitive,
    toStringTag: Symbol.toStringTag, apply: apply, create: create, freeze: freeze, stringify: stringify,
    parse: parse, StringCtor: StringCtor, ErrorCtor: ErrorCtor, TypeErrorCtor: TypeError,
    RangeErrorCtor: RangeError, errorToString: ErrorCtor.prototype.toString,
    hasInstance: Function.prototype[Symbol.hasInstance], toolErrors: new WeakMapCtor(),
    weakGet: WeakMapCtor.prototype.get, weakSet: weakSet, evaluate: G.eval, ProxyCtor: ProxyCtor,
  });
  // A function named name that is part index's function of that name (called with the same this and
  // arguments): the part compiles on the first call, not before.
  const stub = function (index, name) {
    return ({ [name]: function () { return apply(part(index)[name], this, arguments); } })[name];
  };
  // A writable, configurable, non-enumerable property (as the built-ins it replaces or adds to).
  // The descriptor has no prototype: the host defines its errors' members with this after the script ran,
  // and a descriptor inheriting the script's Object.prototype.get or .enumerable would read (run) them.
  const define = function (target, key, value) {
    defineProperty(target, key, { __proto__: null, value: value, writable: true, configurable: true });
  };
  define(P, "reject", stub(0, "reject"));
  // Console lines of strings never need the formatting part.
  const logger = function (prefix) {
    return function () {
      let line = prefix;
      for (let i = 0; i < arguments.length; i++) {
        const value = arguments[i];
        line += (i > 0 ? " " : "") + (typeof value === "string" ? value : part(2).format(value));
      }
      native(1, line);
    };
  };
  const bare = logger("");
  define(G, "console", {
    log: bare, info: bare, debug: bare, trace: bare, dir: bare, table: bare,
    warn: logger("[warn] "), error: logger("[error] "),
  });
  define(G, "setTimeout", stub(1, "setTimeout"));
  define(G, "clearTimeout", stub(1, "clearTimeout"));
  const helpers = create(null);
  helpers.search = stub(0, "search");
  defineProperty(G, ${JSON.stringify(HELPER_GLOBAL)}, { value: freeze(helpers) });
  // $session (get/set/delete/keys): made by part 3 on first use, so a run that never names it pays nothing.
  defineProperty(G, ${SESSION_JSON}, { get: function () { return part(3).of(part(0).call); } });
  define(Array.prototype, "join", function join(separator) {
    if (!isArray(this)) return apply(originalJoin, this, arguments);
    const sep = separator === undefined ? "," : StringCtor(separator);
    const length = this.length;
    if (length > 1 && (length - 1) * sep.length > heapBudgetBytes) throw new OutOfMemory("out of memory");
    return apply(originalJoin, this, [sep]);
  });
  // A namespace is a proxy whose get trap is part 0's (called with the handler, which names the server, as
  // this; until part 0 loads, a stub that loads it, and part 0 then puts its own get on every handler); its
  // other traps refuse every change. Its label is kept here, so that console.log(srv) reads "[server srv]"
  // without touching the namespace.
  const getKey = stub(0, "get");
  const handlers = I.handlers;
  const refuse = function () { return false; };
  const install = function (namespacesJson, heapLimitBytes) {
    if (typeof heapLimitBytes === "number" && heapLimitBytes > 0) heapBudgetBytes = heapLimitBytes;
    const names = parse(namespacesJson);
    for (let i = 0; i < names.length; i++) {
      const handler = create(null);
      handler.ns = names[i];
      handler.label = "[server " + names[i] + "]";
      handler.get = parts[0] !== undefined ? parts[0].get : getKey;
      handlers[handlers.length++] = handler;
      handler.set = handler.defineProperty = handler.deleteProperty = refuse;
      const proxy = new ProxyCtor(create(null), handler);
      apply(weakSet, namespaceLabels, [proxy, handler.label]);
      try {
        defineProperty(G, names[i], { value: proxy, enumerable: true });
      } catch (_error) {
        throw new I.TypeErrorCtor("Cannot install namespace " + stringify(names[i]) + ": the global already exists and is fixed");
      }
    }
  };
  const run = async function (main) {
    let value = await main();
    if (typeof value === "function") value = await value();
    return value;
  };
  const release = function () { reserve = undefined; };
  // The reserve is freed first. A top-level undefined has no JSON form: it reads "undefined", never "null".
  const serialize = function (value) {
    reserve = undefined;
    if (value === undefined) return "undefined";
    const json = toJson(value);
    return json === undefined ? "null" : json;
  };
  // "" when no record needs a line (the report part is then never compiled), else the lines as JSON.
  const unobserved = function () {
    for (let i = 0; i < records.length; i++) {
      const record = records[i];
      if (record.state === 0 || (record.state === 2 && !record.handled)) return part(2).unobserved();
    }
    return "";
  };
  return [install, run, serialize, release, stub(2, "describe"), unobserved, stub(0, "settle"), stub(1, "fire"),
    part, define];
})`);

/** The parts' sources by index, compacted like the core (see `preludeParts` in `_prelude_parts.ts`). */
export const PRELUDE_PART_SOURCES: readonly string[] = Object.freeze(
  preludeParts(HELPER_GLOBAL, UNREACHABLE_TOOL_KEYS, SESSION_GLOBAL, {
    name: SCRIPTS_GLOBAL,
    maxDepth: MAX_SCRIPTS_DEPTH,
  }).map(compactSource),
);
