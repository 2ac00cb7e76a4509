/**
 * The contract every agent-config editor (JSON/JSONC, TOML, YAML) fulfils, and the errors they
 * raise. An editor changes one named entry inside one container and keeps every other byte.
 *
 * @module
 */
import { type Location, UserError } from "../../diagnostics.ts";
import { offsetToLineColumn } from "./_text.ts";

/** Where the entry lives: the keys of its container (e.g. `["mcpServers"]`) and its own name. */
export interface EntryAddress {
  /** Keys from the document root to the servers object, each one literal (never split on `.`). */
  containerPath: readonly string[];
  /** The entry's key inside the container, e.g. `"symposium"`. */
  name: string;
}

/**
 * An editor for one file format. All methods are pure: text in, text out.
 *
 * Every method throws {@link ConfigSyntaxError} for a file that does not parse, and
 * {@link ConfigShapeError} when the document cannot hold the entry (the root or a container on the
 * path is not a table/object, or the entry is written in a layout the editor does not change).
 */
export interface ConfigFormat {
  /** Short name for messages, e.g. `"JSON"`. */
  readonly label: string;
  /**
   * Parses the whole document into plain values. Empty (or blank) text reads as an empty object.
   *
   * @param file Path shown in diagnostics.
   */
  read(text: string, file: string): unknown;
  /**
   * Returns `text` with the entry set to `value`: inserted when missing, its value replaced when
   * it differs, `text` itself (the same string) when it is already equal.
   */
  setEntry(text: string, address: EntryAddress, value: unknown, file: string): string;
  /**
   * Returns `text` without the entry (and without containers on its path that are left empty and
   * hold no comment); `text` itself when there is no entry.
   */
  removeEntry(text: string, address: EntryAddress, file: string): string;
}

/** A config file that does not parse. `code: "SYNC_CONFIG_SYNTAX"`, with the 1-based position. */
export class ConfigSyntaxError extends UserError {
  override name = "ConfigSyntaxError";
  constructor(file: string, detail: string, location: Omit<Location, "file">, format: string) {
    super("SYNC_CONFIG_SYNTAX", `Cannot read "${file}": invalid ${format}: ${detail}`, {
      location: { file, ...location },
      hint: "fix the file by hand (it was left untouched), then run `cargo-agents sync` again",
    });
  }
}

/**
 * A config file that parses but cannot take the entry as it is laid out, e.g. `"mcpServers": []`.
 * `code: "SYNC_CONFIG_SHAPE"`.
 */
export class ConfigShapeError extends UserError {
  override name = "ConfigShapeError";
  constructor(file: string, detail: string, location: Omit<Location, "file"> | undefined, hint?: string) {
    super("SYNC_CONFIG_SHAPE", `Cannot edit "${file}": ${detail}`, {
      location: location === undefined ? undefined : { file, ...location },
      hint: hint ?? "fix the file by hand (it was left untouched), then run `cargo-agents sync` again",
    });
  }
}

/**
 * The error for an entry whose surroundings sync cannot splice safely (the edit would not parse back as
 * intended): names the container and tells the user to edit the entry by hand.
 *
 * @param containerPath Path of the object or mapping holding the entry.
 * @param entryPath Path of the entry itself.
 */
export function uneditableLayoutError(
  file: string,
  containerPath: readonly string[],
  entryPath: readonly string[],
): ConfigShapeError {
  return new ConfigShapeError(
    file,
    `"${describePath(containerPath)}" is laid out in a way sync cannot edit safely`,
    undefined,
    `edit the "${describePath(entryPath)}" entry by hand; the file was left untouched`,
  );
}

/** The location of `offset` in `text`, for {@link ConfigSyntaxError} and {@link ConfigShapeError}. */
export function positionAt(text: string, offset: number): Omit<Location, "file"> {
  return offsetToLineColumn(text, offset);
}

/** Renders a dotted key path for messages: `mcp.servers`, `"amp.mcpServers"`. */
export function describePath(path: readonly string[]): string {
  return path.map((k) => (/^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k))).join(".");
}
