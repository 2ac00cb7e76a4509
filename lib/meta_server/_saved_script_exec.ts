/**
 * `execute`'s saved-script arguments: `{ script, save_as, description, args }` runs a script with an input
 * and saves it once it ran without error; `{ run, args }` runs a saved script by name. Both run through the
 * same path as `await scripts.name(input)` inside a script: a one-line driver script calls the saved one, so
 * a run by name and a call from another script share the deadline, the budgets and the error reports.
 * Also the host's answer to a `scripts.name()` call (the script's forms, see `_saved_script_forms.ts`).
 *
 * @module
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { Catalog } from "../catalog/mod.ts";
import { SCRIPTS_GLOBAL } from "../sandbox/mod.ts";
import { namespaceKey } from "../plugins/mod.ts";
import { namedServers, startNamedServers } from "./named_servers.ts";
import { type ExecutePlan, scriptPlan } from "./_execute_plan.ts";
import { SavedScriptCompiler, type SavedScriptForms } from "./_saved_script_forms.ts";
import type { ScriptSearchHit } from "./_script_search.ts";
import { firstSentence } from "../declarations/mod.ts";
import { savedScriptSignature, searchSavedScripts } from "./_saved_script_index.ts";
import {
  findSavedScript,
  MAX_DESCRIPTION_CHARS,
  MAX_SAVED_SCRIPT_BYTES,
  readSavedScripts,
  renderSavedScript,
  type SavedScriptPlaces,
  type SavedScriptSet,
  scriptNameProblem,
  writeUserScript,
} from "./saved_scripts.ts";

/** Largest `args` of a run by name or a save, as JSON, in UTF-8 bytes (1 MiB). */
export const MAX_RUN_ARGS_BYTES = 1024 * 1024;

/** `execute`'s arguments, read. */
export type ExecuteRequest =
  | { kind: "script"; script: string }
  | { kind: "save"; script: string; name: string; description: string; args: unknown }
  | { kind: "run"; name: string; args: unknown };

/**
 * Reads `execute`'s arguments: exactly one of `script` (a string) and `run` (a saved script's name);
 * `save_as` and `description` (strings) only with `script`; `args` (a JSON object, default `{}`) only with
 * `run` or `save_as`.
 *
 * @returns The request, or a message saying which argument is wrong and how to fix it.
 */
export function readExecuteRequest(raw: unknown): ExecuteRequest | { error: string } {
  const a = (typeof raw === "object" && raw !== null && !Array.isArray(raw) ? raw : {}) as Record<
    string,
    unknown
  >;
  const has = (key: string) => a[key] !== undefined;
  if (!has("script") && !has("run")) {
    return { error: "`execute` requires a `script` string (or `run`: the name of a saved script)" };
  }
  if (has("script") && has("run")) {
    return { error: "`execute` needs exactly one of `script` (a program) and `run` (a saved script's name)" };
  }
  if (has("run") && (has("save_as") || has("description"))) {
    return { error: "`save_as` and `description` go with `script`; `run` runs a script saved already" };
  }
  if (has("args")) {
    if (!has("run") && !has("save_as")) {
      return { error: "`args` is the input of a saved script: give it with `run` or `save_as`" };
    }
    if (typeof a.args !== "object" || a.args === null || Array.isArray(a.args)) {
      return { error: "`args` must be a JSON object (the saved script reads it as `input`)" };
    }
    const bytes = new TextEncoder().encode(JSON.stringify(a.args)).length;
    if (bytes > MAX_RUN_ARGS_BYTES) {
      return {
        error: `\`args\` is ${bytes} bytes of JSON, more than ${MAX_RUN_ARGS_BYTES}; pass less input`,
      };
    }
  }
  const args = a.args ?? {};
  if (has("run")) {
    if (typeof a.run !== "string") return { error: "`run` must be the name of a saved script (a string)" };
    return { kind: "run", name: a.run, args };
  }
  if (typeof a.script !== "string") return { error: "`execute` requires a `script` string" };
  if (!has("save_as")) {
    return has("description")
      ? { error: "`description` describes a script being saved: give `save_as` too" }
      : { kind: "script", script: a.script };
  }
  if (typeof a.save_as !== "string") return { error: "`save_as` must be the name to save the script under" };
  if (has("description") && typeof a.description !== "string") {
    return { error: "`description` must be a string saying what the script does" };
  }
  const description = typeof a.description === "string" ? a.description : "";
  if (description.length > MAX_DESCRIPTION_CHARS) {
    return {
      error: `\`description\` has ${description.length} characters, more than ${MAX_DESCRIPTION_CHARS}`,
    };
  }
  return { kind: "save", script: a.script, name: a.save_as, description, args };
}

/**
 * The script the session log (and so `cargo agents report`) records for a run by name or a save: the saved
 * script's call with the size of its `args`, never their values (the log keeps names and sizes only), and
 * for a save the script being saved after that line.
 */
export function loggedScript(request: Exclude<ExecuteRequest, { kind: "script" }>): string {
  const bytes = new TextEncoder().encode(JSON.stringify(request.args)).length;
  const call = `// ${SCRIPTS_GLOBAL}.${request.name}(args: ${bytes} bytes of JSON, not logged)`;
  return request.kind === "run" ? call : `${call}, saved as:\n${request.script}`;
}

/** The script that runs saved script `name` with `args` as its input (the path `scripts.name()` takes). */
export function driverScript(name: string, args: unknown): string {
  return `return await ${SCRIPTS_GLOBAL}[${JSON.stringify(name)}](${JSON.stringify(args)})`;
}

/**
 * How long a read of every saved script serves a script's `symposium.search` calls after it ended, ms (the
 * workspace is looked at as often). Reading them all costs up to 400 files of 256 KiB read and hashed: a
 * repository's 200 such scripts made each search take 1.6 s, and 90 at once took mcp-serve to 2.7 GB.
 */
export const SAVED_SET_REUSE_MS = 2_000;

/** Reads every saved script of `places` (`readSavedScripts`; a seam for tests). */
export type SavedSetReader = (places: SavedScriptPlaces) => Promise<SavedScriptSet>;

/** One read of the saved scripts, for searches: where (as JSON), the read, and when it ended (epoch ms). */
interface SharedRead {
  key: string;
  set: Promise<SavedScriptSet>;
  endedAtMs?: number;
}

/** The saved scripts of one agent session: answering `scripts.name()` calls and saving. */
export class SavedScriptsHost {
  readonly #catalog: Catalog;
  readonly #compiler = new SavedScriptCompiler();
  readonly #read: SavedSetReader;
  /** The last read for searches: shared while it runs, reused until {@link SAVED_SET_REUSE_MS} after it ended. */
  #lastRead: SharedRead | undefined;

  /** @param read Reads the saved scripts. @default readSavedScripts */
  constructor(catalog: Catalog, read: SavedSetReader = readSavedScripts) {
    this.#catalog = catalog;
    this.#read = read;
  }

  /** The saved scripts for a search: one read shared by the calls made while it runs or just after. */
  #searchSet(): Promise<SavedScriptSet> {
    const places = this.places;
    const key = JSON.stringify(places);
    const last = this.#lastRead;
    if (
      last !== undefined && last.key === key &&
      (last.endedAtMs === undefined || Date.now() - last.endedAtMs < SAVED_SET_REUSE_MS)
    ) {
      return last.set;
    }
    const read: SharedRead = { key, set: this.#read(places) };
    this.#lastRead = read;
    read.set.then(
      () => (read.endedAtMs = Date.now()),
      () => this.#lastRead === read && (this.#lastRead = undefined),
    );
    return read.set;
  }

  /** Where this session's saved scripts are (read at each use: the workspace may change). */
  get places(): SavedScriptPlaces {
    return { configDir: this.#catalog.configDir, workspaceRoot: this.#catalog.workspace.root };
  }

  /** The compiler (shared with `list_tools`' check of saved scripts). */
  get compiler(): SavedScriptCompiler {
    return this.#compiler;
  }

  /**
   * Answers a script's `scripts.name()` call: the forms of the saved script (the one being saved by this
   * run first), and starts the servers it names.
   *
   * @throws {Error} naming the script and why none runs by that name (the calling script sees it).
   */
  async answer(name: string, pending: { name: string; text: string } | undefined): Promise<SavedScriptForms> {
    let text: string;
    let where = "the script being saved";
    if (pending !== undefined && pending.name === name) text = pending.text;
    else {
      const found = await findSavedScript(this.places, name);
      if (typeof found === "string") throw new Error(`Cannot run ${SCRIPTS_GLOBAL}.${name}: ${found}`);
      text = found.text;
      where = found.file;
    }
    // Said here with its line in the file: the guest's own syntax error would have no position.
    const broken = await this.#compiler.compileProblem(text);
    if (broken !== undefined) {
      throw new SyntaxError(
        `Cannot run ${SCRIPTS_GLOBAL}.${name}: it does not compile: ${broken}; fix ${where}`,
      );
    }
    startNamedServers(this.#catalog, text);
    return await this.#compiler.forms(text);
  }

  /**
   * The saved scripts a script's `symposium.search(query, { limit })` finds, as its hits are shaped
   * (`server` is `scripts`, so `globalThis[server][tool](input)` runs one), best first; `[]` for a query
   * that is not a string.
   */
  async searchHits(args: unknown, limit: number): Promise<ScriptSearchHit[]> {
    const query = (typeof args === "object" && args !== null ? args as Record<string, unknown> : {}).query;
    if (typeof query !== "string") return [];
    const set = await this.#searchSet();
    return searchSavedScripts(set.usable, query, limit).map((script) => ({
      server: SCRIPTS_GLOBAL,
      tool: script.name,
      description: firstSentence(script.description),
      signature: savedScriptSignature(script),
    }));
  }

  /**
   * Why `request` cannot be saved under its name, before it runs: the name (see `scriptNameProblem`, the
   * servers in scope included) or the script's size.
   */
  saveRefusal(request: Extract<ExecuteRequest, { kind: "save" }>): string | undefined {
    const servers = [...this.#catalog.servers.map((s) => s.name), ...this.#catalog.unavailableNamespaces()];
    const problem = scriptNameProblem(request.name, servers);
    if (problem !== undefined) {
      return `Cannot save the script as ${JSON.stringify(request.name.slice(0, 80))}: ${problem}`;
    }
    const bytes = new TextEncoder().encode(request.script).length;
    if (bytes > MAX_SAVED_SCRIPT_BYTES) {
      return `Cannot save the script as \`${request.name}\`: it is ${bytes} bytes, more than ${MAX_SAVED_SCRIPT_BYTES}`;
    }
    return undefined;
  }

  /**
   * Saves `request` (after its run succeeded) and adds `saved` to the answer: the script's call and file.
   * A save that fails turns the answer into an error saying why (the run's result is kept in the text).
   */
  async save(
    request: Extract<ExecuteRequest, { kind: "save" }>,
    result: CallToolResult,
  ): Promise<CallToolResult> {
    const servers = namedServers(this.#catalog, request.script).map((s) => namespaceKey(s.name));
    let note: string;
    try {
      const file = await writeUserScript(
        this.#catalog.configDir,
        request.name,
        renderSavedScript(request.script, request.description, servers),
      );
      note = `saved as ${SCRIPTS_GLOBAL}.${request.name} (${file}); run it with execute { run: ` +
        `${
          JSON.stringify(request.name)
        }, args } or await ${SCRIPTS_GLOBAL}.${request.name}(input) in a script`;
    } catch (error) {
      const text = result.content.map((c) => c.type === "text" ? c.text : "").join("");
      return {
        content: [{
          type: "text",
          text: `${error instanceof Error ? error.message : error}\n\nThe run's answer: ${text}`,
        }],
        isError: true,
      };
    }
    const structured = { ...(result.structuredContent ?? {}), saved: note };
    return {
      ...result,
      content: [{ type: "text", text: JSON.stringify(structured) }, ...result.content.slice(1)],
      structuredContent: structured,
    };
  }
}

/** The pieces `answerExecute` needs for one request: the script to run, and what to do with its answer. */
export type { ExecutePlan } from "./_execute_plan.ts";

/** Plans one `execute` (see {@link ExecutePlan}). */
export function planExecute(host: SavedScriptsHost, request: ExecuteRequest): ExecutePlan {
  if (request.kind === "script") return scriptPlan(request.script, () => Promise.resolve(host));
  if (request.kind === "run") {
    return {
      script: driverScript(request.name, request.args),
      logged: loggedScript(request),
      answerScripts: (name) => host.answer(name, undefined),
      searchScripts: (args, limit) => host.searchHits(args, limit),
      finish: (result) => Promise.resolve(result),
    };
  }
  const refused = host.saveRefusal(request);
  const pending = { name: request.name, text: request.script };
  return {
    script: driverScript(request.name, request.args),
    logged: loggedScript(request),
    answerScripts: (name) => host.answer(name, pending),
    searchScripts: (args, limit) => host.searchHits(args, limit),
    refusal: refused === undefined
      ? undefined
      : { content: [{ type: "text", text: refused }], isError: true },
    finish: (result) => result.isError ? Promise.resolve(result) : host.save(request, result),
  };
}
