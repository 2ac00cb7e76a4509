import assert from "node:assert/strict";
import { EndpointPolicyError } from "../../lib/net/endpoint_policy.ts";
import { createGuardedFetch, createNodeConnector } from "../../lib/net/guarded_fetch.ts";
import { scriptedResolver, serveLoopback } from "../_fakes_http.ts";

const TLS_DIR = new URL("../../testdata/guarded_fetch/", import.meta.url);
const CA = await Deno.readTextFile(new URL("ca.pem", TLS_DIR));
const LOCALHOST_TLS = {
  cert: await Deno.readTextFile(new URL("localhost.pem", TLS_DIR)),
  key: await Deno.readTextFile(new URL("localhost.key", TLS_DIR)),
};
const OTHER_TLS = {
  cert: await Deno.readTextFile(new URL("mcp.test.example.pem", TLS_DIR)),
  key: await Deno.readTextFile(new URL("mcp.test.example.key", TLS_DIR)),
};

Deno.test("createGuardedFetch() refuses a same-origin 302 naming the Location, without following it", async () => {
  const server = serveLoopback((_req, hit) =>
    hit.path === "/mcp"
      ? new Response(null, { status: 302, headers: { location: "/elsewhere" } })
      : new Response("x")
  );
  const guarded = createGuardedFetch({ server: "redir" });
  try {
    const error = await guarded(`http://127.0.0.1:${server.port}/mcp`, { method: "POST", body: "{}" }).catch((
      e,
    ) => e);
    assert.ok(error instanceof EndpointPolicyError);
    assert.equal(error.code, "ENDPOINT_REDIRECT");
    assert.equal(
      error.message,
      `Cannot connect to server "redir" at http://127.0.0.1:${server.port}/mcp: the server answered 302 ` +
        `redirecting to http://127.0.0.1:${server.port}/elsewhere; redirects are never followed`,
    );
    assert.deepEqual(server.hits.map((h) => h.path), ["/mcp"], "the target was never requested");
  } finally {
    guarded.close();
    await server.close();
  }
});

Deno.test("createGuardedFetch() says a cross-origin redirect target is refused by the policy too", async () => {
  const server = serveLoopback(() =>
    new Response(null, { status: 307, headers: { location: "http://169.254.169.254/latest/meta-data/" } })
  );
  const guarded = createGuardedFetch();
  try {
    const error = await guarded(`http://localhost:${server.port}/`, {}).catch((e) => e);
    assert.ok(error instanceof EndpointPolicyError);
    assert.equal(error.code, "ENDPOINT_REDIRECT");
    assert.match(
      error.message,
      /answered 307 redirecting to http:\/\/169\.254\.169\.254\/latest\/meta-data\/, which/,
    );
    assert.match(error.message, /refuses too \(plain http is only allowed for this machine/);
  } finally {
    guarded.close();
    await server.close();
  }
});

Deno.test("createGuardedFetch() connects only to the checked address when a later lookup answers differently", async () => {
  // The system resolver says localhost = 127.0.0.1 (/etc/hosts): a trap listens there. The checked
  // answer is 127.0.0.2, where the real server listens on the same port.
  const pinned = serveLoopback(() => new Response("pinned"), { hostname: "127.0.0.2" });
  const trap = serveLoopback(() => new Response("trap"), { port: pinned.port });
  const resolver = scriptedResolver(["127.0.0.2"], ["127.0.0.1"]);
  const guarded = createGuardedFetch({ resolver });
  try {
    const first = await guarded(`http://localhost:${pinned.port}/one`);
    assert.equal(await first.text(), "pinned");
    assert.deepEqual(resolver.calls, ["localhost"], "one lookup per request");
    assert.equal(pinned.hits[0]!.headers.get("host"), `localhost:${pinned.port}`, "Host is the URL host");
    assert.equal(trap.hits.length, 0, "no second, unchecked lookup reached the trap");
    // The next request is checked again: now the answer is 127.0.0.1 and that is where it goes.
    const second = await guarded(`http://localhost:${pinned.port}/two`);
    assert.equal(await second.text(), "trap");
    assert.deepEqual(resolver.calls, ["localhost", "localhost"]);
  } finally {
    guarded.close();
    await pinned.close();
    await trap.close();
  }
});

Deno.test("createGuardedFetch() pins https too and verifies the certificate against the URL host", async () => {
  const pinned = serveLoopback(() => new Response("tls pinned"), {
    hostname: "127.0.0.2",
    tls: LOCALHOST_TLS,
  });
  const trap = serveLoopback(() => new Response("trap"), { port: pinned.port, tls: LOCALHOST_TLS });
  const guarded = createGuardedFetch({ resolver: scriptedResolver(["127.0.0.2"]), caCerts: [CA] });
  try {
    const response = await guarded(`https://localhost:${pinned.port}/mcp`, { method: "POST", body: "{}" });
    assert.equal(await response.text(), "tls pinned");
    assert.equal(trap.hits.length, 0);
  } finally {
    guarded.close();
    await pinned.close();
    await trap.close();
  }
});

Deno.test("createGuardedFetch() fails the TLS handshake when the pinned server's certificate names another host", async () => {
  const impostor = serveLoopback(() => new Response("impostor"), { hostname: "127.0.0.2", tls: OTHER_TLS });
  const guarded = createGuardedFetch({ resolver: scriptedResolver(["127.0.0.2"]), caCerts: [CA] });
  try {
    const error = await guarded(`https://localhost:${impostor.port}/`).catch((e) => e);
    assert.ok(error instanceof TypeError, String(error));
    assert.match(error.message, /^fetch failed: .*(altnames|certificate|cert)/i);
    assert.equal(impostor.hits.length, 0);
  } finally {
    guarded.close();
    await impostor.close();
  }
});

Deno.test("createGuardedFetch() sends method, headers and body, and streams the response as it arrives", async () => {
  const { promise: firstRead, resolve: markFirstRead } = Promise.withResolvers<void>();
  const server = serveLoopback((_req, hit) => {
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(
          encoder.encode(`data: got ${hit.method} ${hit.body} ${hit.headers.get("x-test")}\n\n`),
        );
        await firstRead; // The second event is sent only after the client has read the first.
        controller.enqueue(encoder.encode("data: second\n\n"));
        controller.close();
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  const guarded = createGuardedFetch();
  try {
    const response = await guarded(`http://127.0.0.1:${server.port}/sse`, {
      method: "POST",
      headers: { "x-test": "yes", "content-type": "application/json" },
      body: '{"a":1}',
    });
    assert.equal(response.headers.get("content-type"), "text/event-stream");
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    const first = await reader.read();
    assert.equal(first.value, 'data: got POST {"a":1} yes\n\n');
    markFirstRead();
    let rest = "";
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += r.value;
    assert.equal(rest, "data: second\n\n");
  } finally {
    markFirstRead();
    guarded.close();
    await server.close();
  }
});

Deno.test("createGuardedFetch() rejects with the abort reason when the signal aborts before the answer", async () => {
  const { promise: arrived, resolve: markArrived } = Promise.withResolvers<void>();
  const { promise: release, resolve: doRelease } = Promise.withResolvers<void>();
  const server = serveLoopback(async () => {
    markArrived();
    await release;
    return new Response("late");
  });
  const guarded = createGuardedFetch();
  const controller = new AbortController();
  try {
    const pending = guarded(`http://127.0.0.1:${server.port}/slow`, { signal: controller.signal });
    await arrived;
    controller.abort(new DOMException("stop", "AbortError"));
    const error = await pending.catch((e) => e);
    assert.ok(error instanceof DOMException);
    assert.equal(error.name, "AbortError");
  } finally {
    doRelease();
    guarded.close();
    await server.close();
  }
});

Deno.test("createGuardedFetch() reports a refused connection as TypeError naming the cause", async () => {
  const server = serveLoopback(() => new Response());
  const port = server.port;
  await server.close(); // Nothing listens there any more.
  const guarded = createGuardedFetch();
  try {
    const error = await guarded(`http://127.0.0.1:${port}/`).catch((e) => e);
    assert.ok(error instanceof TypeError);
    assert.match(error.message, /^fetch failed: .*(ECONNREFUSED|refused)/i);
  } finally {
    guarded.close();
  }
});

Deno.test("createGuardedFetch() refuses by policy before any connection when the URL is refused", async () => {
  const server = serveLoopback(() => new Response("should not be reached"));
  const guarded = createGuardedFetch({ server: "s" });
  try {
    const error = await guarded(`http://127.1:${server.port}/`).catch((e) => e);
    assert.ok(error instanceof EndpointPolicyError);
    assert.equal(error.code, "ENDPOINT_HOST_NOT_CANONICAL");
    assert.equal(server.hits.length, 0);
  } finally {
    guarded.close();
    await server.close();
  }
});

Deno.test("createNodeConnector() fails sends after close()", async () => {
  const connector = createNodeConnector();
  connector.close();
  const error = await connector.send({
    url: new URL("http://127.0.0.1:9/"),
    addresses: ["127.0.0.1"],
    method: "GET",
    headers: new Headers(),
    body: null,
  }).catch((e) => e);
  assert.ok(error instanceof TypeError);
  assert.match(error.message, /closed/);
});

// The permission backstop of deno.json ("net": {"deny": [...]}). Each fetch below goes through an HTTP
// client whose only transport is a loopback server: if the deny list ever lost an entry, the request
// would land on that loopback server (and this test would fail) instead of leaving the machine.
const DENIED_ENDPOINTS = [
  "http://169.254.169.254/latest/meta-data/",
  "http://169.254.170.2/v2/credentials",
  "http://[fd00:ec2::254]/latest/meta-data/",
  "http://[fd20:ce::254]/computeMetadata/v1/",
  "http://[fe80::a9fe:a9fe]/openstack/",
  "http://100.100.100.200/latest/meta-data/",
  "http://168.63.129.16/machine",
  "http://192.0.0.192/opc/v1/instance/",
  "http://[::ffff:169.254.169.254]/",
];

Deno.test("deno.json permissions deny cloud-metadata and link-local endpoints before any connection", async () => {
  const server = serveLoopback(() => new Response("reached loopback instead"));
  const client = Deno.createHttpClient({
    proxy: { transport: "tcp", hostname: "127.0.0.1", port: server.port },
  });
  try {
    for (const endpoint of DENIED_ENDPOINTS) {
      const host = new URL(endpoint).host;
      const state = Deno.permissions.querySync({ name: "net", host: `${host}:80` }).state;
      if (!host.startsWith("[::ffff:")) assert.equal(state, "denied", `permission state for ${host}`);
      const error = await fetch(endpoint, { client }).then((r) => r.body?.cancel(), (e) => e);
      assert.ok(error instanceof Deno.errors.NotCapable, `${endpoint}: ${error}`);
    }
    assert.equal(server.hits.length, 0);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("createNodeConnector() turns a permission-denied pinned address into an error, not a crash", async () => {
  // In a child with 127.0.0.3 denied (loopback, so nothing can leave the machine either way).
  const script = new URL("../../testdata/guarded_fetch/send_to_denied.ts", import.meta.url);
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-net", "--deny-net=127.0.0.3", "--allow-read", script.pathname],
    cwd: new URL("../..", import.meta.url).pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(output.stdout).trim();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  assert.match(stdout, /^rejected TypeError: fetch failed: Requires net access to "127\.0\.0\.3:\d+"/);
});

Deno.test("createNodeConnector() sends again on a fresh connection when a reused keep-alive socket was closed", async () => {
  // Deno's node:http does this itself; the test pins it, since a lost call would otherwise end the
  // connection. Raw HTTP/1.1: the first connection answers once with keep-alive, then reads the
  // next request and closes without answering (a server dropping an idle socket just as it is
  // reused); later connections answer "fresh".
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let connections = 0;
  let isDroppedOnReuse = false;
  const serving = (async () => {
    for await (const conn of listener) {
      const n = ++connections;
      void (async () => {
        const buffer = new Uint8Array(4096);
        /** Reads one whole request (every request here has the body `{}`); false at end of stream. */
        const readRequest = async () => {
          let text = "";
          while (!text.endsWith("\r\n\r\n{}")) {
            const n = await conn.read(buffer);
            if (n === null) return false;
            text += new TextDecoder().decode(buffer.subarray(0, n));
          }
          return true;
        };
        const answer = (text: string) =>
          conn.write(
            new TextEncoder().encode(`HTTP/1.1 200 OK\r\ncontent-length: ${text.length}\r\n\r\n${text}`),
          );
        try {
          await readRequest();
          await answer(n === 1 ? "first" : "fresh");
          if (n === 1 && await readRequest()) isDroppedOnReuse = true;
        } finally {
          conn.close();
        }
      })();
    }
  })();
  const connector = createNodeConnector();
  const send = () =>
    connector.send({
      url: new URL(`http://127.0.0.1:${listener.addr.port}/`),
      addresses: ["127.0.0.1"],
      method: "POST",
      headers: new Headers(),
      body: new TextEncoder().encode("{}"),
    }).then((r) => r.text());
  try {
    assert.equal(await send(), "first");
    await new Promise((resolve) => setTimeout(resolve, 50)); // Let the socket go back to the keep-alive pool.
    assert.equal(await send(), "fresh");
    assert.ok(isDroppedOnReuse, "the second request went out on the reused socket first");
    assert.equal(connections, 2);
  } finally {
    connector.close();
    listener.close();
    await serving.catch(() => {}); // The accept loop ends with the listener.
  }
});
