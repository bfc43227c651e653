import { isIPv4, isIPv6 } from 'node:net';

/** IPv4 ranges that are not public, as [first address, prefix length]; 240/4 includes the broadcast. */
const REFUSED_IPV4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

const refusedIpv4 = REFUSED_IPV4.map(([first, bits]) => ({ first: ipv4Number(first), bits }));

/**
 * Whether `address` is an IP address the daemon may connect to on a model's behalf: false for loopback,
 * private, shared, link-local, benchmarking, multicast and reserved IPv4; for `::`, `::1`, unique local,
 * link-local, site-local and multicast IPv6; and for IPv6 forms that carry a refused IPv4 address
 * (mapped, translated, compatible, NAT64, 6to4). Anything that is not an IP address is false.
 */
export function isPublicAddress(address: string): boolean {
  if (isIPv4(address)) return isPublicIpv4(ipv4Number(address));
  const bare = address.split('%')[0]!;
  if (!isIPv6(bare)) return false;
  return isPublicIpv6(ipv6Bytes(bare));
}

function isPublicIpv4(value: number): boolean {
  return refusedIpv4.every(({ first, bits }) => value >>> (32 - bits) !== first >>> (32 - bits));
}

function isPublicIpv6(bytes: number[]): boolean {
  const [b0 = 0, b1 = 0] = bytes;
  if (b0 === 0xff) return false; // ff00::/8 multicast
  if ((b0 & 0xfe) === 0xfc) return false; // fc00::/7 unique local
  if (b0 === 0xfe && (b1 & 0x80) === 0x80) return false; // fe80::/10 link-local and fec0::/10 site-local
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((byte) => byte === 0);
  const embedded = (at: number) => isPublicIpv4(bytesNumber(bytes.slice(at, at + 4)));
  // ::/96 holds ::, ::1 and the IPv4-compatible forms, whose IPv4 part decides.
  if (zeros(0, 12)) return embedded(12);
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return embedded(12); // ::ffff:0:0/96 mapped
  if (zeros(0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && zeros(10, 12)) return embedded(12); // translated
  if (b0 === 0x00 && b1 === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b) {
    // 64:ff9b::/96 is the well-known NAT64 prefix; 64:ff9b:1::/48 is for local use only.
    return zeros(4, 12) ? embedded(12) : !(bytes[4] === 0 && bytes[5] === 1);
  }
  if (b0 === 0x20 && b1 === 0x02) return embedded(2); // 2002::/16 6to4
  return true;
}

function ipv4Number(address: string): number {
  return bytesNumber(address.split('.').map(Number));
}

function bytesNumber(bytes: number[]): number {
  return bytes.reduce((value, byte) => value * 256 + byte, 0);
}

/** The 16 bytes of a valid IPv6 address, a trailing dotted quad included. */
function ipv6Bytes(address: string): number[] {
  let text = address;
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad !== null) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const words = (part: string) =>
    part === '' ? [] : part.split(':').map((word) => Number.parseInt(word, 16));
  const before = words(head);
  const after = tail === undefined ? [] : words(tail);
  const all = [...before, ...Array<number>(8 - before.length - after.length).fill(0), ...after];
  return all.flatMap((word) => [word >> 8, word & 0xff]);
}
