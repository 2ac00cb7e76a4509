/**
 * Classifies one IP address for the endpoint policy: public (global unicast outside the IANA
 * special-purpose registries), loopback, or some other special range, named for messages.
 * Addresses that embed an IPv4 (mapped, compatible, RFC 6145, NAT64, 6to4, Teredo) are judged by
 * the IPv4 they carry. Private helper of `endpoint_policy.ts`.
 *
 * @module
 */
import ipaddr from "ipaddr.js";

/** The class of one address. */
export interface AddressClass {
  /** Global unicast outside every special-purpose range (embedded IPv4s public too). */
  isPublic: boolean;
  /** `127.0.0.0/8` or `::1` exactly (an IPv4-mapped loopback is not loopback here). */
  isLoopback: boolean;
  /** The range, for messages, e.g. `a private address (10.0.0.0/8)` or `a public address`. */
  range: string;
}

type Range = [cidr: string, label: string];

/** IPv4 special-purpose ranges (IANA registry, RFC 6890 and successors); first match wins. */
const IPV4_SPECIAL: Range[] = [
  ["0.0.0.0/32", "the unspecified address"],
  ["0.0.0.0/8", `a "this network" address (0.0.0.0/8)`],
  ["10.0.0.0/8", "a private address (10.0.0.0/8)"],
  ["100.64.0.0/10", "a carrier-grade NAT address (100.64.0.0/10)"],
  ["127.0.0.0/8", "a loopback address (127.0.0.0/8)"],
  ["169.254.0.0/16", "a link-local address (169.254.0.0/16, where cloud metadata services live)"],
  ["172.16.0.0/12", "a private address (172.16.0.0/12)"],
  ["192.0.0.0/24", "an IETF protocol assignment (192.0.0.0/24)"],
  ["192.0.2.0/24", "a documentation address (192.0.2.0/24)"],
  ["192.31.196.0/24", "an AS112 anycast address (192.31.196.0/24)"],
  ["192.52.193.0/24", "an AMT anycast address (192.52.193.0/24)"],
  ["192.88.99.0/24", "a 6to4 relay anycast address (192.88.99.0/24)"],
  ["192.168.0.0/16", "a private address (192.168.0.0/16)"],
  ["192.175.48.0/24", "an AS112 anycast address (192.175.48.0/24)"],
  ["198.18.0.0/15", "a benchmarking address (198.18.0.0/15)"],
  ["198.51.100.0/24", "a documentation address (198.51.100.0/24)"],
  ["203.0.113.0/24", "a documentation address (203.0.113.0/24)"],
  ["224.0.0.0/4", "a multicast address (224.0.0.0/4)"],
  ["255.255.255.255/32", "the broadcast address"],
  ["240.0.0.0/4", "a reserved address (240.0.0.0/4)"],
];

/** IPv6 special-purpose ranges not handled by decoding an embedded IPv4; first match wins. */
const IPV6_SPECIAL: Range[] = [
  ["::/128", "the unspecified address (::)"],
  ["::1/128", "the loopback address (::1)"],
  ["64:ff9b:1::/48", "a local-use NAT64 address (64:ff9b:1::/48)"],
  ["100::/64", "a discard-only address (100::/64)"],
  ["2001:2::/48", "a benchmarking address (2001:2::/48)"],
  ["2001::/23", "an IETF protocol assignment (2001::/23)"],
  ["2001:db8::/32", "a documentation address (2001:db8::/32)"],
  ["2620:4f:8000::/48", "an AS112 anycast address (2620:4f:8000::/48)"],
  ["3fff::/20", "a documentation address (3fff::/20)"],
  ["5f00::/16", "an SRv6 segment identifier (5f00::/16)"],
  ["fc00::/7", "a unique local (private) address (fc00::/7)"],
  ["fe80::/10", "a link-local address (fe80::/10)"],
  ["fec0::/10", "a site-local address (fec0::/10, deprecated)"],
  ["ff00::/8", "a multicast address (ff00::/8)"],
];

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR("2000::/3");
const LOOPBACK_V4 = ipaddr.IPv4.parseCIDR("127.0.0.0/8");
const LOOPBACK_V6 = ipaddr.IPv6.parseCIDR("::1/128");
const V4_TABLE = IPV4_SPECIAL.map(([cidr, label]) => [ipaddr.IPv4.parseCIDR(cidr), label] as const);
const V6_TABLE = IPV6_SPECIAL.map(([cidr, label]) => [ipaddr.IPv6.parseCIDR(cidr), label] as const);

function classifyV4(addr: ipaddr.IPv4): AddressClass {
  for (const [range, label] of V4_TABLE) {
    if (addr.match(range)) return { isPublic: false, isLoopback: addr.match(LOOPBACK_V4), range: label };
  }
  return { isPublic: true, isLoopback: false, range: "a public address" };
}

function v4FromWords(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/** The IPv4 addresses an IPv6 address carries, with how it carries them; `undefined` if none. */
function embeddedV4(addr: ipaddr.IPv6): { how: string; v4: ipaddr.IPv4[] } | undefined {
  const p = addr.parts as [number, number, number, number, number, number, number, number];
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && p[5] === 0xffff) return { how: "an IPv4-mapped address", v4: [v4FromWords(p[6], p[7])] };
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) {
    return { how: "an RFC 6145 translated address", v4: [v4FromWords(p[6], p[7])] };
  }
  if (zeros(0, 6) && (p[6] !== 0 || p[7] > 1)) {
    return { how: "an IPv4-compatible address", v4: [v4FromWords(p[6], p[7])] };
  }
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) {
    return { how: "a NAT64 address (64:ff9b::/96)", v4: [v4FromWords(p[6], p[7])] };
  }
  if (p[0] === 0x2002) return { how: "a 6to4 address (2002::/16)", v4: [v4FromWords(p[1], p[2])] };
  if (p[0] === 0x2001 && p[1] === 0) {
    // Teredo: server in bits 32-63, client = bitwise NOT of bits 96-127 (RFC 4380).
    return {
      how: "a Teredo address (2001::/32)",
      v4: [v4FromWords(p[2], p[3]), v4FromWords(~p[6] & 0xffff, ~p[7] & 0xffff)],
    };
  }
  return undefined;
}

/**
 * Classifies one address.
 *
 * @param address IPv4 in canonical dotted form or IPv6 text (no brackets, no zone id).
 * @throws {TypeError} when `address` is not an IP address.
 * @example
 * ```ts
 * import { classifyAddress } from "./_address_class.ts";
 * classifyAddress("64:ff9b::a9fe:a9fe").isPublic; // false: NAT64 of 169.254.169.254
 * ```
 */
export function classifyAddress(address: string): AddressClass {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  if (ipaddr.IPv4.isValidFourPartDecimal(address)) addr = ipaddr.IPv4.parse(address);
  else if (ipaddr.IPv6.isValid(address)) addr = ipaddr.IPv6.parse(address);
  else throw new TypeError(`Cannot classify "${address}": not an IP address`);
  if (addr.kind() === "ipv4") return classifyV4(addr as ipaddr.IPv4);
  const v6 = addr as ipaddr.IPv6;
  const embedded = embeddedV4(v6);
  if (embedded) {
    for (const v4 of embedded.v4) {
      const inner = classifyV4(v4);
      if (!inner.isPublic) {
        return {
          isPublic: false,
          isLoopback: false,
          range: `${embedded.how} of ${v4.toString()}, ${inner.range}`,
        };
      }
    }
    return { isPublic: true, isLoopback: false, range: `${embedded.how} of a public IPv4` };
  }
  for (const [range, label] of V6_TABLE) {
    if (v6.match(range)) return { isPublic: false, isLoopback: v6.match(LOOPBACK_V6), range: label };
  }
  if (!v6.match(GLOBAL_UNICAST_V6)) {
    return {
      isPublic: false,
      isLoopback: false,
      range: "a reserved address (outside global unicast 2000::/3)",
    };
  }
  return { isPublic: true, isLoopback: false, range: "a public address" };
}
