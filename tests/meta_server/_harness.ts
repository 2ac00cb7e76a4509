/**
 * The meta-server under test, connected to an SDK client over an in-memory transport, on a fresh
 * workspace and home (shared by the meta_server, list_tools and execute tests).
 */
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { Catalog } from "../../lib/catalog/mod.ts";
import { createMetaServer } from "../../lib/meta_server/mod.ts";
import { hostRunner, makeDirs, type TestDirs } from "../_fakes_meta.ts";

export interface Harness {
  dirs: TestDirs;
  catalog: Catalog;
  client: Client;
  notifications: string[];
  close(): Promise<void>;
}

/**
 * @param options.progressIntervalMs The meta-server's progress throttle; 0 (every report sent at once)
 *   unless a test checks the throttle itself.
 */
export async function harness(
  setup: (dirs: TestDirs) => Promise<void>,
  options: { progressIntervalMs?: number } = {},
): Promise<Harness> {
  const dirs = await makeDirs();
  await setup(dirs);
  const catalog = await Catalog.open({
    cwd: dirs.ws,
    env: { SYMPOSIUM_HOME: dirs.home },
    homeDir: dirs.root,
  });
  const server = createMetaServer({
    catalog,
    runner: hostRunner,
    progressIntervalMs: options.progressIntervalMs ?? 0,
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
  return {
    dirs,
    catalog,
    client,
    notifications,
    async close() {
      await client.close();
      await server.close();
      await catalog.close();
      await dirs.remove();
    },
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
