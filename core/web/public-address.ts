import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * IPv6 blocks ipaddr.js 2.5 calls `unicast` that are not: the dummy prefix of the IANA IPv6 Special-Purpose
 * Address Registry (RFC 9780), and the deprecated IPv4-compatible addresses (RFC 4291), which carry an IPv4
 * address of any kind.
 */
const UNLISTED_IPV6 = [ipaddr.IPv6.parseCIDR('100:0:0:1::/64'), ipaddr.IPv6.parseCIDR('::/96')];

/** ipaddr.js's range names that `allow_private_addresses` opens (docs/protocol.md, "Built-in tools"). */
const PRIVATE_RANGES: ReadonlySet<string> = new Set([
  'loopback',
  'private',
  'linkLocal',
  'carrierGradeNat',
  'uniqueLocal',
]);

/**
 * Whether `address` is an IP address the daemon may connect to on a model's behalf: only what ipaddr.js
 * classifies as `unicast`, so every block of the IANA IPv4 and IPv6 special-purpose registries is refused,
 * and so are the IPv6 forms that carry an IPv4 address (mapped, translated, compatible, NAT64, 6to4,
 * Teredo), whatever that address is. Anything that is not an IP address is false.
 */
export function isPublicAddress(address: string): boolean {
  return rangeOf(address) === 'unicast';
}

/** Whether `address` lies in a range `allow_private_addresses` opens: loopback, private, link-local and the like. */
export function isPrivateAddress(address: string): boolean {
  const range = rangeOf(address);
  return range !== null && PRIVATE_RANGES.has(range);
}

/** ipaddr.js's name for the range of `address`, `unlisted` for the blocks it misses, null for a non-address. */
function rangeOf(address: string): string | null {
  // Node's check is the strict one: ipaddr.js alone would read `127.1` or `0x7f.0.0.1` as addresses too.
  if (isIP(address) === 0 || !ipaddr.isValid(address)) return null;
  const parsed = ipaddr.parse(address);
  const range = parsed.range();
  if (range === 'unicast' && parsed.kind() === 'ipv6' && UNLISTED_IPV6.some((block) => parsed.match(block))) {
    return 'unlisted';
  }
  return range;
}
