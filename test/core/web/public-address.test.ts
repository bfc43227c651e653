import t from 'tap';
import { isPublicAddress } from '../../../core/web/public-address.js';

const REFUSED = [
  // 0.0.0.0/8
  '0.0.0.0',
  '0.255.255.255',
  // 10/8
  '10.0.0.1',
  '10.255.255.255',
  // 100.64/10
  '100.64.0.0',
  '100.127.255.255',
  // 127/8
  '127.0.0.1',
  '127.255.0.9',
  // 169.254/16
  '169.254.169.254',
  // 172.16/12
  '172.16.0.1',
  '172.31.255.255',
  // 192.0.0/24
  '192.0.0.8',
  // 192.168/16
  '192.168.1.1',
  // 198.18/15
  '198.18.0.1',
  '198.19.255.255',
  // multicast, 240/4, broadcast
  '224.0.0.1',
  '239.255.255.250',
  '240.0.0.1',
  '255.255.255.255',
  // IPv6 unspecified, loopback, unique local, link-local, site-local, multicast
  '::',
  '::1',
  '0:0:0:0:0:0:0:1',
  'fc00::1',
  'fd12:3456::1',
  'fe80::1',
  'fe80::1%eth0',
  'febf:ffff::1',
  'fec0::1',
  'ff02::1',
  'FF05::2',
  // IPv4-mapped, translated, compatible, NAT64 and 6to4 forms of refused IPv4 addresses
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::FFFF:10.1.2.3',
  '::ffff:169.254.169.254',
  '::ffff:0:192.168.0.1',
  '::ffff:0:a00:1',
  '::127.0.0.1',
  '64:ff9b::7f00:1',
  '64:ff9b::10.0.0.1',
  '64:ff9b:1::8.8.8.8',
  '2002:7f00:1::1',
  '2002:c0a8:101::',
  // not an address at all
  'localhost',
  '',
  '1.2.3',
  '256.1.1.1',
  '::ffff:1.2.3.4.5',
];

const PUBLIC = [
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
  '192.0.1.1',
  '192.167.255.255',
  '192.169.0.0',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '2001:4860:4860::8888',
  '2606:4700:4700::1111',
  '2a00:1450:4001:80b::200e',
  'fbff::1',
  'fe7f::1',
  '::ffff:8.8.8.8',
  '::ffff:0808:0808',
  '::ffff:0:8.8.8.8',
  '64:ff9b::8.8.8.8',
  '2002:808:808::1',
];

t.test('every refused range, in IPv4 and in the IPv6 forms that carry it, is not public', async (t) => {
  for (const address of REFUSED) t.equal(isPublicAddress(address), false, address);
});

t.test('public addresses, either side of each refused range, are public', async (t) => {
  for (const address of PUBLIC) t.equal(isPublicAddress(address), true, address);
});
