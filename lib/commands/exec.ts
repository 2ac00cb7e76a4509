/**
 * `cargo-agents mcp exec <file.js|->`: one script run exactly as `execute` runs it, from a
 * terminal (for plugin authors).
 *
 * @module
 */
import type { CommandContext } from "./context.ts";
import { UserError } from "../diagnostics.ts";
import { runExecute, savedScriptsHost } from "../meta_server/mod.ts";
import { openSession } from "./_session.ts";

/** Options of {@link runExec}. */
export interface ExecOptions {
  /** Path of the script, or `-` for stdin. */
  file: string;
  /** Reads stdin when `file` is `-`. @default all of `Deno.stdin` */
  readStdin?: () => Promise<string>;
  /**
   * Print the run's trace too, as `execute { trace: true }` answers it (each call's server, tool, start
   * and duration in ms, bytes of arguments and result; see `docs/trace-and-report.md`). @default false
   */
  trace?: boolean;
}

async function readAllStdin(): Promise<string> {
  return await new Response(Deno.stdin.readable).text();
}

/**
 * Prints the text the agent would receive (image blocks as one line each), with the run's trace in it when
 * `options.trace` is set.
 *
 * @returns 0, or 1 when the result is an error.
 * @throws {UserError} `SCRIPT_UNREADABLE` when the file cannot be read.
 */
export async function runExec(options: ExecOptions, ctx: CommandContext): Promise<number> {
  let script: string;
  try {
    script = options.file === "-"
      ? await (options.readStdin ?? readAllStdin)()
      : await Deno.readTextFile(options.file);
  } catch (error) {
    throw new UserError(
      "SCRIPT_UNREADABLE",
      `Cannot read script "${options.file}": ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  const session = await openSession(ctx, { stderrLevel: "warn" });
  try {
    const saved = await savedScriptsHost(session.catalog);
    const result = await runExecute(session.catalog, session.runner, script, {
      logger: session.logger,
      returnTrace: options.trace === true,
      answerScripts: (name) => saved.answer(name, undefined),
      searchScripts: (args, limit) => saved.searchHits(args, limit),
    });
    for (const block of result.content) {
      if (block.type === "text") ctx.writeOut(block.text + "\n");
      else if (block.type === "image" || block.type === "audio") {
        ctx.writeOut(`[${block.type} ${block.mimeType}, ${block.data.length} base64 characters]\n`);
      } else ctx.writeOut(JSON.stringify(block) + "\n");
    }
    return result.isError ? 1 : 0;
  } finally {
    await session.close();
  }
}
