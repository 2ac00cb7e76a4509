/**
 * A check run on a call before it is sent (`confirm-tools` asks the user), taken on the very definition
 * the call is sent with: when the server's listing changes during the check (the user takes a while),
 * the check runs again on the new definition, so a tool that became destructive meanwhile is never sent
 * unchecked (before, 1 of 20 such races ran it unasked).
 *
 * @module
 */
import { type BackendConnection, BackendError, type Tool } from "../backends/mod.ts";
import type { ServerSpec } from "../plugins/mod.ts";

/**
 * Checks a call before it is sent (e.g. asks the user, `confirm-tools`): `definition` is the tool as the
 * listing the call uses declares it, `toolNames` every tool that listing has. Rejecting stops the call.
 */
export type BeforeSend = (spec: ServerSpec, definition: Tool, toolNames: readonly string[]) => Promise<void>;

/** Most times a call is checked (the first, then again for each change of its listing during a check). */
export const MAX_BEFORE_SEND_ROUNDS = 3;

/** Whether two definitions of one tool would be judged the same (name, annotations, schemas). */
function sameDefinition(a: Tool, b: Tool): boolean {
  return a === b || JSON.stringify([a.name, a.annotations, a.inputSchema]) ===
      JSON.stringify([b.name, b.annotations, b.inputSchema]);
}

/** A call resolved against the listing it would be sent with. */
export interface ResolvedCall {
  connection: BackendConnection;
  definition: Tool;
  toolNames: string[];
  /**
   * Whether the listing it was resolved on is still the server's current one (no `tools/list_changed`
   * came after its request was sent). Default: always.
   */
  isCurrent?: (() => boolean) | undefined;
}

/**
 * Most times one check resolves again because the listing it got was overtaken by a change while it was
 * awaited (a listing in flight when `tools/list_changed` came is still handed to those who asked before).
 */
export const MAX_STALE_RESOLVES = 3;

/**
 * Runs `beforeSend` on `first`, then resolves the call again (`resolve`, from the listing held now, and
 * again while that listing was overtaken by a change as it came: a listing that predates the change the
 * server sent before the call goes out is no ground for it); while the definition or the connection
 * changed, checks again on the new one. What is returned is current when returned, so a call sent at once
 * (no turn of the event loop between) is sent on the definition checked.
 *
 * @returns The resolution the call is to be sent with (checked).
 * @throws What `beforeSend` throws; {@link BackendError} `REQUEST_FAILED` when the tool changed during
 *   each of {@link MAX_BEFORE_SEND_ROUNDS} checks.
 */
export async function settleBeforeSend(
  spec: ServerSpec,
  first: ResolvedCall,
  beforeSend: BeforeSend,
  resolve: () => Promise<ResolvedCall>,
): Promise<ResolvedCall> {
  let checked = first;
  for (let round = 1;; round++) {
    await beforeSend(spec, checked.definition, checked.toolNames);
    let now = await resolve();
    for (let tries = 1; now.isCurrent?.() === false && tries < MAX_STALE_RESOLVES; tries++) {
      now = await resolve();
    }
    const isCurrent = now.isCurrent?.() ?? true;
    if (
      isCurrent && now.connection === checked.connection && sameDefinition(now.definition, checked.definition)
    ) {
      return now;
    }
    if (round >= MAX_BEFORE_SEND_ROUNDS) {
      throw new BackendError(
        "REQUEST_FAILED",
        spec.name,
        `${spec.name}.${checked.definition.name} changed ${round} times while the call was being checked; it was not made`,
      );
    }
    checked = now;
  }
}
