/**
 * YAML agent configs (Goose's `config.yaml`). The `yaml` package parses the document with node
 * ranges; the entry is then spliced in or out as whole lines at the mapping's own indentation, so
 * comments, quoting, blank lines and every other byte stay as they were (re-stringifying the
 * document would re-indent and re-fold it). Each result is parsed back and compared with the
 * document the edit must produce before it is returned.
 *
 * @module
 */
import { isMap, isScalar, type Node, type Pair, parseDocument, stringify, type YAMLMap } from "yaml";
import {
  type ConfigFormat,
  ConfigShapeError,
  ConfigSyntaxError,
  describePath,
  type EntryAddress,
  positionAt,
  uneditableLayoutError,
} from "./config_format.ts";
import {
  applyTextEdits,
  detectEol,
  lineEndOf,
  lineStartOf,
  skipLineBreak,
  splitBom,
  type TextEdit,
} from "./_text.ts";
import { deepEqual, expectedDocument, getAtPath, pruneEmptyContainers } from "./values.ts";
import { assertNestingBudget, withStackGuard } from "./_budget.ts";

/** Indentation step used when the document shows none: two spaces. */
export const DEFAULT_YAML_INDENT = 2;

/** The YAML {@link ConfigFormat}. */
export const YAML: ConfigFormat = {
  label: "YAML",
  read(text: string, file: string): unknown {
    return parseYaml(text, file).value;
  },
  setEntry(text: string, address: EntryAddress, value: unknown, file: string): string {
    const { bom, body, contents, value: before } = parseYaml(text, file);
    const path = [...address.containerPath, address.name];
    const current = getAtPath(before, path);
    if (current !== undefined && deepEqual(current, value)) return text;
    const eol = detectEol(body);
    const style = detectStyle(body);
    if (contents === null) {
      const block = renderPair(path[0]!, nest(path.slice(1), value), "", style, eol);
      const next = body.trim() === "" ? block : body + (/[\r\n]$/.test(body) ? "" : eol) + block;
      return bom + verified(next, before, path, value, file);
    }
    let map = contents;
    for (let i = 0; i < path.length; i++) {
      const key = path[i]!;
      const pair = findPair(map, key);
      const rest = nest(path.slice(i + 1), value);
      if (pair === undefined) {
        return bom +
          verified(
            applyTextEdits(body, [insertIntoMap(body, map, key, rest, style, eol)]),
            before,
            path,
            value,
            file,
          );
      }
      const keyNode = pair.key as Node;
      const indent = columnOf(body, keyNode.range![0]);
      if (i === path.length - 1) {
        const [start, end] = pairLines(body, pair);
        const edit = { start, end, text: renderPair(key, value, indent, style, eol) };
        return bom + verified(applyTextEdits(body, [edit]), before, path, value, file);
      }
      const child = pair.value as Node | null;
      if (isMap(child) && !child.flow && child.items.length > 0) {
        map = child;
        continue;
      }
      if (child === null || isEmptyValue(child)) {
        const colon = body.indexOf(":", keyNode.range![1]);
        const valueEnd = child === null ? colon + 1 : child.range![1];
        const lineEnd = lineEndOf(body, valueEnd);
        const block = renderPair(
          path[i + 1]!,
          nest(path.slice(i + 2), value),
          indent + style.unit,
          style,
          eol,
        );
        const edits: TextEdit[] = [
          { start: colon + 1, end: valueEnd, text: "" },
          { start: lineEnd, end: lineEnd, text: eol + block.slice(0, -eol.length) },
        ];
        return bom + verified(applyTextEdits(body, edits), before, path, value, file);
      }
      throw new ConfigShapeError(
        file,
        `"${describePath(path.slice(0, i + 1))}" is ${describeYamlNode(child)}, expected a block mapping`,
        positionAt(body, child.range![0]),
      );
    }
    throw new Error("unreachable: the entry path is never empty");
  },
  removeEntry(text: string, address: EntryAddress, file: string): string {
    const { bom, body, contents, value: before } = parseYaml(text, file);
    const path = [...address.containerPath, address.name];
    if (contents === null || getAtPath(before, path) === undefined) return text;
    const entry = findPairPath(contents, path);
    if (entry === undefined) return text;
    const [start, end] = pairLines(body, entry);
    let next = applyTextEdits(body, [{ start, end, text: "" }]);
    // Drop containers the removal left empty (innermost first), unless a comment stays in them.
    for (let depth = path.length - 1; depth >= 1; depth--) {
      const again = parseYaml(next, file).contents;
      const container = again === null ? undefined : findPairPath(again, path.slice(0, depth));
      if (container === undefined) break;
      const child = container.value as Node | null;
      if (child !== null && !isEmptyValue(child)) break;
      const [cStart, cEnd] = pairLines(next, container);
      if (next.slice(cStart, cEnd).includes("#")) break;
      next = applyTextEdits(next, [{ start: cStart, end: cEnd, text: "" }]);
    }
    return bom + verified(next, before, path, undefined, file);
  },
};

interface ParsedYaml {
  bom: string;
  body: string;
  /** The root mapping; `null` for an empty document. */
  contents: YAMLMap | null;
  value: unknown;
}

function parseYaml(text: string, file: string): ParsedYaml {
  const { bom, body } = splitBom(text);
  assertNestingBudget(body, file, "YAML", "yaml");
  const doc = withStackGuard(file, "YAML", () => parseDocument(body, { prettyErrors: false }));
  const error = doc.errors[0];
  if (error !== undefined) {
    const detail = error.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
    const where = error.linePos?.[0] ?? positionAt(body, error.pos[0]);
    throw new ConfigSyntaxError(file, detail, {
      line: where.line,
      column: "col" in where ? where.col : where.column,
    }, "YAML");
  }
  const contents = doc.contents as Node | null;
  if (contents === null || (isScalar(contents) && contents.value === null)) {
    return { bom, body, contents: null, value: {} };
  }
  if (!isMap(contents) || contents.flow) {
    throw new ConfigShapeError(
      file,
      `the top level is ${describeYamlNode(contents)}, expected a block mapping`,
      positionAt(body, contents.range![0]),
    );
  }
  return { bom, body, contents, value: withStackGuard(file, "YAML", () => doc.toJS()) };
}

function verified(next: string, before: unknown, path: string[], value: unknown, file: string): string {
  let after: unknown;
  const doc = parseDocument(next);
  if (doc.errors.length === 0) after = doc.toJS() ?? {};
  if (
    after === undefined ||
    !deepEqual(pruneEmptyContainers(after, path), expectedDocument(before, path, value))
  ) {
    throw uneditableLayoutError(file, path.slice(0, -1), path);
  }
  return next;
}

function describeYamlNode(node: Node): string {
  if (isMap(node)) return node.flow ? "a flow mapping" : "a mapping";
  if (isScalar(node)) return node.value === null ? "null" : `a ${typeof node.value}`;
  return "a sequence";
}

function isEmptyValue(node: Node): boolean {
  return (isScalar(node) && node.value === null) || (isMap(node) && node.items.length === 0);
}

function findPair(map: YAMLMap, key: string): Pair | undefined {
  return map.items.find((p) => isScalar(p.key) && p.key.value === key) as Pair | undefined;
}

function findPairPath(root: YAMLMap, path: readonly string[]): Pair | undefined {
  let map: YAMLMap = root;
  for (let i = 0; i < path.length; i++) {
    const pair = findPair(map, path[i]!);
    if (pair === undefined) return undefined;
    if (i === path.length - 1) return pair;
    if (!isMap(pair.value)) return undefined;
    map = pair.value;
  }
  return undefined;
}

function columnOf(text: string, offset: number): string {
  return " ".repeat(offset - lineStartOf(text, offset));
}

/** The whole lines a pair occupies: from its key's line start to past its last line's break. */
function pairLines(text: string, pair: Pair): [number, number] {
  const key = pair.key as Node;
  const value = pair.value as Node | null;
  const end = value?.range?.[1] ?? key.range![1];
  const last = text[end - 1] === "\n" ? end : skipLineBreak(text, lineEndOf(text, end));
  return [lineStartOf(text, key.range![0]), last];
}

/** Inserts `key: value` as the last pair of a block mapping, on new lines at the pairs' indentation. */
function insertIntoMap(
  text: string,
  map: YAMLMap,
  key: string,
  value: unknown,
  style: YamlStyle,
  eol: string,
): TextEdit {
  const items = map.items as Pair[];
  const first = items[0]!;
  const indent = columnOf(text, (first.key as Node).range![0]);
  const [, at] = pairLines(text, items[items.length - 1]!);
  const lead = at === text.length && at > 0 && !/[\r\n]$/.test(text) ? eol : "";
  return { start: at, end: at, text: lead + renderPair(key, value, indent, style, eol) };
}

interface YamlStyle {
  /** One indentation step, in spaces. */
  unit: string;
  /** Whether block sequences are indented under their key (`serde_yaml` writes them flush). */
  indentSeq: boolean;
}

function detectStyle(text: string): YamlStyle {
  const lines = text.split(/\r?\n/);
  let unit = "";
  let indentSeq = true;
  let seenSeq = false;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^\s*(#|$)/.test(line)) continue;
    const indent = /^ */.exec(line)![0].length;
    let p = i - 1;
    while (p >= 0 && /^\s*(#|$)/.test(lines[p]!)) p--;
    const prev = lines[p] ?? "";
    const prevIndent = /^ */.exec(prev)![0].length;
    if (!/:\s*(#.*)?$/.test(prev)) continue;
    if (line.slice(indent).startsWith("- ")) {
      if (!seenSeq) indentSeq = indent > prevIndent;
      seenSeq = true;
    } else if (unit === "" && indent > prevIndent) unit = " ".repeat(indent - prevIndent);
  }
  return { unit: unit === "" ? " ".repeat(DEFAULT_YAML_INDENT) : unit, indentSeq };
}

/** Renders `key: value` as block lines at `indent`, each ending with `eol`. */
function renderPair(key: string, value: unknown, indent: string, style: YamlStyle, eol: string): string {
  const text = stringify({ [key]: value }, {
    indent: style.unit.length,
    indentSeq: style.indentSeq,
    lineWidth: 0,
  });
  return text.replace(/\n$/, "").split("\n").map((line) => indent + line + eol).join("");
}

function nest(path: readonly string[], value: unknown): unknown {
  return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
}
