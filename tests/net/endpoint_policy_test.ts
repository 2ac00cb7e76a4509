import assert from "node:assert/strict";
import ipaddr from "ipaddr.js";
import {
  checkEndpoint,
  checkEndpointUrl,
  classifyAddress,
  displayUrl,
  EndpointPolicyError,
} from "../../lib/net/endpoint_policy.ts";
import type { Resolver } from "../../lib/net/endpoint_policy.ts";
import { createGuardedFetch } from "../../lib/net/guarded_fetch.ts";
import type { Connector, PinnedRequest } from "../../lib/net/guarded_fetch.ts";

/** One vector of `testdata/endpoint_policy/vectors.json` (copied from shared/cases; see its README). */
interface Vector {
  url: string;
  resolved?: string[];
  allow: boolean;
  why: string;
  whatwg_host: string | null;
  whatwg_userinfo?: string;
  policy_dependent?: boolean;
  resolved_at_connect?: string[];
  expect_connect_only?: string[];
  redirects_to?: string;
}

const VECTORS: Vector[] = JSON.parse(
  await Deno.readTextFile(new URL("../../testdata/endpoint_policy/vectors.json", import.meta.url)),
);

/** Answers `first` on the first lookup and `later` on every other one (a rebinding DNS server). */
function rebindingResolver(first: string[], later: string[] = first): Resolver & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    resolve(host) {
      calls.push(host);
      return Promise.resolve(calls.length === 1 ? first : later);
    },
  };
}

/** Records what the guarded fetch asked to send; answers 200, or a 302 to `redirectTo`. */
function recordingConnector(redirectTo?: string): Connector & { sent: PinnedRequest[] } {
  const sent: PinnedRequest[] = [];
  return {
    sent,
    send(request) {
      sent.push(request);
      if (redirectTo !== undefined) {
        return Promise.resolve(new Response(null, { status: 302, headers: { location: redirectTo } }));
      }
      return Promise.resolve(new Response("ok"));
    },
    close() {},
  };
}

function isLiteralHost(whatwgHost: string | null): boolean {
  if (whatwgHost === null || whatwgHost === "PARSE_ERROR") return false;
  return whatwgHost.startsWith("[") || ipaddr.IPv4.isValidFourPartDecimal(whatwgHost);
}

/** Names without a `resolved` answer must get the same verdict whatever they resolve to. */
const ANY_ANSWERS: string[][] = [["93.184.215.14"], ["127.0.0.1"], ["10.0.0.1"], ["2606:4700:4700::1111"]];

async function runVector(v: Vector, answers: string[] | undefined) {
  const resolver = rebindingResolver(answers ?? [], v.resolved_at_connect);
  const connector = recordingConnector(v.redirects_to);
  const guarded = createGuardedFetch({ server: "vec", resolver, connector });
  let error: unknown;
  try {
    await guarded(v.url, { method: "POST", body: "{}" });
  } catch (e) {
    error = e;
  } finally {
    guarded.close();
  }
  return { error, resolver, connector };
}

for (const v of VECTORS) {
  Deno.test(`createGuardedFetch() gives the shared verdict (${v.allow ? "allow" : "refuse"}) for ${v.url}`, async () => {
    // The runtime's URL parser must agree with the WHATWG reading the vectors were written for.
    let host: string | null;
    try {
      host = new URL(v.url).hostname || null;
    } catch {
      host = "PARSE_ERROR";
    }
    assert.equal(host, v.whatwg_host, "WHATWG host");

    const literal = isLiteralHost(v.whatwg_host);
    const answerSets = v.resolved !== undefined ? [v.resolved] : literal ? [undefined] : ANY_ANSWERS;
    for (const answers of answerSets) {
      const { error, resolver, connector } = await runVector(v, answers);
      const label = `${v.url} (resolver answers ${JSON.stringify(answers)}): ${v.why}`;
      if (literal) assert.deepEqual(resolver.calls, [], `a literal host is never looked up: ${label}`);
      else if (error === undefined) assert.equal(resolver.calls.length, 1, `resolved exactly once: ${label}`);

      if (v.expect_connect_only !== undefined) {
        // Rebinding: allowed only if every connection went to the pinned, checked address.
        const connected = connector.sent.flatMap((r) => r.addresses);
        for (const address of connected) {
          assert.ok(
            v.expect_connect_only.includes(address),
            `connected only to ${v.expect_connect_only}: ${label}`,
          );
          assert.ok(!v.resolved_at_connect?.includes(address), `never to the rebound answer: ${label}`);
        }
        continue;
      }
      if (v.redirects_to !== undefined) {
        assert.ok(error instanceof EndpointPolicyError, label);
        assert.equal(error.code, "ENDPOINT_REDIRECT");
        assert.match(error.message, /302/);
        assert.ok(error.message.includes(displayUrl(v.redirects_to)), `names the Location: ${error.message}`);
        // Every hop is checked on its own too: the target is refused by the policy.
        assert.throws(() => checkEndpointUrl(v.redirects_to!), EndpointPolicyError);
        continue;
      }
      if (v.allow) {
        assert.equal(error, undefined, `${label}\n${error}`);
        assert.equal(connector.sent.length, 1);
        const expected = literal ? [v.whatwg_host!.replace(/^\[|\]$/g, "")] : answers!;
        const sentAddresses = connector.sent[0]!.addresses.map((a) => ipaddr.parse(a).toNormalizedString());
        assert.deepEqual(sentAddresses, expected.map((a) => ipaddr.parse(a).toNormalizedString()), label);
      } else {
        assert.ok(error instanceof EndpointPolicyError, `${label}\n${error}`);
        assert.match(error.code, /^ENDPOINT_/);
        assert.ok(error.message.startsWith(`Cannot connect to server "vec" at `), error.message);
        assert.ok(error.hint, `every refusal says what to change: ${error.message}`);
        assert.equal(connector.sent.length, 0, `nothing sent: ${label}`);
      }
    }
  });
}

Deno.test("vectors file holds all 100 shared vectors", () => {
  assert.equal(VECTORS.length, 100);
});

Deno.test("checkEndpoint() names the rule, the address and the server when a name resolves to a private address", async () => {
  const resolver = { resolve: () => Promise.resolve(["93.184.215.14", "10.1.2.3"]) };
  const error = await checkEndpoint("https://internal.example/mcp?token=s3cret", { server: "crm", resolver })
    .then(
      () => undefined,
      (e) => e,
    );
  assert.ok(error instanceof EndpointPolicyError);
  assert.equal(error.code, "ENDPOINT_PRIVATE_ADDRESS");
  assert.equal(error.address, "10.1.2.3");
  assert.equal(
    error.message,
    'Cannot connect to server "crm" at https://internal.example/mcp: internal.example resolves to 10.1.2.3, ' +
      "which is a private address (10.0.0.0/8), not a public address",
  );
  assert.match(error.hint!, /https at public addresses/);
  assert.ok(!error.message.includes("s3cret"), "the query string is not shown");
});

Deno.test("checkEndpoint() refuses plain http to a public name with a hint to use https", async () => {
  const error = await checkEndpoint("http://mcp.example.com/mcp", { server: "x" }).catch((e) => e);
  assert.ok(error instanceof EndpointPolicyError);
  assert.equal(error.code, "ENDPOINT_INSECURE_HTTP");
  assert.equal(error.hint, "use https://mcp.example.com/mcp");
});

Deno.test("checkEndpoint() refuses an odd IPv4 spelling naming the canonical form", () => {
  const error = (() => {
    try {
      checkEndpointUrl("http://0x7f.1/");
    } catch (e) {
      return e;
    }
  })();
  assert.ok(error instanceof EndpointPolicyError);
  assert.equal(error.code, "ENDPOINT_HOST_NOT_CANONICAL");
  assert.match(error.message, /"0x7f\.1" is an unusual spelling of 127\.0\.0\.1/);
  assert.equal(error.hint, "write the address as 127.0.0.1");
});

Deno.test("checkEndpoint() refuses localhost when it resolves outside loopback", async () => {
  const resolver = { resolve: () => Promise.resolve(["127.0.0.1", "192.168.1.5"]) };
  const error = await checkEndpoint("http://localhost:9000/", { resolver }).catch((e) => e);
  assert.ok(error instanceof EndpointPolicyError);
  assert.equal(error.code, "ENDPOINT_NOT_LOOPBACK");
  assert.equal(error.address, "192.168.1.5");
});

Deno.test("checkEndpoint() reports a failed lookup as ENDPOINT_UNRESOLVED with the cause", async () => {
  const resolver = { resolve: () => Promise.reject(new Error("getaddrinfo ENOTFOUND nowhere.example")) };
  const error = await checkEndpoint("https://nowhere.example/", { resolver }).catch((e) => e);
  assert.ok(error instanceof EndpointPolicyError);
  assert.equal(error.code, "ENDPOINT_UNRESOLVED");
  assert.match(error.message, /nowhere\.example could not be resolved: getaddrinfo ENOTFOUND/);
  assert.ok(error.cause instanceof Error);
});

Deno.test("checkEndpoint() refuses an empty answer and a non-address answer", async () => {
  const empty = await checkEndpoint("https://a.example/", {
    resolver: { resolve: () => Promise.resolve([]) },
  })
    .catch((e) => e);
  assert.equal(empty.code, "ENDPOINT_UNRESOLVED");
  const junk = await checkEndpoint("https://a.example/", {
    resolver: { resolve: () => Promise.resolve(["0x7f.1"]) },
  })
    .catch((e) => e);
  assert.equal(junk.code, "ENDPOINT_PRIVATE_ADDRESS");
  assert.match(junk.message, /not an IP address/);
});

Deno.test("checkEndpoint() drops a zone id from a resolved link-local answer and refuses it", async () => {
  const resolver = { resolve: () => Promise.resolve(["fe80::1%eth0"]) };
  const error = await checkEndpoint("https://a.example/", { resolver }).catch((e) => e);
  assert.equal(error.code, "ENDPOINT_PRIVATE_ADDRESS");
  assert.match(error.message, /link-local/);
});

Deno.test("displayUrl() masks userinfo and drops query and fragment", () => {
  assert.equal(displayUrl("https://user:pw@example.com/mcp?key=1#x"), "https://***@example.com/mcp");
  assert.equal(displayUrl("http://127.0.0.1:8080/mcp"), "http://127.0.0.1:8080/mcp");
});

Deno.test("classifyAddress() refuses everything ipaddr.js places in a special range", () => {
  // A sample across every ipaddr.js range: whatever ipaddr.js does not call unicast must not be public,
  // except the embedding prefixes, which are judged by the IPv4 they carry.
  const samples = [
    "0.1.2.3",
    "255.255.255.255",
    "226.1.1.1",
    "169.254.1.1",
    "127.9.9.9",
    "100.64.0.1",
    "10.9.9.9",
    "172.20.0.1",
    "192.168.0.1",
    "192.0.0.9",
    "192.0.2.9",
    "192.88.99.1",
    "198.19.0.1",
    "198.51.100.1",
    "203.0.113.1",
    "250.0.0.1",
    "192.175.48.1",
    "192.31.196.1",
    "192.52.193.1",
    "::",
    "fe80::9",
    "ff02::1",
    "::1",
    "fd12::1",
    "fec0::9",
    "100::9",
    "64:ff9b:1::1",
    "2001:2::9",
    "2001:3::9",
    "2001:4:112::1",
    "2620:4f:8000::1",
    "2001:10::1",
    "2001:20::1",
    "2001:30::1",
    "5f00::9",
    "2001:1::1",
    "2001:db8::9",
    "3fff:1::1",
  ];
  for (const sample of samples) {
    assert.notEqual(ipaddr.parse(sample).range(), "unicast", `sample ${sample} is special for ipaddr.js`);
    assert.equal(classifyAddress(sample).isPublic, false, sample);
  }
  for (const pub of ["8.8.8.8", "93.184.215.14", "2606:4700:4700::1111", "2a00:1450:4007::1"]) {
    assert.equal(classifyAddress(pub).isPublic, true, pub);
  }
});

Deno.test("classifyAddress() judges NAT64, 6to4, Teredo, mapped and RFC 6145 forms by the embedded IPv4", () => {
  assert.match(classifyAddress("64:ff9b::a9fe:a9fe").range, /NAT64 .* of 169\.254\.169\.254, a link-local/);
  assert.match(classifyAddress("2002:c0a8:101::1").range, /6to4 .* of 192\.168\.1\.1/);
  assert.match(classifyAddress("::ffff:0:a00:1").range, /RFC 6145 .* of 10\.0\.0\.1/);
  assert.match(classifyAddress("::ffff:7f00:1").range, /IPv4-mapped .* of 127\.0\.0\.1/);
  assert.equal(
    classifyAddress("::ffff:7f00:1").isLoopback,
    false,
    "mapped loopback is not explicit loopback",
  );
  assert.equal(classifyAddress("::1").isLoopback, true);
  assert.equal(classifyAddress("127.3.2.1").isLoopback, true);
});

Deno.test("classifyAddress() throws TypeError for text that is not an address", () => {
  assert.throws(() => classifyAddress("example.com"), TypeError);
});
