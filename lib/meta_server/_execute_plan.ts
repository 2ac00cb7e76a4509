/**
 * The plan of one `execute` (what runs, what the log records, how `scripts.name()` and `symposium.search`
 * are answered, what becomes of the answer), and the plan of a plain `script`, which needs the saved scripts
 * only when the script calls them: a session of plain scripts plans its `execute`s without loading them.
 *
 * @module
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { SavedScriptForms } from "./_saved_script_forms.ts";
import type { ScriptSearchHit } from "./_script_search.ts";

/** What one `execute` runs and how its answer is made (see `_saved_script_exec.ts:planExecute`). */
export interface ExecutePlan {
  script: string;
  /** The script as the session log records it (a run's `args` left out, see `loggedScript`). */
  logged: string;
  /** Answers a `scripts.name()` call of this run. */
  answerScripts(name: string): Promise<SavedScriptForms>;
  /** The saved scripts a `symposium.search` of this run finds (see `SavedScriptsHost.searchHits`). */
  searchScripts(args: unknown, limit: number): Promise<ScriptSearchHit[]>;
  /** A refusal to answer at once, without running (a save under a name that cannot be used). */
  refusal?: CallToolResult | undefined;
  /** Turns the run's answer into the final one (saves on success). */
  finish(result: CallToolResult): Promise<CallToolResult>;
}

/** What a plain script's plan needs of the saved scripts (`_saved_script_exec.ts:SavedScriptsHost`). */
export interface SavedScriptsAnswers {
  /** The forms of saved script `name` for a `scripts.name()` call (`pending`: a script being saved). */
  answer(name: string, pending: undefined): Promise<SavedScriptForms>;
  /** The saved scripts a `symposium.search` with `args` finds, at most `limit`. */
  searchHits(args: unknown, limit: number): Promise<ScriptSearchHit[]>;
}

/**
 * The plan of `execute { script }`: runs `script` as given, logs it as given, answers as the run did; the
 * saved scripts are reached through `saved` only when the script calls one or searches.
 *
 * @param saved The session's saved scripts, loaded at the first call (see `meta_server/mod.ts`).
 */
export function scriptPlan(script: string, saved: () => Promise<SavedScriptsAnswers>): ExecutePlan {
  return {
    script,
    logged: script,
    answerScripts: async (name) => (await saved()).answer(name, undefined),
    searchScripts: async (args, limit) => (await saved()).searchHits(args, limit),
    finish: (result) => Promise.resolve(result),
  };
}
