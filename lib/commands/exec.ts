/** Stub: replaced by the issue that builds this command. @module */
import type { CommandContext } from "../command_context.ts";
import { UserError } from "../diagnostics.ts";

/** Not built yet. @throws {UserError} always, code `NOT_BUILT`. */
// deno-lint-ignore require-await
export async function runExec(_options: unknown, _ctx?: CommandContext): Promise<number> {
  throw new UserError("NOT_BUILT", "Cannot run this command: it is not built yet");
}
