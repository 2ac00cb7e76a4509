/**
 * One server's part of the search index: its tools' terms per field as compact postings, built
 * once when the server's tool list is first seen or changes, and dropped whole. A segment is a few
 * flat typed arrays (no object per term), and building it works on small integers only, so even a
 * catalog of 10,000 tools leaves little garbage behind.
 *
 * @module
 */
import type { ToolInfo } from "../declarations/mod.ts";
import type { Vocabulary } from "./_search_text.ts";
import { runInSlices } from "../time_slices.ts";

/** The indexed fields, in the order of every per-field array: name, description, parameters. */
export const FIELD_COUNT = 3;

/**
 * Text indexed per field of one tool, in UTF-16 units: a description or a parameter list past this
 * is indexed up to here (it still matches by its opening, which is where tools say what they do).
 */
export const MAX_INDEXED_FIELD_CHARS = 4_000;

/** Most tools indexed per server (a server listing more is indexed up to here). */
export const MAX_INDEXED_TOOLS_PER_SERVER = 100_000;

/** Longest name, server name or title indexed, in UTF-16 units. */
const MAX_NAME_CHARS = 200;

/** One server's tools, analysed. */
export interface Segment {
  server: string;
  /** The array the segment was built from (identity says "unchanged"). */
  source: readonly ToolInfo[];
  /** Indexed tools (a repeated wire name once), by local document number. */
  tools: ToolInfo[];
  /** Terms per document and field: `lengths[doc * FIELD_COUNT + f]`. */
  lengths: Uint32Array;
  /** Sum of `lengths` per field. */
  totalLengths: number[];
  /** Term id -> its slot: its postings are `docs[offsets[slot] ... offsets[slot + 1]]`. */
  slots: Map<number, number>;
  offsets: Int32Array;
  /** Local document numbers, ascending within a term. */
  docs: Int32Array;
  /** Occurrences per posting and field: `tf[posting * FIELD_COUNT + f]`. */
  tf: Uint16Array;
}

/** A growable list of small integers. */
class IntList {
  values = new Int32Array(4_096);
  length = 0;
  push(value: number): void {
    if (this.length === this.values.length) {
      const grown = new Int32Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = value;
  }
}

/** The tools of `tools` that get indexed: named, each wire name once, at most the per-server cap. */
function indexedTools(tools: readonly ToolInfo[]): ToolInfo[] {
  const seen = new Set<string>();
  const indexed: ToolInfo[] = [];
  for (const tool of tools) {
    if (typeof tool?.name !== "string" || seen.has(tool.name)) continue;
    seen.add(tool.name);
    indexed.push(tool);
    if (indexed.length >= MAX_INDEXED_TOOLS_PER_SERVER) break;
  }
  return indexed;
}

/**
 * Analyses `tools` of `server` into a segment, interning new terms in `vocabulary`. Fields: the
 * name (wire name, server name, title), the description, and the parameters (top-level property
 * names and descriptions), each up to {@link MAX_INDEXED_FIELD_CHARS}.
 */
export function buildSegment(server: string, tools: readonly ToolInfo[], vocabulary: Vocabulary): Segment {
  const steps = segmentSteps(server, tools, vocabulary);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Tools analysed between two looks at the clock of {@link buildSegmentInSlices}. */
const TOOLS_PER_STEP = 256;

/**
 * As {@link buildSegment}, letting the event loop turn (a macrotask) whenever `sliceMs` has passed:
 * a 50,000-tool server analysed at once held mcp-serve's thread about 160 ms.
 *
 * @param options.sliceMs Longest run between two turns, in ms. @default 20
 */
export async function buildSegmentInSlices(
  server: string,
  tools: readonly ToolInfo[],
  vocabulary: Vocabulary,
  options: { sliceMs?: number } = {},
): Promise<Segment> {
  return await runInSlices(segmentSteps(server, tools, vocabulary), options.sliceMs);
}

/** The work of {@link buildSegment}, pausing (a `yield`) after every {@link TOOLS_PER_STEP} tools. */
function* segmentSteps(
  server: string,
  tools: readonly ToolInfo[],
  vocabulary: Vocabulary,
): Generator<void, Segment, void> {
  const indexed = indexedTools(tools);
  const lengths = new Uint32Array(indexed.length * FIELD_COUNT);
  const totalLengths = [0, 0, 0];
  // Every occurrence, in document order: its term id, and doc · 4 + field.
  const terms = new IntList();
  const places = new IntList();
  let place = 0;
  const add = (id: number) => {
    terms.push(id);
    places.push(place);
  };
  const scan = (text: unknown, maxChars: number): number => {
    if (typeof text !== "string") return 0;
    vocabulary.forEachTermId(text, add, maxChars);
    return Math.min(text.length, maxChars);
  };
  for (let doc = 0; doc < indexed.length; doc++) {
    if (doc % TOOLS_PER_STEP === TOOLS_PER_STEP - 1) yield;
    const tool = indexed[doc]!;
    for (let field = 0; field < FIELD_COUNT; field++) {
      const before = terms.length;
      place = doc * 4 + field;
      if (field === 0) {
        scan(tool.name, MAX_NAME_CHARS);
        scan(server, MAX_NAME_CHARS);
        scan(tool.title, MAX_NAME_CHARS);
      } else if (field === 1) {
        scan(tool.description, MAX_INDEXED_FIELD_CHARS);
      } else {
        const properties = (tool.inputSchema as { properties?: unknown } | null | undefined)?.properties;
        if (typeof properties === "object" && properties !== null && !Array.isArray(properties)) {
          let budget = MAX_INDEXED_FIELD_CHARS;
          for (const key of Object.keys(properties)) {
            if (budget <= 0) break;
            budget -= scan(key, Math.min(budget, MAX_NAME_CHARS)) + 1;
            const description =
              ((properties as Record<string, unknown>)[key] as { description?: unknown } | null)
                ?.description;
            if (budget > 0) budget -= scan(description, budget) + 1;
          }
        }
      }
      lengths[doc * FIELD_COUNT + field] = terms.length - before;
      totalLengths[field]! += terms.length - before;
    }
  }
  return yield* gather(server, tools, indexed, lengths, totalLengths, terms, places);
}

/** Occurrences grouped between two pauses of {@link gather}. */
const OCCURRENCES_PER_STEP = 65_536;

/**
 * Groups the occurrences by term (a counting sort: they are already in document order), pausing (a
 * `yield`) after every {@link OCCURRENCES_PER_STEP} occurrences of each pass.
 */
function* gather(
  server: string,
  source: readonly ToolInfo[],
  tools: ToolInfo[],
  lengths: Uint32Array,
  totalLengths: number[],
  terms: IntList,
  places: IntList,
): Generator<void, Segment, void> {
  const slots = new Map<number, number>();
  const slotOf = new Int32Array(terms.length);
  const postingCount = new IntList(); // per slot: distinct documents
  const lastDoc = new IntList();
  for (let i = 0; i < terms.length; i++) {
    if (i % OCCURRENCES_PER_STEP === OCCURRENCES_PER_STEP - 1) yield;
    const term = terms.values[i]!;
    let slot = slots.get(term);
    if (slot === undefined) {
      slot = postingCount.length;
      slots.set(term, slot);
      postingCount.push(0);
      lastDoc.push(-1);
    }
    slotOf[i] = slot;
    const doc = places.values[i]! >> 2;
    if (lastDoc.values[slot] !== doc) {
      lastDoc.values[slot] = doc;
      postingCount.values[slot]!++;
    }
  }
  const offsets = new Int32Array(postingCount.length + 1);
  for (let slot = 0; slot < postingCount.length; slot++) {
    offsets[slot + 1] = offsets[slot]! + postingCount.values[slot]!;
  }
  const total = offsets[postingCount.length]!;
  const docs = new Int32Array(total);
  const tf = new Uint16Array(total * FIELD_COUNT);
  const fill = offsets.slice(0, postingCount.length); // next free posting per slot
  lastDoc.values.fill(-1, 0, lastDoc.length);
  for (let i = 0; i < terms.length; i++) {
    if (i % OCCURRENCES_PER_STEP === OCCURRENCES_PER_STEP - 1) yield;
    const slot = slotOf[i]!;
    const doc = places.values[i]! >> 2;
    if (lastDoc.values[slot] !== doc) {
      lastDoc.values[slot] = doc;
      docs[fill[slot]!++] = doc;
    }
    const at = (fill[slot]! - 1) * FIELD_COUNT + (places.values[i]! & 3);
    if (tf[at]! < 65_535) tf[at]!++;
  }
  return { server, source, tools, lengths, totalLengths, slots, offsets, docs, tf };
}
