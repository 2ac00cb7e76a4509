/**
 * How this program runs itself from source, exactly as the compiled binary behaves: `deno run` with
 * the permission set of `deno.json` (`-P`) and the V8 stack size the sandbox was measured with
 * (`lib/sandbox/protocol/limits.ts`). One definition for `main.ts` (the entry `sync` writes when running from
 * source), the tests and the benchmarks that start `main.ts` as a process.
 *
 * @module
 */

/**
 * Flags of `deno run` that make it behave as `deno compile` does (the compile task passes the same).
 * `-q` keeps Deno's own lines (the "permissions in the config file" warning, `Download ...` lines of
 * a fresh cache) off stderr, which agents show to users as server errors. `--stack-size` is in
 * KiB: 1800 keeps a deep parse inside QuickJS from aborting the process (the sandbox process gets it too).
 * `--max-semi-space-size` is in MiB: V8 otherwise grows its young generation to 3 × 16 MiB after a
 * burst of allocation (parsing a large tool cache, indexing it for search) and keeps it; with 4 MiB a
 * session holding a 10,000-tool catalog stays 55 MiB smaller, at no measured cost in speed
 * (`bench/search.ts`), and with 1 MiB a session after 1,000 `execute`s is 10 MiB smaller again
 * (`bench/perf.ts`; the sandbox processes get the flag too).
 * `--initial-old-space-size` (MiB) and `--heap-growing-percent`: V8 lets an old generation grow to up
 * to 4 × its live size before the next full collection; starting at 8 MiB and growing by 50 % keeps
 * each isolate (the main one, ~25 MiB live; a sandbox process's, ~8 MiB) nearer its live size: 6 MiB
 * less after 1,000 `execute`s, with no cost above the noise in CPU per `execute`, per call, at start or
 * while indexing a 10,000-tool catalog (`bench/perf.ts`, `bench/search.ts`). They set when a full
 * collection runs, not how large a heap may grow.
 * `--expose-gc` defines `gc()` in every isolate, for the sandbox processes' `HeapTrim`
 * (`lib/sandbox/guest/_heap_trim.ts`), which collects a sandbox heap while it is idle once its garbage grew 4 MiB:
 * 5-7 MiB less RSS after 1,000 `execute`s (growth from 50 executes 1.09-1.10x -> 1.06x), ~0.04 ms of
 * sandbox CPU per `execute`. Scripts run in QuickJS and cannot reach it.
 * `--unstable-lazy-dynamic-imports` (run only; the compile task does not pass it, a binary carries its
 * whole module graph): `deno run` otherwise reads and resolves the module graph of every `import("...")`
 * with a literal specifier before `main.ts` runs, i.e. of every command, the HTTP backend and OAuth,
 * which made `main.ts` start ~80 ms later (`bench/cold_start.ts`); with it, a module loads when it is
 * first imported.
 */
export const DENO_RUN_FLAGS: readonly string[] = Object.freeze([
  "-q",
  "-P",
  "--unstable-lazy-dynamic-imports",
  "--v8-flags=--stack-size=1800,--max-semi-space-size=1,--initial-old-space-size=8,--heap-growing-percent=50,--expose-gc",
]);

/**
 * The arguments after the `deno` executable that run `main.ts` of the checkout at `repoDir`.
 *
 * @param repoDir Absolute path of the checkout, with or without a trailing `/`.
 * @returns e.g. `["run", "-q", "-P", "--unstable-lazy-dynamic-imports", "--v8-flags=--stack-size=1800,--max-semi-space-size=1,--initial-old-space-size=8,--heap-growing-percent=50,--expose-gc", "--config",
 *   "/repo/deno.json", "/repo/main.ts"]`.
 * @example
 * ```ts
 * import { sourceRunArgs } from "./self_command.ts";
 * sourceRunArgs("/repo/")[6]; // "/repo/deno.json"
 * ```
 */
export function sourceRunArgs(repoDir: string): string[] {
  const dir = repoDir.endsWith("/") || repoDir.endsWith("\\") ? repoDir : `${repoDir}/`;
  return ["run", ...DENO_RUN_FLAGS, "--config", `${dir}deno.json`, `${dir}main.ts`];
}

/**
 * Whether `execPath` (e.g. `Deno.execPath()`) is the Deno runtime itself, i.e. this program runs from
 * source, rather than a compiled binary: its file name is `deno` or `deno.exe` (any case).
 */
export function isDenoRuntime(execPath: string): boolean {
  return /^deno(\.exe)?$/i.test(execPath.split(/[\\/]/).pop() ?? "");
}
