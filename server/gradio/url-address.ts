/**
 * Which addresses a file URL may be fetched from (server-side request forgery): never loopback,
 * private, link-local (the cloud metadata service at 169.254.169.254), shared, multicast or
 * otherwise special ranges, in IPv4 or IPv6, including IPv4 carried inside IPv6 (mapped, NAT64,
 * 6to4). The check is on the resolved address, never on the name. `allow` CIDRs are a seam
 * (FILE_URL_FETCH_ALLOW_CIDRS) for tests on loopback and for an operator's own file server. Pure.
 * @module
 */
import { BlockList, isIP } from 'node:net';

const REFUSED_V4 = [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared (carrier-grade NAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, the metadata service
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
] as const;

const REFUSED_V6 = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local (private)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const;

const refused = new BlockList();
for (const [net, bits] of REFUSED_V4) refused.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of REFUSED_V6) refused.addSubnet(net, bits, 'ipv6');

/** The IPv4 address an IPv6 one carries (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16), or null. */
export function embeddedIpv4(address: string): string | null {
  const words = expandIpv6(address);
  if (!words) return null;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  if (zeros(0, 5) && (words[5] === 0xffff || words[5] === 0) && !(words[5] === 0 && words[6] === 0)) return v4(words[6], words[7]);
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return v4(words[6], words[7]);
  if (words[0] === 0x2002) return v4(words[1], words[2]);
  return null;
}

/** Eight 16-bit words of an IPv6 address (a dotted IPv4 tail allowed), or null when it is not one. */
function expandIpv6(address: string): number[] | null {
  if (isIP(address) !== 6) return null;
  let text = address.split('%')[0];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const parse = (part: string) => (part ? part.split(':').map((w) => parseInt(w, 16)) : []);
  const left = parse(head);
  const right = tail === null ? [] : parse(tail);
  const fill = tail === null ? [] : new Array(8 - left.length - right.length).fill(0);
  const words = [...left, ...fill, ...right];
  return words.length === 8 ? words : null;
}

/** Parses `10.0.0.0/8`, `127.0.0.1`, `::1/128` into a BlockList of allowed ranges; throws on a bad entry. */
export function allowList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of cidrs) {
    const [ip, bits] = entry.split('/');
    const family = isIP(ip);
    if (family === 0) throw new Error(`not an IP or CIDR: ${entry}`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(ip, type);
    else list.addSubnet(ip, Number(bits), type);
  }
  return list;
}

/**
 * Whether a file URL may be fetched from `address` (an IP). Allowed CIDRs win; otherwise the
 * address, and any IPv4 address it carries, must be public.
 */
export function addressAllowed(address: string, allow?: BlockList): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const inner = family === 6 ? embeddedIpv4(address) : null;
  if (allow && (allow.check(address, type) || (inner !== null && allow.check(inner, 'ipv4')))) return true;
  if (refused.check(address, type)) return false;
  return inner === null || !refused.check(inner, 'ipv4');
}
