/**
 * The guest-side half of the sandbox: JavaScript evaluated in each fresh QuickJS context before the script
 * (ahead of the run that will use the context, see `_vessel.ts`). It installs `console`,
 * `setTimeout`/`clearTimeout` and the helper global (`symposium`), and returns the internal functions the
 * host drives (`install`, which adds one namespace object per server once the run is known, `run`,
 * `settle`, `fireTimer`, `serialize`, `describe`, `unobserved`, `release`).
 * Everything it needs later is captured up front, so a script that patches built-ins only breaks itself.
 *
 * @module
 */

/**
 * Tool names a script cannot call through its namespace object: `then` (a namespace must not be a thenable,
 * or `await github` would call a tool) and `__proto__`. Every other string key, `constructor`, `toString`,
 * `valueOf`, `toJSON`, `inspect`, `prototype`, `catch` and `finally` included, is a tool call when called.
 * Symbol keys are never tools. `$resources` is the server's resources (`list()`, `read({ uri })`), never a
 * tool: `$` is not allowed in MCP tool names.
 */
export const UNREACHABLE_TOOL_KEYS: readonly string[] = Object.freeze(["then", "__proto__"]);

/**
 * The global of the meta-server's own helpers in every script (`symposium.search(query, { limit })`).
 * Each helper is a host call under this namespace (counted like a tool call); what it means is the host's
 * business, so the sandbox knows no servers. A server cannot take this global (`namespaceKey` prefixes it).
 */
export const HELPER_GLOBAL = "symposium";

/** File name the prelude is compiled under; its frames are dropped from the stacks shown to the agent. */
export const PRELUDE_FILE = "sandbox-prelude.js";

/**
 * Source of a function `(native, unreachableJson) => internals`; `unreachableJson` is
 * {@link UNREACHABLE_TOOL_KEYS} as JSON, and `internals.install(namespacesJson)` defines the namespaces.
 *
 * `native` holds the host functions: `call(ns, key, argsJson) → id | ToolCallLimitError`,
 * `log(line)`, `startTimer(id, delayMs) → boolean`, `cancelTimer(id)`.
 */
export const PRELUDE_SOURCE = String.raw`(function (native, unreachableJson) {
  "use strict";
  const G = globalThis;
  const P = Promise;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const StringCtor = String;
  const create = Object.create;
  const freeze = Object.freeze;
  const defineProperty = Object.defineProperty;
  const ProxyCtor = Proxy;
  const apply = Reflect.apply;
  const promiseThen = P.prototype.then;
  const originalReject = P.reject;
  const nativeCall = native.call;
  const nativeLog = native.log;
  const nativeStartTimer = native.startTimer;
  const nativeCancelTimer = native.cancelTimer;
  const errorToString = ErrorCtor.prototype.toString;
  const MapCtor = Map;
  const isArray = Array.isArray;
  const originalJoin = Array.prototype.join;
  const OutOfMemory = typeof InternalError === "function" ? InternalError : ErrorCtor;
  // Errors a failed tool call rejected with, and the tool ("ns.key"), so an uncaught one names it.
  const toolErrors = new WeakMap();
  const setToolError = WeakMap.prototype.set;
  const getToolError = WeakMap.prototype.get;
  // The heap limit of the run (set by install): a join whose separators alone pass it fails at once as
  // out of memory, instead of walking a billion holes for a minute before the heap fills.
  let heapBudgetBytes = Infinity;
  // Freed when the script ends, so the host can read the outcome even when the script filled the heap.
  let reserve = new ArrayBuffer(1048576);

  // BigInt has no JSON form: it crosses as its decimal string, in results, logs and tool arguments alike.
  const replacer = function (key, value) { return typeof value === "bigint" ? StringCtor(value) : value; };
  const toJson = function (value) { return stringify(value, replacer); };

  // Tool-call promises (and Promise.reject) remember whether anything ever observed them, so a rejection
  // nobody handled and a call still pending when the script returned can be reported.
  const records = [];
  class TrackedPromise extends P {
    #record;
    static get [Symbol.species]() { return P; }
    static track(promise, record) { promise.#record = record; records[records.length] = record; return promise; }
    then(onFulfilled, onRejected) {
      const record = this.#record;
      if (record !== undefined) record.handled = true;
      return apply(promiseThen, this, [onFulfilled, onRejected]);
    }
  }
  const track = TrackedPromise.track;
  const rejectedWith = function (reason, record) {
    record.state = 2;
    record.reason = reason;
    return track(new TrackedPromise(function (_resolve, reject) { reject(reason); }), record);
  };

  const pending = create(null);
  let limitRejection;
  const callTool = function (ns, key, args) {
    const record = { label: ns + "." + key + "()", state: 0, handled: false, reason: undefined };
    let argsJson;
    try {
      argsJson = args === undefined ? undefined : toJson(args);
    } catch (error) {
      return rejectedWith(error, record);
    }
    const id = nativeCall(ns, key, argsJson);
    if (typeof id !== "number") {
      // Past max-tool-calls every call rejects with the same error: one shared rejected promise then, so a
      // flood of calls (Promise.all of 100,000) costs no record per call and keeps its tool_call_limit tag.
      if (id !== null && typeof id === "object" && id.name === "ToolCallLimitError") {
        // A plain Promise (not a TrackedPromise): Promise.all and await take it as it is, with no wrapper
        // promise per call; an uncaught one ends the run as tool_call_limit anyway.
        if (limitRejection === undefined) {
          limitRejection = apply(originalReject, P, [id]);
          apply(promiseThen, limitRejection, [undefined, function () {}]);
        }
        return limitRejection;
      }
      return rejectedWith(id, record);
    }
    return track(new TrackedPromise(function (resolve, reject) {
      pending[id] = { resolve: resolve, reject: reject, record: record };
    }), record);
  };
  const settle = function (id, ok, payload) {
    const entry = pending[id];
    if (entry === undefined) return;
    delete pending[id];
    const record = entry.record;
    if (!ok) {
      const error = new ErrorCtor(payload);
      apply(setToolError, toolErrors, [error, record.label.slice(0, -2)]);
      record.state = 2;
      record.reason = error;
      entry.reject(error);
      return;
    }
    let value;
    try {
      value = payload === undefined ? undefined : parse(payload);
    } catch (error) {
      record.state = 2;
      record.reason = error;
      entry.reject(error);
      return;
    }
    record.state = 1;
    entry.resolve(value);
  };

  defineProperty(P, "reject", {
    value: function reject(reason) {
      if (this !== P) return apply(originalReject, this, [reason]);
      return rejectedWith(reason, { label: "", state: 2, handled: false, reason: reason });
    },
    writable: true, configurable: true, enumerable: false,
  });

  const format = function (value) {
    if (typeof value === "string") return value;
    const label = namespaceLabel(value);
    if (label !== undefined) return label;
    if (value === undefined) return "undefined";
    if (typeof value === "bigint" || typeof value === "symbol") return StringCtor(value);
    if (typeof value === "function") return "[Function" + (value.name ? ": " + value.name : "") + "]";
    if (value instanceof ErrorCtor) return StringCtor(value.name) + ": " + StringCtor(value.message);
    try {
      const json = toJson(value);
      return json === undefined ? "undefined" : json;
    } catch (_error) {
      try { return StringCtor(value); } catch (_again) { return "[unprintable]"; }
    }
  };
  const logger = function (prefix) {
    return function () {
      let line = prefix;
      for (let i = 0; i < arguments.length; i++) line += (i > 0 ? " " : "") + format(arguments[i]);
      nativeLog(line);
    };
  };
  const bare = logger("");
  const consoleObject = {
    log: bare, info: bare, debug: bare, trace: bare, dir: bare, table: bare,
    warn: logger("[warn] "), error: logger("[error] "),
  };
  defineProperty(G, "console", { value: consoleObject, writable: true, configurable: true, enumerable: false });

  const timers = create(null);
  let nextTimerId = 1;
  const setTimeoutFn = function setTimeout(callback) {
    if (typeof callback !== "function") {
      throw new TypeErrorCtor("setTimeout needs a function callback (strings are not evaluated)");
    }
    let delay = +arguments[1];
    if (!(delay > 0)) delay = 0;
    const args = [];
    for (let i = 2; i < arguments.length; i++) args[args.length] = arguments[i];
    const id = nextTimerId++;
    if (!nativeStartTimer(id, delay)) throw new RangeErrorCtor("Too many pending timers in one script");
    timers[id] = { callback: callback, args: args };
    return id;
  };
  const clearTimeoutFn = function clearTimeout(id) {
    if (typeof id === "number" && timers[id] !== undefined) {
      delete timers[id];
      nativeCancelTimer(id);
    }
  };
  const fireTimer = function (id) {
    const timer = timers[id];
    if (timer === undefined) return;
    delete timers[id];
    apply(timer.callback, undefined, timer.args);
  };
  defineProperty(G, "setTimeout", { value: setTimeoutFn, writable: true, configurable: true, enumerable: false });
  defineProperty(G, "clearTimeout", { value: clearTimeoutFn, writable: true, configurable: true, enumerable: false });

  // A namespace answers every string key with an async tool function except the unreachable keys ("then",
  // so that it is not a thenable, and "__proto__"). It coerces to "[server <name>]" (Symbol.toPrimitive) and
  // serializes as that string: its toJSON, called by JSON.stringify with a string key, answers the string;
  // called with anything else (tool arguments are an object), it is a tool call like every other key.
  const unreachable = create(null);
  const unreachableKeys = parse(unreachableJson);
  for (let i = 0; i < unreachableKeys.length; i++) unreachable[unreachableKeys[i]] = true;
  const toPrimitive = Symbol.toPrimitive;
  const toStringTag = Symbol.toStringTag;
  const namespaceLabels = new WeakMap();
  const labelOf = WeakMap.prototype.get;
  const setLabel = WeakMap.prototype.set;
  const namespaceLabel = function (value) {
    return value !== null && typeof value === "object" ? apply(labelOf, namespaceLabels, [value]) : undefined;
  };
  const makeResources = function (ns) {
    const resources = create(null);
    resources.list = function (args) { return callTool(ns, "$resources.list", args); };
    resources.read = function (args) { return callTool(ns, "$resources.read", args); };
    return freeze(resources);
  };
  const makeNamespace = function (ns) {
    const label = "[server " + ns + "]";
    const coerce = function () { return label; };
    // srv.$resources.list() / .read({ uri }): host calls with keys "$resources.list" / "$resources.read"
    // ("$" is not allowed in MCP tool names, so these never shadow a tool).
    // Made on first use, so a script that never touches it costs nothing.
    let resources;
    const handler = create(null);
    handler.get = function (_target, key, receiver) {
      if (key === toPrimitive) return coerce;
      if (key === toStringTag) return "server " + ns;
      if (typeof key !== "string" || unreachable[key] === true) return undefined;
      if (key === "$resources") return resources === undefined ? (resources = makeResources(ns)) : resources;
      if (key === "toJSON") {
        return function (args) {
          if (this === receiver && typeof args === "string") return label;
          return callTool(ns, key, args);
        };
      }
      return function (args) { return callTool(ns, key, args); };
    };
    handler.set = function () { return false; };
    handler.defineProperty = function () { return false; };
    handler.deleteProperty = function () { return false; };
    const proxy = new ProxyCtor(create(null), handler);
    apply(setLabel, namespaceLabels, [proxy, label]);
    return proxy;
  };
  // The meta-server's helpers: host calls under the helper namespace, with the arguments as one object.
  const helpers = create(null);
  helpers.search = function search(query, options) {
    const limit = options !== null && typeof options === "object" ? options.limit : undefined;
    return callTool(${
  JSON.stringify(HELPER_GLOBAL)
}, "search", limit === undefined ? { query: query } : { query: query, limit: limit });
  };
  defineProperty(G, ${
  JSON.stringify(HELPER_GLOBAL)
}, { value: freeze(helpers), writable: false, configurable: false, enumerable: false });

  defineProperty(Array.prototype, "join", {
    value: function join(separator) {
      if (!isArray(this)) return apply(originalJoin, this, arguments);
      const sep = separator === undefined ? "," : StringCtor(separator);
      const length = this.length;
      if (length > 1 && (length - 1) * sep.length > heapBudgetBytes) throw new OutOfMemory("out of memory");
      return apply(originalJoin, this, [sep]);
    },
    writable: true, configurable: true, enumerable: false,
  });

  const install = function (namespacesJson, heapLimitBytes) {
    if (typeof heapLimitBytes === "number" && heapLimitBytes > 0) heapBudgetBytes = heapLimitBytes;
    const names = parse(namespacesJson);
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      try {
        defineProperty(G, name, { value: makeNamespace(name), writable: false, configurable: false, enumerable: true });
      } catch (_error) {
        throw new TypeErrorCtor("Cannot install namespace " + stringify(name) + ": the global already exists and is fixed");
      }
    }
  };

  const run = async function (main) {
    let value = await main();
    if (typeof value === "function") value = await value();
    return value;
  };
  // A top-level undefined has no JSON form: it reads "undefined", never "null".
  const serialize = function (value) {
    if (value === undefined) return "undefined";
    const json = toJson(value);
    return json === undefined ? "null" : json;
  };
  const describe = function (thrown) {
    try {
      if (thrown !== null && typeof thrown === "object" && typeof thrown.message === "string") {
        let name = typeof thrown.name === "string" && thrown.name !== "" ? thrown.name : "Error";
        // class E2 extends Error {} keeps Error's name unless it sets one: show the class's.
        const ctor = thrown.constructor;
        if (name === "Error" && typeof ctor === "function" && ctor !== ErrorCtor && thrown instanceof ErrorCtor &&
            typeof ctor.name === "string" && ctor.name !== "") name = ctor.name;
        const stack = typeof thrown.stack === "string" ? thrown.stack : "";
        const toStr = thrown.toString;
        const head = typeof toStr === "function" && toStr !== errorToString ? StringCtor(apply(toStr, thrown, [])) : undefined;
        const tool = apply(getToolError, toolErrors, [thrown]);
        return stringify({ name: name, message: thrown.message, stack: stack, head: head, tool: tool });
      }
      return stringify({ text: typeof thrown === "string" ? stringify(thrown) : format(thrown) });
    } catch (_error) {
      return stringify({ text: "[unprintable thrown value]" });
    }
  };
  const unobserved = function () {
    const lines = [];
    const seen = new MapCtor();
    for (let i = 0; i < records.length; i++) {
      const record = records[i];
      if (record.state === 2 && !record.handled) {
        const reason = record.reason;
        const text = reason instanceof ErrorCtor ? format(reason) : "Uncaught " + format(reason);
        note("[error] Unhandled promise rejection" + (record.label === "" ? "" : " from " + record.label) +
          ": " + text);
      } else if (record.state === 0) {
        note("[warn] " + record.label + " was still pending when the script returned and was cancelled; " +
          "await every tool call");
      }
    }
    // One line per distinct text, counted here: a flood of calls must not build a line per call.
    const out = [];
    seen.forEach(function (count, line) { out[out.length] = count > 1 ? line + " (×" + count + ")" : line; });
    return stringify(out);
    function note(line) { seen.set(line, (seen.get(line) || 0) + 1); }
  };
  const release = function () { reserve = undefined; };
  return { install: install, run: run, settle: settle, fireTimer: fireTimer, serialize: serialize,
    describe: describe, unobserved: unobserved, release: release };
})`;
