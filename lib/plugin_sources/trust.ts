/**
 * `<config>/trusted.toml`: the workspace manifests (and path or git crates' manifests) the user
 * trusted with `cargo agents trust`, each by path and SHA-256 of its content. A cloned repository
 * must not run a command on the user's machine because an agent was opened in it: a manifest's
 * servers start only while its content is exactly what was trusted. A trust file that others could
 * have written (a link, another owner, group- or world-writable) trusts nothing.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import { type Location, UserError } from "../diagnostics.ts";
import { denoFileSystem, describeFsError, type FileSystem } from "../file_system.ts";
import { isTable, parseTomlDocument } from "../toml_position.ts";
import type { TrustState } from "../plugins/mod.ts";
import { hashPinnedFile } from "./_pins.ts";

/** The trust file's name in the configuration directory. */
export const TRUST_FILE_NAME = "trusted.toml";

/** One trusted file. */
export interface TrustEntry {
  /** Absolute path, its folder's symbolic links resolved (see {@link trustKeyOf}). */
  path: string;
  /** SHA-256 of the file's bytes, lowercase hex. */
  sha256: string;
  /** When it was trusted, ISO 8601 (informational). */
  trustedAt?: string | undefined;
  /**
   * Files the manifest's servers run (`sh scripts/server.sh`), pinned with it: absolute real path and
   * SHA-256 of the bytes. Absent in records written before files were pinned (those load as before).
   */
  pins?: { path: string; sha256: string }[] | undefined;
}

/** What `trusted.toml` holds. */
export interface TrustStore {
  /** The trust file's path. */
  file: string;
  /** Trusted files by {@link TrustEntry.path}. */
  entries: Map<string, TrustEntry>;
  /** A broken or unsafe trust file: nothing is trusted and this says why. */
  problems: UserError[];
}

/**
 * SHA-256 of a text's UTF-8 bytes (what a strictly decoded file was read from), lowercase hex. Web
 * Crypto, not `node:crypto`, which would cost every `status` and session start ~60 ms to load.
 */
export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The path a file is trusted under: its folder's real path (symbolic links resolved) joined with its
 * own name, so a workspace reached through a linked folder is the same workspace, while a linked
 * manifest is trusted as the link (its content is what the hash covers).
 */
export async function trustKeyOf(file: string, fs: FileSystem = denoFileSystem): Promise<string> {
  try {
    return join(await fs.realPath(dirname(file)), basename(file));
  } catch {
    return file; // A folder that vanished: the path as given (it cannot match a trusted one anyway).
  }
}

/** Why the real trust file must not be believed (a link, another owner, writable by others), or `undefined`. */
function unsafeReason(file: string): string | undefined {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(file);
  } catch {
    return undefined; // Not on the real disk (an in-memory tree in tests) or gone: read as it is.
  }
  if (info.isSymlink) return "it is a symbolic link";
  if (Deno.build.os === "windows") return undefined;
  if (info.uid !== null && info.uid !== Deno.uid()) return "it belongs to another user";
  if (info.mode !== null && (info.mode & 0o022) !== 0) {
    return `others may write it (mode ${(info.mode & 0o777).toString(8)})`;
  }
  return undefined;
}

/**
 * Reads `<configDir>/trusted.toml`. A missing file trusts nothing, and so does a broken or unsafe one
 * (fails closed), with a problem: `TRUST_FILE_INVALID` or `TRUST_FILE_UNSAFE`.
 */
export async function readTrustStore(
  configDir: string,
  fs: FileSystem = denoFileSystem,
): Promise<TrustStore> {
  const file = join(configDir, TRUST_FILE_NAME);
  const store: TrustStore = { file, entries: new Map(), problems: [] };
  let text: string;
  try {
    text = await fs.readTextFile(file);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) return store;
    store.problems.push(
      new UserError(
        "TRUST_FILE_INVALID",
        `Cannot read ${file}: ${describeFsError(error)}; nothing is trusted`,
        {
          hint: "make the file readable by your user, or remove it and trust again",
        },
      ),
    );
    return store;
  }
  const unsafe = unsafeReason(file);
  if (unsafe !== undefined) {
    store.problems.push(
      new UserError("TRUST_FILE_UNSAFE", `Cannot use ${file}: ${unsafe}; nothing is trusted`, {
        hint: `remove it and run \`cargo agents trust\` again (it writes the file with mode 0600)`,
      }),
    );
    return store;
  }
  try {
    const doc = parseTomlDocument(text, file, { code: "TRUST_FILE_INVALID", what: "trust file" });
    const list = doc.value.trusted ?? [];
    if (!Array.isArray(list)) {
      throw new UserError("TRUST_FILE_INVALID", `Cannot read ${file}: "trusted" is not a list`);
    }
    list.forEach((entry, i) => {
      const location: Location = { file, ...doc.index.locate(["trusted", i]) };
      if (
        !isTable(entry) || typeof entry.path !== "string" || typeof entry.sha256 !== "string" ||
        !/^[0-9a-f]{64}$/.test(entry.sha256)
      ) {
        store.problems.push(
          new UserError(
            "TRUST_FILE_INVALID",
            `Cannot read entry ${i + 1} of ${file}: it needs path and sha256`,
            {
              hint: "remove the entry and run `cargo agents trust` again",
              location,
            },
          ),
        );
        return;
      }
      const pins = entry.pins ?? [];
      if (
        !Array.isArray(pins) ||
        !pins.every((p) =>
          isTable(p) && typeof p.path === "string" && /^[0-9a-f]{64}$/.test(String(p.sha256))
        )
      ) {
        store.problems.push(
          new UserError("TRUST_FILE_INVALID", `Cannot read the pins of entry ${i + 1} of ${file}`, {
            hint: "remove the entry and run `cargo agents trust` again",
            location,
          }),
        );
        return;
      }
      store.entries.set(entry.path, {
        path: entry.path,
        sha256: entry.sha256,
        ...(typeof entry["trusted-at"] === "string" ? { trustedAt: entry["trusted-at"] } : {}),
        ...("pins" in entry
          ? { pins: pins.map((p) => ({ path: String(p.path), sha256: String(p.sha256) })) }
          : {}),
      });
    });
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    store.entries.clear();
    store.problems.push(
      new UserError(error.code, `${error.message}; nothing is trusted`, {
        hint: "fix or remove the file, then run `cargo agents trust` again",
        location: error.location,
      }),
    );
  }
  return store;
}

/**
 * The trust state of a plugin built from `files` (each `key` from {@link trustKeyOf}, `text` its content):
 * `trusted` when every file is trusted with its current hash and every file pinned with it
 * ({@link TrustEntry.pins}) still has its pinned hash, `changed` when one differs, else `untrusted`.
 */
export async function trustStateOf(
  store: TrustStore,
  files: readonly { key: string; text: string }[],
): Promise<TrustState> {
  return (await trustDetailOf(store, files)).state;
}

/**
 * {@link trustStateOf} with what changed: `changes` holds one phrase per file whose content differs
 * from what was trusted (`/ws/scripts/server.sh changed`, `... is gone`); empty unless `changed`.
 */
export async function trustDetailOf(
  store: TrustStore,
  files: readonly { key: string; text: string }[],
): Promise<{ state: TrustState; changes: string[] }> {
  const changes: string[] = [];
  for (const { key, text } of files) {
    const entry = store.entries.get(key);
    if (entry === undefined) return { state: "untrusted", changes: [] };
    if (entry.sha256 !== await sha256Hex(text)) changes.push(`${key} changed`);
    for (const pin of entry.pins ?? []) {
      const now = await hashPinnedFile(pin.path);
      if (now !== pin.sha256) {
        changes.push(
          `${pin.path} ${now === undefined ? "is gone or unreadable" : "changed"} (pinned with ${key})`,
        );
      }
    }
  }
  return { state: changes.length > 0 ? "changed" : "trusted", changes };
}

/** The text of a trust file holding `entries` (sorted by path). */
export function renderTrustFile(entries: readonly TrustEntry[]): string {
  const lines = [
    "# Written by `cargo agents trust`: the plugin manifests whose MCP servers may start, each by path and",
    "# SHA-256 of its content, with the files its servers run (pins). A manifest or pinned file that changes is",
    "# untrusted again. `cargo agents trust --revoke` removes one.",
  ];
  for (const entry of [...entries].sort((a, b) => a.path.localeCompare(b.path))) {
    lines.push("", "[[trusted]]", `path = ${JSON.stringify(entry.path)}`, `sha256 = "${entry.sha256}"`);
    if (entry.trustedAt !== undefined) lines.push(`trusted-at = "${entry.trustedAt}"`);
    if (entry.pins !== undefined) lines.push(`pins = [${entry.pins.map(pinText).join(", ")}]`);
  }
  return lines.join("\n") + "\n";
}

function pinText(pin: { path: string; sha256: string }): string {
  return `{ path = ${JSON.stringify(pin.path)}, sha256 = "${pin.sha256}" }`;
}

/** The command that trusts `file`, as messages show it. */
export function trustCommand(file: string): string {
  return `cargo agents trust ${
    /^[A-Za-z0-9_@%+=:,./-]+$/.test(file) ? file : `'${file.replaceAll("'", `'\\''`)}'`
  }`;
}
