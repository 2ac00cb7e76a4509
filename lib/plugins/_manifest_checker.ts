/**
 * The checker behind `parseManifest()`: walks a parsed TOML document of a `SYMPOSIUM.toml` and
 * records every problem with its position (private to `lib/plugins/`).
 *
 * @module
 */
import { type Location, printable, UserError } from "../diagnostics.ts";
import { parseDependsOn, parsePredicate } from "../workspace/mod.ts";
import { isTable, suggestKey, type TomlDocument, type TomlPath } from "../toml_position.ts";
import {
  CLIENT_METADATA_URL_RULE,
  CRATE_REFERENCE_KEYS,
  describe,
  FOREIGN_PLUGIN_KEYS,
  MAX_TIMEOUT_SECS,
  PLUGIN_KEYS,
  REMOTE_ONLY_KEYS,
  SERVER_KEYS,
  STDIO_KEYS,
  UNSUPPORTED_SERVER_KEYS,
  type ValueRule,
} from "./_manifest_keys.ts";
import {
  type CrateReference,
  ManifestError,
  type ManifestNote,
  type ManifestOptions,
  type McpServerDecl,
  type PluginManifest,
  type RemoteServerDecl,
  type ServerDeclBase,
} from "./manifest_types.ts";

/**
 * What a server name may be: 1 to 64 ASCII letters, digits, `_` and `-`, starting with a letter (so it
 * can be shown as `[name]` and used as a script global, and never holds `]`, a space or a control character).
 */
export const SERVER_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** Thrown by the checker to stop checking one unit (a key, a server) after recording its problem. */
class Abandon extends Error {}

/** Validates one manifest document; {@link Checker.plugin} returns it or throws every problem. */
export class Checker {
  #doc: TomlDocument;
  #file: string;
  #label = "plugin manifest";
  #problems: ManifestError[] = [];

  #options: ManifestOptions;

  constructor(doc: TomlDocument, file: string, options: ManifestOptions = {}) {
    this.#doc = doc;
    this.#file = file;
    this.#options = options;
  }

  plugin(): PluginManifest {
    const top = this.#doc.value;
    if (typeof top.name === "string" && top.name.trim() !== "") {
      // Shown in every diagnostic, on stderr too: its control characters are shown escaped.
      this.#label = `plugin ${printable(JSON.stringify(top.name.slice(0, 80))).replace(/\\"/g, '"')}`;
    } else if (this.#options.defaultName !== undefined && !("name" in top)) {
      this.#label = `plugin ${printable(JSON.stringify(this.#options.defaultName)).replace(/\\"/g, '"')}`;
    }
    const notes: ManifestNote[] = [];
    for (const key of Object.keys(top)) {
      if ((PLUGIN_KEYS as readonly string[]).includes(key)) continue;
      const foreign = FOREIGN_PLUGIN_KEYS[key];
      if (foreign !== undefined) {
        notes.push({ key, text: foreign, location: this.#location([key]) });
        continue;
      }
      this.#check(undefined, () => {
        if (key === "crates") {
          this.#fail(
            "MANIFEST_UNKNOWN_KEY",
            [key],
            "the `crates` field has been renamed; use `depends-on` instead",
            {},
            "key",
          );
        }
        this.#unknownKey([key], [...PLUGIN_KEYS, ...Object.keys(FOREIGN_PLUGIN_KEYS)]);
      });
    }
    const name = this.#check("", () => {
      if (!("name" in top)) {
        if (this.#options.defaultName !== undefined) return this.#options.defaultName;
        this.#fail("MANIFEST_MISSING_KEY", [], '"name" is missing', {
          hint: 'add name = "<plugin name>" at the top of the file',
        });
      }
      return this.#pluginName(this.#nonEmptyString(top.name, ["name"], "name"));
    });
    const dependsOn = this.#dependsOn(top["depends-on"], ["depends-on"]);
    const predicates = this.#predicates(top.predicates, ["predicates"]);
    const plugins = this.#crateReferences(top.plugins);
    const servers = top.mcp_servers;
    const serversOk = this.#check(false, () => {
      if (servers !== undefined && (!Array.isArray(servers) || !servers.every(isTable))) {
        this.#fail("MANIFEST_BAD_VALUE", ["mcp_servers"], "`mcp_servers` must be an array of tables", {
          hint: "declare each server under its own [[mcp_servers]] header",
        });
      }
      return true;
    });
    const mcpServers: McpServerDecl[] = [];
    // A written but invalid plugin gate is reported once, not again for every server.
    const pluginGated = "depends-on" in top || "predicates" in top || this.#options.requireGate === false;
    ((serversOk ? servers ?? [] : []) as Record<string, unknown>[]).forEach((entry, i) => {
      const server = this.#server(entry, i, pluginGated);
      if (server === undefined) return;
      if (mcpServers.some((s) => s.name === server.name)) {
        this.#check(undefined, () =>
          this.#fail(
            "MANIFEST_DUPLICATE_SERVER",
            ["mcp_servers", i, "name"],
            `mcp server "${server.name}" is declared twice`,
            { hint: "give each [[mcp_servers]] entry its own name" },
          ));
        return;
      }
      mcpServers.push(server);
    });
    const [first] = this.#problems;
    if (first !== undefined) {
      throw new ManifestError(first.code, first.message, {
        hint: first.hint,
        location: first.location,
        problems: [...this.#problems],
      });
    }
    return {
      name,
      dependsOn,
      mcpServers,
      ...(predicates !== undefined ? { predicates } : {}),
      ...(plugins.length > 0 ? { plugins } : {}),
      ...(notes.length > 0 ? { notes } : {}),
    };
  }

  /** `[[plugins]]` entries: `source.cargo = "name"` or `{ name, version }`, optional `depends-on`/`predicates`. */
  #crateReferences(value: unknown): CrateReference[] {
    if (value === undefined) return [];
    const ok = this.#check(false, () => {
      if (!Array.isArray(value) || !value.every(isTable)) {
        this.#fail("MANIFEST_BAD_VALUE", ["plugins"], "`plugins` must be an array of tables", {
          hint: 'declare each chained plugin under its own [[plugins]] header with source.cargo = "<crate>"',
        });
      }
      return true;
    });
    if (!ok) return [];
    const out: CrateReference[] = [];
    (value as Record<string, unknown>[]).forEach((entry, i) => {
      const at = (...rest: (string | number)[]): TomlPath => ["plugins", i, ...rest];
      const before = this.#problems.length;
      for (const key of Object.keys(entry)) {
        if (!CRATE_REFERENCE_KEYS.includes(key)) {
          this.#check(undefined, () => this.#unknownKey(at(key), CRATE_REFERENCE_KEYS, " in [[plugins]]"));
        }
      }
      const ref = this.#check(undefined, (): CrateReference | undefined => {
        const source = entry.source;
        if (!isTable(source) || !("cargo" in source)) {
          const other = isTable(source) ? Object.keys(source)[0] : undefined;
          this.#fail(
            "MANIFEST_UNSUPPORTED_KEY",
            other === undefined ? at() : at("source", other),
            other === undefined
              ? "[[plugins]] entry has no `source.cargo`"
              : `[[plugins]] source \`${other}\` is not supported; only \`source.cargo\` is`,
            { hint: 'write source.cargo = "<crate name>"' },
            "key",
          );
        }
        const cargo = (source as Record<string, unknown>).cargo;
        if (typeof cargo === "string" && cargo.trim() !== "") {
          return { crate: cargo, location: this.#location(at()) };
        }
        if (isTable(cargo) && typeof cargo.name === "string" && cargo.name.trim() !== "") {
          for (const key of Object.keys(cargo)) {
            if (key !== "name" && key !== "version") {
              this.#unknownKey(at("source", "cargo", key), ["name", "version"]);
            }
          }
          if (cargo.version !== undefined && typeof cargo.version !== "string") {
            this.#fail("MANIFEST_BAD_VALUE", at("source", "cargo", "version"), "`version` must be a string");
          }
          return {
            crate: cargo.name,
            ...(typeof cargo.version === "string" ? { version: cargo.version } : {}),
            location: this.#location(at()),
          };
        }
        return this.#fail(
          "MANIFEST_BAD_VALUE",
          at("source", "cargo"),
          `\`source.cargo\` must be a crate name or { name = "\u2026", version = "\u2026" }, not ${
            describe(cargo)
          }`,
        );
      });
      const dependsOn = this.#dependsOn(entry["depends-on"], at("depends-on"));
      const predicates = this.#predicates(entry.predicates, at("predicates"));
      if (ref === undefined || this.#problems.length !== before) return;
      out.push({
        ...ref,
        ...(dependsOn !== undefined ? { dependsOn } : {}),
        ...(predicates !== undefined ? { predicates } : {}),
      });
    });
    return out;
  }

  /** Each predicate parsed on its own, so every bad one is reported; unknown names are not errors. */
  #predicates(value: unknown, path: TomlPath): string[] | undefined {
    if (value === undefined) return undefined;
    const list = this.#check(undefined, () => this.#stringList(value, path, "predicates"));
    if (list === undefined) return [];
    return list.filter((text, i) =>
      this.#check(false, () => {
        try {
          parsePredicate(text);
        } catch (error) {
          if (!(error instanceof UserError)) throw error;
          this.#fail(error.code, [...path, i], error.message.replace(/^Cannot read /, "invalid "), {
            hint: error.hint,
          });
        }
        return true;
      })
    );
  }

  /** `undefined` when the entry has problems (all of them recorded). */
  #server(entry: Record<string, unknown>, i: number, pluginGated: boolean): McpServerDecl | undefined {
    const before = this.#problems.length;
    const at = (key?: string): TomlPath => key === undefined ? ["mcp_servers", i] : ["mcp_servers", i, key];
    const where = typeof entry.name === "string"
      ? `mcp server "${entry.name}"`
      : `[[mcp_servers]] entry ${i + 1}`;
    for (const key of Object.keys(entry)) {
      if (SERVER_KEYS.includes(key)) continue;
      this.#check(undefined, () => {
        const unsupported = UNSUPPORTED_SERVER_KEYS[key];
        if (unsupported) {
          this.#fail(
            "MANIFEST_UNSUPPORTED_KEY",
            at(key),
            `${where} sets \`${key}\`, which cargo-agents does not support`,
            { hint: unsupported },
            "key",
          );
        }
        if (key === "type") {
          this.#fail("MANIFEST_UNKNOWN_KEY", at(key), `unknown key "type" in ${where}`, {
            hint:
              'a server with `url` is remote; remove `type` (set `transport = "sse"` only for an SSE server)',
          }, "key");
        }
        this.#unknownKey(at(key), SERVER_KEYS, ` in ${where}`);
      });
    }
    // A misspelled key (`comand`, `depends_on`) already explains a missing one: report it alone.
    const keysOk = this.#problems.length === before;
    const name = this.#check("", () => {
      if (!("name" in entry)) {
        this.#fail("MANIFEST_MISSING_KEY", at(), `${where} has no "name"`, {
          hint: 'add name = "<server name>" to the entry',
        });
      }
      return this.#serverName(this.#nonEmptyString(entry.name, at("name"), "name"), at("name"));
    });
    const label = name === "" ? where : `mcp server "${name}"`;
    const has = (key: string) => key in entry;
    const list = (key: string) => this.#check(undefined, () => this.#stringList(entry[key], at(key), key));
    const base: ServerDeclBase = {
      name,
      dependsOn: this.#dependsOn(entry["depends-on"], at("depends-on")),
      startupTimeoutSecs: this.#check(
        undefined,
        () => this.#timeout(entry["startup-timeout-secs"], at("startup-timeout-secs")),
      ),
      toolCallTimeoutSecs: this.#check(
        undefined,
        () => this.#timeout(entry["tool-call-timeout-secs"], at("tool-call-timeout-secs")),
      ),
      enabledTools: list("enabled-tools"),
      disabledTools: list("disabled-tools"),
      confirmTools: list("confirm-tools"),
      observeResults: has("observe-results")
        ? this.#check(
          undefined,
          () => this.#boolean(entry["observe-results"], at("observe-results"), "observe-results"),
        )
        : undefined,
      predicates: this.#predicates(entry.predicates, at("predicates")),
      location: this.#location(at()),
    };
    this.#check(undefined, () => {
      if (has("enabled-tools") && has("disabled-tools")) {
        this.#conflict(
          at("disabled-tools"),
          `${label} sets both \`enabled-tools\` and \`disabled-tools\`; use one or the other`,
        );
      }
    });
    this.#check(undefined, () => {
      if (has("url")) {
        if (has("command")) {
          this.#conflict(
            at("command"),
            `${label} sets both \`url\` and a local command; a server is reached one way or the other`,
          );
        }
        const local = STDIO_KEYS.find(has);
        if (local) {
          this.#conflict(
            at(local),
            `${label} sets \`${local}\` alongside \`url\`; it applies only to a server run as a child process`,
          );
        }
      } else {
        const remote = REMOTE_ONLY_KEYS.find(has);
        if (remote) this.#conflict(at(remote), `${label} sets \`${remote}\` without a \`url\``);
        if (!has("command") && keysOk) {
          this.#fail("MANIFEST_MISSING_KEY", at(), `${label} needs a \`command\` or a \`url\``, {
            hint: 'add command = "<program>" for a local server or url = "https://\u2026" for a remote one',
          });
        }
      }
    });
    if (!pluginGated && !has("depends-on") && !has("predicates") && keysOk) {
      this.#check(
        undefined,
        () =>
          this.#fail("MANIFEST_NO_DEPENDENCY", at(), `${label} references no dependency`, {
            hint: 'add depends-on = ["<crate>"] to the server or the plugin ("*" applies everywhere)',
          }),
      );
    }
    const decl = has("url") ? this.#remote(entry, base, at) : {
      ...base,
      transport: "stdio" as const,
      // A missing `command` is reported above (or explained by a misspelled key).
      command: has("command")
        ? this.#check("", () => this.#nonEmptyString(entry.command, at("command"), "command"))
        : "",
      args: this.#check(undefined, () => this.#stringList(entry.args, at("args"), "args")) ?? [],
      env: this.#check(undefined, () => this.#stringTable(entry.env, at("env"), "env")) ?? {},
      envPassthrough: this.#check(
        undefined,
        () => this.#stringList(entry["env-passthrough"], at("env-passthrough"), "env-passthrough"),
      ) ??
        [],
      inheritEnv: this.#check(
        false,
        () => this.#boolean(entry["inherit-env"], at("inherit-env"), "inherit-env"),
      ),
      cwd: entry.cwd === undefined
        ? undefined
        : this.#check(undefined, () => this.#nonEmptyString(entry.cwd, at("cwd"), "cwd")),
    };
    return this.#problems.length === before ? decl : undefined;
  }

  #remote(
    entry: Record<string, unknown>,
    base: ServerDeclBase,
    at: (key?: string) => TomlPath,
  ): RemoteServerDecl {
    const transport = entry.transport ?? "http";
    this.#check(undefined, () => {
      if (transport !== "http" && transport !== "sse") {
        this.#fail(
          "MANIFEST_BAD_VALUE",
          at("transport"),
          `mcp server "${base.name}" has unknown transport ${
            JSON.stringify(transport)
          }; expected "http" or "sse"`,
          { hint: "remove `transport` for streamable HTTP (the default)" },
        );
      }
    });
    this.#check(undefined, () => {
      if ("client-secret" in entry && !("client-id" in entry)) {
        this.#conflict(
          at("client-secret"),
          `mcp server "${base.name}" sets \`client-secret\` without \`client-id\``,
        );
      }
    });
    const optional = (key: string, rule?: ValueRule) =>
      entry[key] === undefined ? undefined : this.#check(undefined, () => {
        const value = this.#nonEmptyString(entry[key], at(key), key);
        if (rule && !rule.pattern.test(value)) this.#fail("MANIFEST_BAD_VALUE", at(key), rule.problem, rule);
        return value;
      });
    return {
      ...base,
      transport: transport as "http" | "sse",
      url: this.#check("", () => this.#nonEmptyString(entry.url, at("url"), "url")),
      headers: this.#check(undefined, () => this.#stringTable(entry.headers, at("headers"), "headers")) ?? {},
      clientId: optional("client-id"),
      clientSecret: optional("client-secret"),
      scopes: this.#check(undefined, () => this.#stringList(entry.scopes, at("scopes"), "scopes")),
      clientMetadataUrl: optional("client-metadata-url", CLIENT_METADATA_URL_RULE),
    };
  }

  /** Checks each atom on its own, so every bad atom is reported. */
  #dependsOn(value: unknown, path: TomlPath): string[] | undefined {
    if (value === undefined) return undefined;
    const atoms = typeof value === "string" ? [value] : value;
    const shapeOk = this.#check(false, () => {
      if (!Array.isArray(atoms) || atoms.length === 0) {
        this.#fail(
          "MANIFEST_BAD_VALUE",
          path,
          `\`depends-on\` must be a crate atom or a non-empty list of them, not ${describe(value)}`,
          { hint: 'write depends-on = ["serde"] or depends-on = "*"' },
        );
      }
      return true;
    });
    if (!shapeOk) return [];
    return (atoms as unknown[]).map((atom, i) => {
      const atomPath = typeof value === "string" ? path : [...path, i];
      return this.#check("", () => {
        if (typeof atom !== "string") {
          this.#fail(
            "MANIFEST_BAD_VALUE",
            atomPath,
            `\`depends-on\` entries must be strings, not ${describe(atom)}`,
          );
        }
        try {
          parseDependsOn(atom as string);
        } catch (error) {
          if (!(error instanceof UserError)) throw error;
          this.#fail(error.code, atomPath, error.message.replace(/^Cannot read /, "invalid "), {
            hint: error.hint,
          });
        }
        return atom as string;
      });
    });
  }

  #timeout(value: unknown, path: TomlPath): number | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_TIMEOUT_SECS) {
      this.#fail(
        "MANIFEST_BAD_VALUE",
        path,
        `\`${path.at(-1)}\` must be a whole number of seconds from 1 to ${MAX_TIMEOUT_SECS}, not ${
          describe(value)
        }`,
        { hint: `write e.g. ${path.at(-1)} = 60, without quotes` },
      );
    }
    return value as number;
  }

  #boolean(value: unknown, path: TomlPath, key: string): boolean {
    if (value !== undefined && typeof value !== "boolean") {
      this.#fail("MANIFEST_BAD_VALUE", path, `\`${key}\` must be true or false, not ${describe(value)}`, {
        hint: `write ${key} = true, without quotes`,
      });
    }
    return value === true;
  }

  /**
   * A plugin's `name` is printed in every line about its servers (Problems the agent reads, `status`):
   * {@link SERVER_NAME} only, so a manifest cannot write a forged line or an escape code there.
   */
  #pluginName(name: string): string {
    if (!SERVER_NAME.test(name)) {
      this.#fail(
        "MANIFEST_BAD_VALUE",
        ["name"],
        `plugin name ${
          printable(JSON.stringify(name.slice(0, 80)))
        } is not 1 to 64 ASCII letters, digits, "_" and "-" starting with a letter`,
        { hint: 'name the plugin like "github" or "rust-docs"' },
      );
    }
    return name;
  }

  /**
   * A server name is its label before every question and log line it relays (`[github] ...`) and its
   * script global: {@link SERVER_NAME} only, and never the meta-server's own `symposium`.
   */
  #serverName(name: string, path: TomlPath): string {
    if (!SERVER_NAME.test(name) || name.toLowerCase() === "symposium") {
      const shown = printable(JSON.stringify(name.slice(0, 80)));
      this.#fail(
        "MANIFEST_BAD_VALUE",
        path,
        name.toLowerCase() === "symposium"
          ? `server name ${shown} is the meta-server's own name`
          : `server name ${shown} is not 1 to 64 ASCII letters, digits, "_" and "-" starting with a letter`,
        { hint: 'name the server like "github" or "rust-docs"' },
      );
    }
    return name;
  }

  #nonEmptyString(value: unknown, path: TomlPath, key: string): string {
    if (typeof value !== "string" || value.trim() === "") {
      this.#fail("MANIFEST_BAD_VALUE", path, `\`${key}\` must be a non-empty string, not ${describe(value)}`);
    }
    return value as string;
  }

  #stringList(value: unknown, path: TomlPath, key: string): string[] | undefined {
    if (value === undefined) return undefined;
    if (!Array.isArray(value)) {
      this.#fail("MANIFEST_BAD_VALUE", path, `\`${key}\` must be a list of strings, not ${describe(value)}`, {
        hint: `write ${key} = ["\u2026", "\u2026"]`,
      });
    }
    (value as unknown[]).forEach((item, i) => {
      if (typeof item !== "string") {
        this.#fail(
          "MANIFEST_BAD_VALUE",
          [...path, i],
          `\`${key}\` must be a list of strings; item ${i + 1} is ${describe(item)}`,
          { hint: "quote it" },
        );
      }
    });
    return [...(value as string[])];
  }

  #stringTable(value: unknown, path: TomlPath, key: string): Record<string, string> | undefined {
    if (value === undefined) return undefined;
    if (!isTable(value)) {
      this.#fail(
        "MANIFEST_BAD_VALUE",
        path,
        `\`${key}\` must be a table of strings, not ${describe(value)}`,
        { hint: `write ${key} = { NAME = "value" }` },
      );
    }
    const table = value as Record<string, unknown>;
    for (const [k, v] of Object.entries(table)) {
      if (typeof v !== "string") {
        this.#fail(
          "MANIFEST_BAD_VALUE",
          [...path, k],
          `\`${key}.${k}\` must be a string, not ${describe(v)}`,
          { hint: "quote the value" },
        );
      }
    }
    return { ...(table as Record<string, string>) };
  }

  #unknownKey(path: TomlPath, known: readonly string[], where = ""): never {
    const key = String(path.at(-1));
    const near = suggestKey(key, known);
    return this.#fail("MANIFEST_UNKNOWN_KEY", path, `unknown key "${key}"${where}`, {
      hint: near ? `did you mean "${near}"?` : `known keys here: ${known.join(", ")}`,
    }, "key");
  }

  #conflict(path: TomlPath, message: string): never {
    return this.#fail("MANIFEST_CONFLICT", path, message, {}, "key");
  }

  #location(path: TomlPath): Location {
    return { file: this.#file, ...this.#doc.index.locate(path) };
  }

  /** Runs one independent check; a problem it finds is recorded and `fallback` returned. */
  #check<T>(fallback: T, check: () => T): T {
    try {
      return check();
    } catch (error) {
      if (error instanceof Abandon) return fallback;
      throw error;
    }
  }

  /**
   * Records a problem and abandons the current check. `at: "value"` (the default) points at the
   * value written for `path`; `"key"` at the key itself (or the table when it has no key).
   */
  #fail(
    code: string,
    path: TomlPath,
    what: string,
    options: { hint?: string | undefined } = {},
    at: "key" | "value" = "value",
  ): never {
    const position = at === "value" ? this.#doc.index.locateValue(path) : this.#doc.index.locate(path);
    this.#problems.push(
      new ManifestError(code, `Cannot load ${this.#label}: ${what}`, {
        hint: options.hint,
        location: { file: this.#file, ...position },
      }),
    );
    throw new Abandon();
  }
}
