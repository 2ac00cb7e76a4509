/** Stub: replaced by the sign-in issue. @module */
import type { CommandContext } from "../command_context.ts";
import { UserError } from "../diagnostics.ts";

/** Not built yet. @throws {UserError} always, code `NOT_BUILT`. */
// deno-lint-ignore require-await
export async function runLogin(_options: { server: string }, _ctx: CommandContext): Promise<number> {
  throw new UserError("NOT_BUILT", "Cannot sign in: `mcp login` is not built yet");
}

/** Not built yet. @throws {UserError} always, code `NOT_BUILT`. */
// deno-lint-ignore require-await
export async function runLogout(_options: { server: string }, _ctx: CommandContext): Promise<number> {
  throw new UserError("NOT_BUILT", "Cannot sign out: `mcp logout` is not built yet");
}
