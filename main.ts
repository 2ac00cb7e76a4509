/**
 * `cargo-agents`: argv -> the command table of `lib/commands/mod.ts` -> exit code.
 * The only file that reads `Deno.args`/`Deno.env`, prints on its own, or exits.
 *
 * Exit codes: 0 ok, 1 user error (diagnostic shown), 2 usage error, 70 internal bug.
 *
 * @module
 */
import { renderDiagnostic, UsageError, UserError } from "./lib/diagnostics.ts";
import type { CommandContext } from "./lib/commands/mod.ts";
import { PROGRAM_VERSION, runCommandLine } from "./lib/commands/mod.ts";
import { isDenoRuntime, sourceRunArgs } from "./lib/self_command.ts";
import { maskSecrets } from "./lib/secrets/mod.ts";

/** The program's version, from `deno.json`. */
export const VERSION: string = PROGRAM_VERSION;

/** Dependencies of {@link main}: everything it would otherwise take from `Deno`. */
export type MainDeps = Omit<CommandContext, "verbose">;

/**
 * Runs the CLI.
 *
 * @param argv Arguments without the program name; a leading `agents` (as
 *   passed by `cargo agents ...`) is dropped.
 * @returns The exit code: 0 ok, 1 user error, 2 usage error, 70 internal error.
 */
export async function main(argv: string[], deps: MainDeps): Promise<number> {
  const args = argv[0] === "agents" ? argv.slice(1) : [...argv];
  const verbose = args.some((a) => a === "-v" || a === "--verbose");
  const rest = args.filter((a) => a !== "-v" && a !== "--verbose");
  // Every byte a command prints passes the secret registry (registered values, credential shapes).
  const ctx: CommandContext = {
    ...deps,
    verbose,
    writeOut: (text) => deps.writeOut(maskSecrets(text)),
    writeErr: (text) => deps.writeErr(maskSecrets(text)),
  };
  try {
    return await runCommandLine(rest, ctx);
  } catch (error) {
    ctx.writeErr(renderDiagnostic(error, { verbose }) + "\n");
    if (error instanceof UsageError) return 2;
    if (error instanceof UserError) return 1;
    ctx.writeErr("This is a bug in cargo-agents; please report it with the output of --verbose.\n");
    return 70;
  }
}

function selfCommand(): { command: string; args: string[] } {
  const exe = Deno.execPath();
  if (!isDenoRuntime(exe)) return { command: exe, args: [] };
  // Running from source: re-run the same entry point with the same permission set.
  const here = new URL(".", import.meta.url).pathname;
  return { command: exe, args: sourceRunArgs(here) };
}

/** Builds the real dependencies of {@link main} from `Deno`. */
export function realDeps(): MainDeps {
  const controller = new AbortController();
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    try {
      Deno.addSignalListener(sig, () => controller.abort(new Error(`received ${sig}`)));
    } catch {
      // SIGTERM listeners are unsupported on Windows; Ctrl-C still ends the process.
    }
  }
  const enc = new TextEncoder();
  const env = Deno.env.toObject();
  return {
    env,
    cwd: Deno.cwd(),
    homeDir: env.HOME ?? env.USERPROFILE ?? "",
    execPath: Deno.execPath(),
    selfCommand: selfCommand(),
    writeOut: (t) => void Deno.stdout.writeSync(enc.encode(t)),
    writeErr: (t) => writeStderr(enc.encode(t)),
    signal: controller.signal,
  };
}

/**
 * Writes `bytes` to stderr, best effort: stderr is for humans (the session log has every line), so when the
 * agent closed its end (`BrokenPipe`) or stderr is a full non-blocking pipe (`WouldBlock`) the rest of the
 * text is dropped instead of throwing into whatever logged (which ended `mcp-serve` with exit code 1).
 */
function writeStderr(bytes: Uint8Array): void {
  try {
    for (let at = 0, n = -1; at < bytes.length && n !== 0; at += n) {
      n = Deno.stderr.writeSync(bytes.subarray(at));
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.BrokenPipe || error instanceof Deno.errors.WouldBlock)) throw error;
  }
}

/**
 * A failure nothing caught (a rejected promise of a background task) still ends the process, but
 * through the secret registry: Deno's own report would print the raw message.
 */
function reportUncaught(error: unknown): void {
  const text = renderDiagnostic(error, { verbose: true });
  writeStderr(new TextEncoder().encode(maskSecrets(`internal error: ${text}\n`)));
  Deno.exit(70);
}

/**
 * Libraries that print (the SDK's `console.warn` about an OAuth error, for one) print through the
 * secret registry too: `console.log`/`info`/`debug` to stdout, `warn`/`error` to stderr, masked.
 * (`mcp-serve` sends them all to stderr: its stdout is JSON-RPC.)
 */
function maskConsole(): void {
  const encoder = new TextEncoder();
  const writer = (stream: typeof Deno.stdout | typeof Deno.stderr) => (...data: unknown[]) => {
    const text = data.map((d) => typeof d === "string" ? d : Deno.inspect(d)).join(" ");
    stream.writeSync(encoder.encode(maskSecrets(`${text}\n`)));
  };
  console.log = console.info = console.debug = writer(Deno.stdout);
  console.warn = console.error = writer(Deno.stderr);
}

if (import.meta.main && Deno.args[0] === "__sandbox-guest") {
  // The sandbox process (`lib/sandbox/guest/main.ts`): no command table, no permissions, frames on stdio.
  await (await import("./lib/sandbox/guest/main.ts")).serveGuest();
} else if (import.meta.main) {
  maskConsole();
  globalThis.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    reportUncaught(event.reason);
  });
  globalThis.addEventListener("error", (event) => {
    event.preventDefault();
    reportUncaught(event.error);
  });
  Deno.exit(await main(Deno.args, realDeps()));
}
