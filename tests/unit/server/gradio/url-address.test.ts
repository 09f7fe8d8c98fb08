/**
 * Which addresses a file URL may reach (gradio/url-address.ts): the special ranges of both
 * families are refused, IPv4 carried in IPv6 is judged as the IPv4 it carries, allowed CIDRs win.
 */
import { describe, expect, it } from 'vitest';
import { addressAllowed, allowList, embeddedIpv4 } from '../../../../server/gradio/url-address.ts';

describe('addressAllowed', () => {
  it.each([
    '127.0.0.1', '127.255.255.254', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254',
    '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '198.18.0.1',
    '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1',
    '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:169.254.169.254', '64:ff9b::a9fe:a9fe', '2002:a9fe:a9fe::1', '::10.0.0.1',
    'not-an-ip',
  ])('refuses %s', (address) => {
    expect(addressAllowed(address)).toBe(false);
  });

  it.each(['93.184.216.34', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:93.184.216.34'])('allows the public %s', (address) => {
    expect(addressAllowed(address)).toBe(true);
  });

  it('allowed CIDRs win, for that range only', () => {
    const allow = allowList(['127.0.0.1/32', 'fd00::/8']);
    expect(addressAllowed('127.0.0.1', allow)).toBe(true);
    expect(addressAllowed('::ffff:127.0.0.1', allow)).toBe(true);
    expect(addressAllowed('fd00::5', allow)).toBe(true);
    expect(addressAllowed('127.0.0.2', allow)).toBe(false);
    expect(addressAllowed('169.254.169.254', allow)).toBe(false);
  });

  it('reads the IPv4 inside mapped, NAT64 and 6to4 addresses', () => {
    expect(embeddedIpv4('::ffff:10.0.0.1')).toBe('10.0.0.1');
    expect(embeddedIpv4('64:ff9b::7f00:1')).toBe('127.0.0.1');
    expect(embeddedIpv4('2002:c0a8:0101::')).toBe('192.168.1.1');
    expect(embeddedIpv4('2606:4700::1111')).toBeNull();
  });

  it('a bad allowed entry is an error', () => {
    expect(() => allowList(['localhost'])).toThrow(/not an IP or CIDR/);
  });
});
