/**
 * The meta-server under test, connected to an SDK client over an in-memory transport, on a fresh
 * workspace and home (shared by the meta_server, list_tools and execute tests).
 */
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import type { Catalog } from "../../lib/catalog/mod.ts";
import { createMetaServer } from "../../lib/meta_server/mod.ts";
import { hostRunner, makeDirs, openCatalog, type TestDirs } from "../_fakes_meta.ts";
import type { Logger } from "../../lib/log.ts";

export interface Harness {
  dirs: TestDirs;
  catalog: Catalog;
  client: Client;
  notifications: string[];
  close(): Promise<void>;
  /** Closes the session but keeps its folders (a later harness given `dirs` goes on in them). */
  end(): Promise<void>;
}

/**
 * @param options.progressIntervalMs The meta-server's progress throttle; 0 (every report sent at once)
 *   unless a test checks the throttle itself.
 * @param options.logger The catalog's and meta-server's logger. @default none
 * @param options.dirs Reuse these folders (a second session of the same home). @default fresh ones
 */
export async function harness(
  setup: (dirs: TestDirs) => Promise<void>,
  options: { progressIntervalMs?: number; logger?: Logger; dirs?: TestDirs } = {},
): Promise<Harness> {
  const dirs = options.dirs ?? await makeDirs();
  await setup(dirs);
  const catalog = await openCatalog(dirs, options.logger ? { logger: options.logger } : {});
  const server = createMetaServer({
    catalog,
    runner: hostRunner,
    progressIntervalMs: options.progressIntervalMs ?? 0,
    ...(options.logger ? { logger: options.logger } : {}),
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const notifications: string[] = [];
  const client = new Client({ name: "test-agent", version: "1" });
  client.fallbackNotificationHandler = (n) => {
    notifications.push(n.method);
    return Promise.resolve();
  };
  client.setNotificationHandler(
    "notifications/tools/list_changed",
    () => void notifications.push("tools/list_changed"),
  );
  await client.connect(a);
  const end = async () => {
    await client.close();
    await server.close();
    await catalog.close();
  };
  return {
    dirs,
    catalog,
    client,
    notifications,
    async close() {
      await end();
      await dirs.remove();
    },
    end,
  };
}

export function textOf(result: unknown): string {
  const content = (result as { content: { type: string; text?: string }[] }).content;
  return content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

export async function execute(h: Harness, script: string) {
  const result = await h.client.callTool({ name: "execute", arguments: { script } });
  return { text: textOf(result), isError: result.isError === true };
}
