/**
 * Opening a URL in the user's browser without a shell: `open` on macOS, `rundll32
 * url.dll,FileProtocolHandler` on Windows, `xdg-open` elsewhere, or the program named by
 * `SYMPOSIUM_BROWSER` (`none` disables opening). The URL is one argument of its own, never parsed
 * by a shell, and only `http:`/`https:` URLs are opened (and `file:` URLs when the caller made the file,
 * `allowFile`: `cargo agents report --open`).
 *
 * @module
 */

/** Environment variable naming the program that opens URLs (`none` or empty: do not open). */
export const BROWSER_ENV_VAR = "SYMPOSIUM_BROWSER";

/** A program and its arguments. */
export interface BrowserCommand {
  command: string;
  args: string[];
}

/**
 * The command that opens `url`, or `undefined` when opening is disabled or the URL is not http(s)
 * (an authorization server could otherwise make us open `file:` URLs or pass an option).
 *
 * @param options.os The platform, as `Deno.build.os`.
 * @param options.env The environment (only {@link BROWSER_ENV_VAR} is read).
 * @param options.allowFile Also open a `file:` URL (one the caller wrote itself). Default false.
 */
export function browserCommand(
  url: string,
  options: { os: string; env: Readonly<Record<string, string>>; allowFile?: boolean },
): BrowserCommand | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const isFile = parsed.protocol === "file:" && options.allowFile === true;
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:" && !isFile) return undefined;
  const href = parsed.href;
  const override = options.env[BROWSER_ENV_VAR];
  if (override !== undefined) {
    return override === "" || override === "none" ? undefined : { command: override, args: [href] };
  }
  if (options.os === "darwin") return { command: "open", args: [href] };
  if (options.os === "windows") return { command: "rundll32", args: ["url.dll,FileProtocolHandler", href] };
  return { command: "xdg-open", args: [href] };
}

/**
 * Opens `url` in the browser and returns without waiting for the browser. Never throws: failing to
 * open is expected on headless machines and over SSH, where the printed URL is the way in.
 *
 * @param options.allowFile Also open a `file:` URL (a page the caller wrote). Default false.
 * @returns `true` when a program was started.
 */
export function openBrowser(
  url: string,
  options: { os?: string; env: Readonly<Record<string, string>>; allowFile?: boolean },
): boolean {
  const command = browserCommand(url, {
    os: options.os ?? Deno.build.os,
    env: options.env,
    allowFile: options.allowFile === true,
  });
  if (command === undefined) return false;
  try {
    const child = new Deno.Command(command.command, {
      args: command.args,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    child.status.catch(() => {}); // Its exit status does not matter.
    child.unref();
    return true;
  } catch {
    return false; // Not installed or not allowed: the URL was printed anyway.
  }
}
