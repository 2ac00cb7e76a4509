/**
 * The parts of the prelude a run may never need, compiled in the run's context on first need (the core of
 * `_prelude.ts` asks the host for a part's factory through `native(4, index)` and calls it once): tool calls
 * (0), timers (1), formatting and the reports of thrown values and unobserved rejections (2), `$session` (3).
 *
 * A part may load after the script patched, replaced or deleted any global, so it reads none: every
 * built-in it uses comes from `I`, the frozen object of intrinsics the core captured before the script ran
 * (see the core's `I` for its members). Only syntax (`typeof`, literals, `class`, calls of captured
 * functions through `I.apply`) is used on top.
 *
 * @module
 */

/**
 * Part 0: the namespaces' keys (tool functions, `$resources`, coercion), tool calls (`symposium.search`
 * too), saved scripts (`scripts.name(input)`), their replies, `Promise.reject`.
 */
const CALLS = String.raw`(function (I) {
  "use strict";
  const P = I.P;
  const apply = I.apply;
  const promiseThen = I.then;
  const records = I.records;
  const native = I.native;
  const toJson = I.toJson;
  const ErrorCtor = I.ErrorCtor;
  const parse = I.parse;
  const create = I.create;
  const weakSet = I.weakSet;
  const toolErrors = I.toolErrors;
  // Tool-call promises (and Promise.reject) remember whether anything ever observed them.
  class TrackedPromise extends P {
    #record;
    static get [I.species]() { return P; }
    static track(promise, record) {
      promise.#record = record;
      records[records.length++] = record;
      return promise;
    }
    then(onFulfilled, onRejected) {
      const record = this.#record;
      if (record !== undefined) record.handled = true;
      return apply(promiseThen, this, [onFulfilled, onRejected]);
    }
  }
  const track = TrackedPromise.track;
  const trackedThen = TrackedPromise.prototype.then;
  const rejectedWith = function (reason, record) {
    record.state = 2;
    record.reason = reason;
    return track(new TrackedPromise(function (_resolve, reject) { reject(reason); }), record);
  };
  const pending = create(null);
  let limitRejection;
  const call = function (ns, key, args) {
    const tool = ns + "." + key;
    const record = { label: tool + "()", tool: tool, state: 0, handled: false, reason: undefined };
    let argsJson;
    try {
      argsJson = args === undefined ? undefined : toJson(args);
    } catch (error) {
      return rejectedWith(error, record);
    }
    const id = native(0, ns, key, argsJson);
    if (typeof id !== "number") {
      // Past max-tool-calls every call rejects with the same error: one shared rejected promise then, so a
      // flood of calls (Promise.all of 100,000) costs no record per call and keeps its tool_call_limit tag.
      if (id !== null && typeof id === "object" && id.name === "ToolCallLimitError") {
        // A plain Promise (not a TrackedPromise): Promise.all and await take it as it is, with no wrapper
        // promise per call; an uncaught one ends the run as tool_call_limit anyway.
        if (limitRejection === undefined) {
          limitRejection = apply(I.originalReject, P, [id]);
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
      apply(weakSet, toolErrors, [error, record.tool]);
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
  const reject = function (reason) {
    if (this !== P) return apply(I.originalReject, this, [reason]);
    return rejectedWith(reason, { label: "", tool: "", state: 2, handled: false, reason: reason });
  };
  const resources = function (ns) {
    const made = create(null);
    made.list = function (args) { return call(ns, "$resources.list", args); };
    made.read = function (args) { return call(ns, "$resources.read", args); };
    return I.freeze(made);
  };
  // A namespace answers every string key with an async tool function except the unreachable keys ("then",
  // so that it is not a thenable, and "__proto__"). It coerces to "[server <name>]" (Symbol.toPrimitive) and
  // serializes as that string: its toJSON, called by JSON.stringify with a string key, answers the string;
  // called with anything else (tool arguments are an object), it is a tool call like every other key.
  // srv.$resources.list() / .read({ uri }): host calls with keys "$resources.list" / "$resources.read"
  // ("$" is not allowed in MCP tool names, so these never shadow a tool), made once per namespace.
  const unreachable = create(null);
  UNREACHABLE
  const coercers = create(null);
  const madeResources = create(null);
  // Saved scripts (scripts.name(input)): the host answers the call with the script's JavaScript forms, each
  // source of a function (scripts) => async (input) => ...; the first that compiles is called in this context
  // (under the run's deadline and budgets) with a copy of the input as JSON and a scripts whose calls are one
  // level deeper (a handler's depth is its callers' level; the global scripts has none, level 0).
  const nestedScripts = create(null);
  const scriptsAt = function (depth) {
    const made = nestedScripts[depth];
    if (made !== undefined) return made;
    const handler = create(null);
    handler.ns = SCRIPTS;
    handler.label = "[server " + SCRIPTS + "]";
    handler.depth = depth;
    handler.get = get;
    handler.set = handler.defineProperty = handler.deleteProperty = function () { return false; };
    return (nestedScripts[depth] = new I.ProxyCtor(create(null), handler));
  };
  const runSaved = function (name, args, depth) {
    const record = { label: SCRIPTS + "." + name + "()", tool: SCRIPTS + "." + name, state: 0, handled: false, reason: undefined };
    if (depth > MAX_DEPTH) {
      return rejectedWith(new I.RangeErrorCtor("Cannot run " + SCRIPTS + "." + name + ": saved scripts call each other more than " + MAX_DEPTH + " deep; a saved script that calls itself must stop"), record);
    }
    let input;
    try {
      input = args === undefined ? undefined : parse(toJson(args));
    } catch (error) {
      return rejectedWith(error, record);
    }
    const asked = call(SCRIPTS, name, undefined);
    // Marked observed by the tracked then (the past-the-limit rejection is a plain promise, handled already).
    return apply(asked === limitRejection ? promiseThen : trackedThen, asked, [function (answer) {
      const forms = answer.forms;
      let shown;
      for (let i = 0; i < forms.length; i++) {
        let made;
        try {
          made = I.evaluate(forms[i]);
        } catch (error) {
          if (i === answer.report || shown === undefined) shown = error;
          continue;
        }
        // A script that is a function (async ({ dir }) => ...) is called with the input, as a run calls one.
        return apply(promiseThen, made(scriptsAt(depth))(input), [function (value) {
          return typeof value === "function" ? value(input) : value;
        }]);
      }
      throw shown;
    }]);
  };
  // The namespaces' get trap: this is the namespace's handler ({ ns, label }).
  const get = function (_target, key, receiver) {
    const ns = this.ns;
    const label = this.label;
    if (ns === SCRIPTS && typeof key === "string" && unreachable[key] !== true) {
      const depth = this.depth === undefined ? 1 : this.depth + 1;
      return function (args) { return runSaved(key, args, depth); };
    }
    if (key === I.toPrimitive) {
      const coerce = coercers[ns];
      return coerce !== undefined ? coerce : (coercers[ns] = function () { return label; });
    }
    if (key === I.toStringTag) return "server " + ns;
    if (typeof key !== "string" || unreachable[key] === true) return undefined;
    if (key === "$resources") {
      const made = madeResources[ns];
      return made !== undefined ? made : (madeResources[ns] = resources(ns));
    }
    if (key === "toJSON") {
      return function (args) {
        if (this === receiver && typeof args === "string") return label;
        return call(ns, key, args);
      };
    }
    return function (args) { return call(ns, key, args); };
  };
  const search = function (query, options) {
    const limit = options !== null && typeof options === "object" ? options.limit : undefined;
    return call(HELPER, "search", limit === undefined ? { query: query } : { query: query, limit: limit });
  };
  const handlers = I.handlers;
  for (let i = 0; i < handlers.length; i++) handlers[i].get = get;
  return { call: call, settle: settle, reject: reject, get: get, search: search };
})`;

/** Part 1: the bodies of `setTimeout` / `clearTimeout` and the host's `fireTimer`. */
const TIMERS = String.raw`(function (I) {
  "use strict";
  const native = I.native;
  const timers = I.create(null);
  let nextTimerId = 1;
  const set = function (callback) {
    if (typeof callback !== "function") {
      throw new I.TypeErrorCtor("setTimeout needs a function callback (strings are not evaluated)");
    }
    let delay = +arguments[1];
    if (!(delay > 0)) delay = 0;
    const args = I.create(null);
    args.length = 0;
    for (let i = 2; i < arguments.length; i++) args[args.length++] = arguments[i];
    const id = nextTimerId++;
    if (!native(2, id, delay)) throw new I.RangeErrorCtor("Too many pending timers in one script");
    timers[id] = { callback: callback, args: args };
    return id;
  };
  const clear = function (id) {
    if (typeof id === "number" && timers[id] !== undefined) {
      delete timers[id];
      native(3, id);
    }
  };
  const fire = function (id) {
    const timer = timers[id];
    if (timer === undefined) return;
    delete timers[id];
    I.apply(timer.callback, undefined, timer.args);
  };
  return { setTimeout: set, clearTimeout: clear, fire: fire };
})`;

/**
 * Part 2: `format` (console values), `describe` (a thrown value as JSON for `readThrown`) and `unobserved`
 * (the lines for rejections nobody handled and calls still pending). Their JSON is written by hand from
 * strings, so a script's `toJSON` on Object.prototype or Array.prototype cannot change it.
 */
const REPORT = String.raw`(function (I) {
  "use strict";
  const apply = I.apply;
  const stringify = I.stringify;
  const StringCtor = I.StringCtor;
  const ErrorCtor = I.ErrorCtor;
  const isError = function (value) { return apply(I.hasInstance, ErrorCtor, [value]); };
  const format = function (value) {
    if (typeof value === "string") return value;
    const label = value !== null && typeof value === "object" ? apply(I.weakGet, I.namespaceLabels, [value]) : undefined;
    if (label !== undefined) return label;
    if (value === undefined) return "undefined";
    if (typeof value === "bigint" || typeof value === "symbol") return StringCtor(value);
    if (typeof value === "function") return "[Function" + (value.name ? ": " + value.name : "") + "]";
    if (isError(value)) return StringCtor(value.name) + ": " + StringCtor(value.message);
    try {
      const json = I.toJson(value);
      return json === undefined ? "undefined" : json;
    } catch (_error) {
      try { return StringCtor(value); } catch (_again) { return "[unprintable]"; }
    }
  };
  const field = function (name, text) {
    return typeof text === "string" ? "," + stringify(name) + ":" + stringify(text) : "";
  };
  const describe = function (thrown) {
    try {
      if (thrown !== null && typeof thrown === "object" && typeof thrown.message === "string") {
        let name = typeof thrown.name === "string" && thrown.name !== "" ? thrown.name : "Error";
        // class E2 extends Error {} keeps Error's name unless it sets one: show the class's.
        const ctor = thrown.constructor;
        if (name === "Error" && typeof ctor === "function" && ctor !== ErrorCtor && isError(thrown) &&
            typeof ctor.name === "string" && ctor.name !== "") name = ctor.name;
        const stack = typeof thrown.stack === "string" ? thrown.stack : "";
        const toStr = thrown.toString;
        const head = typeof toStr === "function" && toStr !== I.errorToString ? StringCtor(apply(toStr, thrown, [])) : undefined;
        const tool = apply(I.weakGet, I.toolErrors, [thrown]);
        return "{" + stringify("name") + ":" + stringify(name) + field("message", thrown.message) +
          field("stack", stack) + field("head", head) + field("tool", tool) + "}";
      }
      return "{" + stringify("text") + ":" + stringify(typeof thrown === "string" ? stringify(thrown) : format(thrown)) + "}";
    } catch (_error) {
      return "{" + stringify("text") + ":" + stringify("[unprintable thrown value]") + "}";
    }
  };
  // One line per distinct text, counted here: a flood of calls must not build a line per call.
  const unobserved = function () {
    const records = I.records;
    const counts = I.create(null);
    const order = I.create(null);
    order.length = 0;
    const note = function (line) {
      if (counts[line] === undefined) {
        counts[line] = 0;
        order[order.length++] = line;
      }
      counts[line]++;
    };
    for (let i = 0; i < records.length; i++) {
      const record = records[i];
      if (record.state === 2 && !record.handled) {
        const reason = record.reason;
        const text = isError(reason) ? format(reason) : "Uncaught " + format(reason);
        note("[error] Unhandled promise rejection" + (record.label === "" ? "" : " from " + record.label) +
          ": " + text);
      } else if (record.state === 0) {
        note("[warn] " + record.label + " was still pending when the script returned and was cancelled; " +
          "await every tool call");
      }
    }
    let out = "[";
    for (let i = 0; i < order.length; i++) {
      const line = order[i];
      const count = counts[line];
      out += (i > 0 ? "," : "") + stringify(count > 1 ? line + " (×" + count + ")" : line);
    }
    return out + "]";
  };
  return { format: format, describe: describe, unobserved: unobserved };
})`;

/**
 * Part 3: `$session`'s methods, made on a script's first use of `$session` (the core's getter passes part 0's
 * `call`): host calls of namespace `$session`, keys `get`/`set`/`delete`/`keys`, arguments `{ key, value }`.
 * The host measures, keeps and answers; a value crosses as JSON, as tool arguments do. `get`s are sent one at
 * a time (in the order asked), so the host holds at most one value's reply for a run.
 */
const SESSION = String.raw`(function (I) {
  "use strict";
  let made, gate;
  const noop = function () {};
  const of = function (call) {
    if (made !== undefined) return made;
    made = I.create(null);
    // One get in flight at a time: the next is sent once the last one's value is in the script. Each
    // reply is a whole value (up to 8 MiB) the host parses, serializes and sends; a Promise.all of 100
    // gets of one big value held them all at once in the host (2.5 GB) and kept it busy past the deadline.
    made.get = function (key) {
      const ask = function () { return call(SESSION, "get", { key: key }); };
      const asked = gate === undefined ? ask() : I.apply(I.then, gate, [ask]);
      const done = I.apply(I.then, asked, [noop, noop]);
      gate = done;
      I.apply(I.then, done, [function () { if (gate === done) gate = undefined; }]);
      return asked;
    };
    made.set = function (key, value) { return call(SESSION, "set", { key: key, value: value }); };
    made.delete = function (key) { return call(SESSION, "delete", { key: key }); };
    made.keys = function () { return call(SESSION, "keys", undefined); };
    return I.freeze(made);
  };
  return { of: of };
})`;

/**
 * The parts' sources by index (0 tool calls, 1 timers, 2 reports, 3 `$session`), each a function `(I) => part`,
 * before `_prelude.ts` compacts them. `helperGlobal` is the name of the helper global (`symposium`),
 * `unreachableKeys` the keys a namespace does not answer (`UNREACHABLE_TOOL_KEYS`), `sessionGlobal` the session
 * state global (`$session`), `scripts` the saved scripts' global (`SCRIPTS_GLOBAL`) and how deep saved scripts
 * may call each other (`MAX_SCRIPTS_DEPTH`).
 */
export function preludeParts(
  helperGlobal: string,
  unreachableKeys: readonly string[],
  sessionGlobal: string,
  scripts: { name: string; maxDepth: number },
): readonly string[] {
  const unreachable = unreachableKeys.map((key) => `unreachable[${JSON.stringify(key)}] = true;`).join("\n");
  const calls = CALLS.replace("call(HELPER,", `call(${JSON.stringify(helperGlobal)},`)
    .replace("UNREACHABLE", unreachable)
    .replace(
      "const nestedScripts",
      `const SCRIPTS = ${JSON.stringify(scripts.name)};\n` +
        `const MAX_DEPTH = ${scripts.maxDepth};\nconst nestedScripts`,
    );
  return [
    calls,
    TIMERS,
    REPORT,
    SESSION.replaceAll("call(SESSION,", `call(${JSON.stringify(sessionGlobal)},`),
  ];
}
