import { BlockList } from 'node:net';
import ipaddr from 'ipaddr.js';
import t from 'tap';
import { isPrivateAddress, isPublicAddress } from '../../../core/web/public-address.js';

interface SpecialBlock {
  block: string;
  name: string;
  rfc: string;
  /** `allow_private_addresses` opens it. */
  private?: true;
}

/** The IANA IPv4 Special-Purpose Address Registry, every block in its order. */
const IPV4_SPECIAL: SpecialBlock[] = [
  { block: '0.0.0.0/8', name: '"This network"', rfc: 'RFC 791, Section 3.2' },
  { block: '0.0.0.0/32', name: '"This host on this network"', rfc: 'RFC 1122, Section 3.2.1.3' },
  { block: '10.0.0.0/8', name: 'Private-Use', rfc: 'RFC 1918', private: true },
  { block: '100.64.0.0/10', name: 'Shared Address Space', rfc: 'RFC 6598', private: true },
  { block: '127.0.0.0/8', name: 'Loopback', rfc: 'RFC 1122, Section 3.2.1.3', private: true },
  { block: '169.254.0.0/16', name: 'Link Local', rfc: 'RFC 3927', private: true },
  { block: '172.16.0.0/12', name: 'Private-Use', rfc: 'RFC 1918', private: true },
  { block: '192.0.0.0/24', name: 'IETF Protocol Assignments', rfc: 'RFC 6890, Section 2.1' },
  { block: '192.0.0.0/29', name: 'IPv4 Service Continuity Prefix', rfc: 'RFC 7335' },
  { block: '192.0.0.8/32', name: 'IPv4 dummy address', rfc: 'RFC 7600' },
  { block: '192.0.0.9/32', name: 'Port Control Protocol Anycast', rfc: 'RFC 7723' },
  { block: '192.0.0.10/32', name: 'Traversal Using Relays around NAT Anycast', rfc: 'RFC 8155' },
  { block: '192.0.0.170/32', name: 'NAT64/DNS64 Discovery', rfc: 'RFC 8880; RFC 7050, Section 2.2' },
  { block: '192.0.0.171/32', name: 'NAT64/DNS64 Discovery', rfc: 'RFC 8880; RFC 7050, Section 2.2' },
  { block: '192.0.2.0/24', name: 'Documentation (TEST-NET-1)', rfc: 'RFC 5737' },
  { block: '192.31.196.0/24', name: 'AS112-v4', rfc: 'RFC 7535' },
  { block: '192.52.193.0/24', name: 'AMT', rfc: 'RFC 7450' },
  { block: '192.88.99.0/24', name: 'Deprecated (6to4 Relay Anycast)', rfc: 'RFC 7526' },
  { block: '192.88.99.2/32', name: '6a44-relay anycast address', rfc: 'RFC 6751' },
  { block: '192.168.0.0/16', name: 'Private-Use', rfc: 'RFC 1918', private: true },
  { block: '192.175.48.0/24', name: 'Direct Delegation AS112 Service', rfc: 'RFC 7534' },
  { block: '198.18.0.0/15', name: 'Benchmarking', rfc: 'RFC 2544' },
  { block: '198.51.100.0/24', name: 'Documentation (TEST-NET-2)', rfc: 'RFC 5737' },
  { block: '203.0.113.0/24', name: 'Documentation (TEST-NET-3)', rfc: 'RFC 5737' },
  { block: '240.0.0.0/4', name: 'Reserved', rfc: 'RFC 1112, Section 4' },
  { block: '255.255.255.255/32', name: 'Limited Broadcast', rfc: 'RFC 8190; RFC 919, Section 7' },
];

/** The IANA IPv6 Special-Purpose Address Registry, every block in its order. */
const IPV6_SPECIAL: SpecialBlock[] = [
  { block: '::1/128', name: 'Loopback Address', rfc: 'RFC 4291', private: true },
  { block: '::/128', name: 'Unspecified Address', rfc: 'RFC 4291' },
  { block: '::ffff:0:0/96', name: 'IPv4-mapped Address', rfc: 'RFC 4291' },
  { block: '64:ff9b::/96', name: 'IPv4-IPv6 Translat.', rfc: 'RFC 6052' },
  { block: '64:ff9b:1::/48', name: 'IPv4-IPv6 Translat.', rfc: 'RFC 8215' },
  { block: '100::/64', name: 'Discard-Only Address Block', rfc: 'RFC 6666' },
  { block: '100:0:0:1::/64', name: 'Dummy IPv6 Prefix', rfc: 'RFC 9780' },
  { block: '2001::/23', name: 'IETF Protocol Assignments', rfc: 'RFC 2928' },
  { block: '2001::/32', name: 'TEREDO', rfc: 'RFC 4380; RFC 8190' },
  { block: '2001:1::1/128', name: 'Port Control Protocol Anycast', rfc: 'RFC 7723' },
  { block: '2001:1::2/128', name: 'Traversal Using Relays around NAT Anycast', rfc: 'RFC 8155' },
  { block: '2001:1::3/128', name: 'DNS-SD Service Registration Protocol Anycast Address', rfc: 'RFC 9665' },
  { block: '2001:2::/48', name: 'Benchmarking', rfc: 'RFC 5180' },
  { block: '2001:3::/32', name: 'AMT', rfc: 'RFC 7450' },
  { block: '2001:4:112::/48', name: 'AS112-v6', rfc: 'RFC 7535' },
  { block: '2001:10::/28', name: 'Deprecated (previously ORCHID)', rfc: 'RFC 4843' },
  { block: '2001:20::/28', name: 'ORCHIDv2', rfc: 'RFC 7343' },
  { block: '2001:30::/28', name: 'Drone Remote ID Protocol Entity Tags (DETs) Prefix', rfc: 'RFC 9374' },
  { block: '2001:db8::/32', name: 'Documentation', rfc: 'RFC 3849' },
  { block: '2002::/16', name: '6to4', rfc: 'RFC 3056' },
  { block: '2620:4f:8000::/48', name: 'Direct Delegation AS112 Service', rfc: 'RFC 7534' },
  { block: '3fff::/20', name: 'Documentation', rfc: 'RFC 9637' },
  { block: '5f00::/16', name: 'Segment Routing (SRv6) SIDs', rfc: 'RFC 9602' },
  { block: 'fc00::/7', name: 'Unique-Local', rfc: 'RFC 4193; RFC 8190', private: true },
  { block: 'fe80::/10', name: 'Link-Local Unicast', rfc: 'RFC 4291', private: true },
];

/** Blocks outside those registries that are never a public unicast destination either. */
const ALSO_REFUSED: SpecialBlock[] = [
  { block: '224.0.0.0/4', name: 'IPv4 multicast', rfc: 'RFC 5771' },
  { block: '::/96', name: 'IPv4-compatible (deprecated)', rfc: 'RFC 4291, Section 2.5.5.1' },
  { block: '::ffff:0:0:0/96', name: 'IPv4-translated', rfc: 'RFC 2765' },
  { block: 'fec0::/10', name: 'Site-local (deprecated)', rfc: 'RFC 3879' },
  { block: 'ff00::/8', name: 'IPv6 multicast', rfc: 'RFC 4291' },
];

const EVERY_BLOCK = [...IPV4_SPECIAL, ...IPV6_SPECIAL, ...ALSO_REFUSED];

/** The first address of a block, one in its middle and its last, computed from its bits. */
function samples(block: string): string[] {
  const [base, bits] = ipaddr.parseCIDR(block);
  const bytes = base.toByteArray();
  const width = BigInt(bytes.length * 8);
  const value = bytes.reduce((sum, byte) => (sum << 8n) | BigInt(byte), 0n);
  const hostBits = width - BigInt(bits);
  const first = (value >> hostBits) << hostBits;
  const last = first | ((1n << hostBits) - 1n);
  const inside = first + (last - first + 1n) / 2n;
  return [first, inside, last].map((number) => {
    const out = Array.from({ length: bytes.length }, (_, index) =>
      Number((number >> (8n * BigInt(bytes.length - 1 - index))) & 0xffn),
    );
    return ipaddr.fromByteArray(out).toString();
  });
}

/** Node's own subnet matcher, to check that every sample really lies in its block. */
function contains(block: string, address: string): boolean {
  const [base = '', bits = ''] = block.split('/');
  const family = base.includes(':') ? 'ipv6' : 'ipv4';
  const list = new BlockList();
  list.addSubnet(base, Number(bits), family);
  return list.check(address, family);
}

t.test('the samples are the first, a middle and the last address of each block', async (t) => {
  t.same(samples('10.0.0.0/8'), ['10.0.0.0', '10.128.0.0', '10.255.255.255']);
  t.same(samples('192.0.0.9/32'), ['192.0.0.9', '192.0.0.9', '192.0.0.9']);
  t.same(samples('2001:db8::/32'), [
    '2001:db8::',
    '2001:db8:8000::',
    '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff',
  ]);
  for (const { block } of EVERY_BLOCK) {
    for (const address of samples(block)) t.ok(contains(block, address), `${address} is in ${block}`);
  }
});

t.test(
  'every address at the start, inside and at the end of every special-purpose block is refused',
  async (t) => {
    for (const { block, name, rfc } of EVERY_BLOCK) {
      for (const address of samples(block)) {
        t.equal(isPublicAddress(address), false, `${address}: ${block} ${name} (${rfc})`);
      }
    }
  },
);

t.test(
  'allow_private_addresses opens exactly the loopback, private, link-local and local blocks',
  async (t) => {
    for (const { block, name, private: opened = false } of EVERY_BLOCK) {
      for (const address of samples(block)) {
        t.equal(isPrivateAddress(address), opened, `${address}: ${block} ${name}`);
      }
    }
  },
);

t.test('IPv6 forms that carry an IPv4 address are refused whatever that address is', async (t) => {
  for (const address of [
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::FFFF:10.1.2.3',
    '::ffff:8.8.8.8',
    '::ffff:0:8.8.8.8',
    '::ffff:0:7f00:1',
    '::127.0.0.1',
    '::7f00:1',
    '::8.8.8.8',
    '::808:808',
    '64:ff9b::8.8.8.8',
    '64:ff9b::7f00:1',
    '64:ff9b:1::808:808',
    '2002:808:808::1',
    '2002:7f00:1::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  ]) {
    t.equal(isPublicAddress(address), false, address);
    t.equal(isPrivateAddress(address), false, `${address} is not opened by allow_private_addresses`);
  }
});

t.test('public addresses of both families, beside the refused blocks, are public', async (t) => {
  for (const address of [
    '1.1.1.1',
    '8.8.8.8',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '191.255.255.255',
    '192.0.1.0',
    '192.0.3.0',
    '192.31.195.255',
    '192.31.197.0',
    '192.52.192.255',
    '192.52.194.0',
    '192.88.98.255',
    '192.88.100.0',
    '192.167.255.255',
    '192.169.0.0',
    '192.175.47.255',
    '192.175.49.0',
    '198.17.255.255',
    '198.20.0.0',
    '198.51.99.255',
    '198.51.101.0',
    '203.0.112.255',
    '203.0.114.0',
    '223.255.255.255',
    '2001:4860:4860::8888',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '2001:200::1',
    '2001:db7:ffff:ffff:ffff:ffff:ffff:ffff',
    '2001:db9::',
    '2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    '2003::',
    '2620:4f:7fff:ffff:ffff:ffff:ffff:ffff',
    '2620:4f:8001::',
    '3ffe:ffff::1',
    '3fff:1000::',
  ]) {
    t.equal(isPublicAddress(address), true, address);
    t.equal(isPrivateAddress(address), false, `${address} is not private`);
  }
});

t.test('a zone index does not change the verdict', async (t) => {
  t.equal(isPublicAddress('fe80::1%eth0'), false);
  t.equal(isPrivateAddress('fe80::1%eth0'), true);
});

t.test(
  'what is not an IP address, or only a loose spelling of one, is neither public nor private',
  async (t) => {
    for (const address of [
      'localhost',
      '',
      '1.2.3',
      '256.1.1.1',
      '8.8.8.08',
      '127.1',
      '0x7f.0.0.1',
      '2130706433',
      '[::1]',
      '::ffff:1.2.3.4.5',
      '2001:4860:4860::8888::',
    ]) {
      t.equal(isPublicAddress(address), false, address);
      t.equal(isPrivateAddress(address), false, address);
    }
  },
);
