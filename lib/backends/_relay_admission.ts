/**
 * Which of a backing server's `sampling/createMessage` and `elicitation/create` requests may be relayed
 * to the agent: only those sent while one of our tool calls to that server is in flight, at most
 * {@link MAX_RELAYED_PER_CALL} per call and {@link MAX_RELAYED_REQUEST_BYTES} each, and only while the
 * agent has room for another open question (the peer's `reserveRelay`). Each is cancelled when the call it
 * was counted against ends. The verdict is taken on the raw message, before the SDK sees it: a refused
 * request is answered at once and kept nowhere (the SDK holds a request until its answer is written, and
 * 10,000 refused 100 KB requests to a server that did not read its stdin held 1.1 GB). Unbounded, 5,000
 * requests from one tool call all reached the agent within 8 s.
 *
 * @module
 */
import type { JSONRPCMessage, MessageExtraInfo, Transport } from "@modelcontextprotocol/client";

/** Most requests one tool call may relay to the agent (50); past it the server gets an error. */
export const MAX_RELAYED_PER_CALL = 50;

/** Largest relayed request, characters of its params as JSON (256 KiB); a larger one is refused. */
export const MAX_RELAYED_REQUEST_BYTES = 256 * 1024;

/** JSON-RPC code of a refusal: the request is not one we relay now (`Invalid Request`). */
const REFUSED_CODE = -32600;

/** One tool call in flight, as the relayed requests counted against it see it. */
interface CallScope {
  relayed: number;
  /**
   * Aborted when the call ends: every request counted against it is cancelled towards the agent. Made on the
   * first request admitted (most calls relay none, and the controller and its reason cost ~4 µs a call).
   */
  controller: AbortController | undefined;
}

/** An admitted request: the signal it ends with and how its open-question slot is given back. */
export interface Ticket {
  signal: AbortSignal;
  release: () => void;
}

/** The tool calls in flight on one connection and the requests relayed within them. */
export class RelayAdmission {
  readonly #open: CallScope[] = [];
  readonly #server: string;
  readonly #methods: ReadonlySet<string>;
  readonly #reserve: () => (() => void) | undefined;
  readonly #tickets = new Map<string | number, Ticket>();
  #inline = 0;

  /**
   * @param server The server's manifest name, for the refusals.
   * @param options.methods The request methods relayed (those offered to the server).
   * @param options.reserve Takes one of the agent's open-question slots, or `undefined` when none is free;
   *   the returned function gives it back. @default always a slot
   */
  constructor(
    server: string,
    options: { methods: readonly string[]; reserve?: (() => (() => void) | undefined) | undefined },
  ) {
    this.#server = server;
    this.#methods = new Set(options.methods);
    this.#reserve = options.reserve ?? (() => () => {});
  }

  /** A tool call starts; call the returned function when it ended (its relayed requests are cancelled). */
  begin(): () => void {
    const scope: CallScope = { relayed: 0, controller: undefined };
    this.#open.push(scope);
    return () => {
      const at = this.#open.indexOf(scope);
      if (at >= 0) this.#open.splice(at, 1);
      scope.controller?.abort(new Error(`the tool call of ${this.#server} that asked ended`));
    };
  }

  /**
   * Puts the verdict in front of the SDK on `transport`: a relayed request that is refused is answered
   * `-32600` naming the bound, and never delivered; one admitted is delivered with a ticket that
   * {@link take} hands its handler. An admitted request's slot is given back when its answer is sent or
   * its handler ends, whichever is first. Call after anything else that replaces `onmessage`/`send`.
   *
   * @param onRefused Told each refusal (e.g. to log it).
   */
  guard(transport: Transport, onRefused: (reason: string) => void): void {
    const deliver = transport.onmessage;
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const m = message as { id?: string | number; method?: unknown };
      if (m.id !== undefined && m.method === undefined) this.#tickets.get(m.id)?.release();
      return send(message, options);
    };
    transport.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
      const m = message as { id?: string | number; method?: unknown; params?: unknown };
      if (m.id !== undefined && typeof m.method === "string" && this.#methods.has(m.method)) {
        const reason = this.#admit(m.id, m.method, m.params);
        if (reason !== undefined) {
          onRefused(reason);
          send({
            jsonrpc: "2.0",
            id: m.id,
            error: { code: REFUSED_CODE, message: `Cannot relay to the user: ${reason}` },
          }).catch(() => {}); // The server may be gone; nothing else waits for this answer.
          return;
        }
      }
      deliver?.(message, extra);
    };
  }

  /**
   * The ticket of admitted request `id` for its handler: the signal that ends it (the call's end) and the
   * release of its slot (idempotent; also run when its answer is sent). `undefined` for a request not
   * admitted here.
   */
  take(id: string | number): Ticket | undefined {
    return this.#tickets.get(id);
  }

  /**
   * Admits an input request a modern server embedded in an `input_required` result (it has no JSON-RPC id
   * of its own): the same bounds as a wire request (a call in flight, {@link MAX_RELAYED_PER_CALL} per
   * call, {@link MAX_RELAYED_REQUEST_BYTES}, an open-question slot).
   *
   * @returns The ticket (its `release` must be called when the handler ends), or why it was refused.
   */
  admitInline(method: string, params: unknown): Ticket | string {
    const key = `inline:${this.#inline++}`;
    const reason = this.#admit(key, method, params);
    if (reason !== undefined) return reason;
    return this.#tickets.get(key)!;
  }

  /** Gives back every slot still held (the connection closed). */
  releaseAll(): void {
    for (const ticket of [...this.#tickets.values()]) ticket.release();
  }

  /** Why request `id` is refused, or `undefined` when it was admitted (its ticket kept). */
  #admit(id: string | number, method: string, params: unknown): string | undefined {
    const scope = this.#open.find((s) => s.relayed < MAX_RELAYED_PER_CALL);
    if (scope === undefined) {
      return this.#open.length === 0
        ? `${method} is relayed to the user only while a tool call of ${this.#server} is in flight`
        : `${method}: more than the ${MAX_RELAYED_PER_CALL} requests one tool call may relay (MAX_RELAYED_PER_CALL)`;
    }
    const chars = JSON.stringify(params ?? {}).length;
    if (chars > MAX_RELAYED_REQUEST_BYTES) {
      return `${method}: ${chars} characters, more than the ${MAX_RELAYED_REQUEST_BYTES} one relayed ` +
        `request may be (MAX_RELAYED_REQUEST_BYTES)`;
    }
    const giveBack = this.#reserve();
    if (giveBack === undefined) {
      return `${method}: the user has the most questions open at once already (MAX_OPEN_RELAYED_REQUESTS)`;
    }
    scope.relayed++;
    let released = false;
    this.#tickets.get(id)?.release(); // A server reusing an id it has not seen answered: the old one ends.
    const ticket: Ticket = {
      signal: (scope.controller ??= new AbortController()).signal,
      release: () => {
        if (released) return;
        released = true;
        giveBack();
        if (this.#tickets.get(id) === ticket) this.#tickets.delete(id);
      },
    };
    this.#tickets.set(id, ticket);
    return undefined;
  }
}
