// Type-checks every generated declaration block of the corpus with a real `deno check` (strict options,
// one process for all files), each followed by call sites: one per declared key, passing a minimal argument
// object derived from the tool's input schema, plus one call without arguments that must be rejected when
// the tool requires some (`@ts-expect-error`, so a parameter type degraded to `unknown` fails the check).
import assert from "node:assert/strict";
import { renderDeclarations, type ToolInfo } from "../../lib/declarations/mod.ts";
import { inputArity } from "../../lib/declarations/_schema_shape.ts";
import { namespaceKey } from "../../lib/plugins/server_spec.ts";
import { buildBindingTable } from "../../lib/declarations/tool_binding.ts";
import { loadCorpus } from "../_fakes_declarations.ts";

const STRICT_CONFIG = {
  compilerOptions: {
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    noImplicitOverride: true,
    noFallthroughCasesInSwitch: true,
  },
};

/** A minimal JSON value valid for `schema` (required properties only), found independently of the renderer. */
function sample(root: unknown, schema: unknown, depth = 0): unknown {
  if (depth > 40 || schema === true || schema === undefined) return null;
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return null;
  const s = schema as Record<string, unknown>;
  if (typeof s.$ref === "string") {
    if (!s.$ref.startsWith("#")) return null;
    let node: unknown = root;
    for (const part of s.$ref.slice(1).split("/").slice(1)) {
      node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    }
    return sample(root, node, depth + 1);
  }
  if ("const" in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  const branches = (Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined) as
    | Array<Record<string, unknown>>
    | undefined;
  if (branches !== undefined) {
    const { anyOf: _a, oneOf: _o, ...own } = s;
    const first = branches.find((b) => b !== null && typeof b === "object") ?? {};
    const merged = Object.keys(own).some((k) =>
        ["type", "properties", "required"].includes(k)
      ) && !("$ref" in first)
      ? {
        ...own,
        ...first,
        properties: { ...(own.properties as object ?? {}), ...(first.properties as object ?? {}) },
        required: [...(own.required as string[] ?? []), ...(first.required as string[] ?? [])],
      }
      : first;
    return sample(root, merged, depth + 1);
  }
  if (Array.isArray(s.allOf)) {
    const { allOf, ...own } = s;
    const parts = [own, ...allOf].map((part) => sample(root, part, depth + 1));
    const objects = parts.filter((p) => p !== null && typeof p === "object" && !Array.isArray(p));
    return objects.length > 0 ? Object.assign({}, ...objects) : parts.find((p) => p !== null) ?? null;
  }
  const types = Array.isArray(s.type) ? s.type : [s.type];
  const type = types.find((t) => t !== "null") ??
    ("properties" in s || "required" in s || "additionalProperties" in s ? "object" : types[0]);
  switch (type) {
    case "string":
      return "x";
    case "number":
    case "integer":
      return 1;
    case "boolean":
      return false;
    case "array": {
      const prefix = (s.prefixItems ?? (Array.isArray(s.items) ? s.items : undefined)) as
        | unknown[]
        | undefined;
      const count = typeof s.minItems === "number" ? s.minItems : 0;
      if (prefix !== undefined) return prefix.slice(0, count).map((item) => sample(root, item, depth + 1));
      return Array.from({ length: count }, () => sample(root, s.items, depth + 1));
    }
    case "object": {
      const properties = (s.properties ?? {}) as Record<string, unknown>;
      const required = (s.required ?? []) as string[];
      return Object.fromEntries(required.map((name) => [name, sample(root, properties[name], depth + 1)]));
    }
    default:
      return null;
  }
}

function callSites(server: string, tools: readonly ToolInfo[]): string {
  const ns = namespaceKey(server);
  const byWire = new Map<string, ToolInfo>();
  for (const tool of tools) if (!byWire.has(tool.name)) byWire.set(tool.name, tool);
  const lines = ["export async function callEveryTool(): Promise<void> {"];
  buildBindingTable([...byWire.keys()]).entries.forEach(({ key, wire }, i) => {
    const tool = byWire.get(wire)!;
    const arity = inputArity(tool.inputSchema);
    const member = `${ns}[${JSON.stringify(key)}]`;
    const args = arity === "none" ? "" : JSON.stringify(sample(tool.inputSchema, tool.inputSchema));
    lines.push(`  const r${i} = await ${member}(${args});`, `  void r${i};`);
    if (arity === "required") {
      lines.push("  // @ts-expect-error the tool requires arguments", `  void ${member}();`);
    }
  });
  lines.push("}");
  return lines.join("\n");
}

Deno.test("renderDeclarations() output type-checks under deno check --strict with a call site per tool", async () => {
  const dir = await Deno.makeTempDir({ prefix: "declarations_typecheck_" });
  try {
    await Deno.writeTextFile(`${dir}/deno.json`, JSON.stringify(STRICT_CONFIG));
    const files: string[] = [];
    for (const server of loadCorpus()) {
      for (const detail of ["full", "signatures"] as const) {
        const { text } = renderDeclarations(server.name, server.tools, { detail });
        const file = `${dir}/${server.name}.${detail}.ts`;
        await Deno.writeTextFile(file, `${text}\n\n${callSites(server.name, server.tools)}\n`);
        files.push(file);
      }
    }
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["check", "--quiet", "--no-lock", "--config", `${dir}/deno.json`, ...files],
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const output = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
    assert.equal(code, 0, output);
    assert.equal(files.length, 36);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sample() derives a minimal argument object from required properties", () => {
  const schema = {
    type: "object",
    properties: {
      a: { type: "string" },
      b: { type: "number" },
      e: { enum: ["x", "y"] },
      t: { $ref: "#/$defs/T" },
    },
    required: ["a", "e", "t"],
    $defs: { T: { type: "array", prefixItems: [{ type: "boolean" }], minItems: 1 } },
  };
  assert.deepEqual(sample(schema, schema), { a: "x", e: "x", t: [false] });
});
