// Child process of tests/guarded_fetch_test.ts, run with --deny-net=127.0.0.3: sends one pinned request
// to 127.0.0.3 through the node connector and prints how it ended (it must reject, not crash).
import { createNodeConnector } from "../../lib/net/guarded_fetch.ts";

const connector = createNodeConnector();
try {
  await connector.send({
    url: new URL("http://pinned.invalid:9/"),
    addresses: ["127.0.0.3"],
    method: "GET",
    headers: new Headers(),
    body: null,
  });
  console.log("sent");
} catch (error) {
  console.log(`rejected ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
} finally {
  connector.close();
}
