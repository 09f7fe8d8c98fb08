import { describe, expect, it } from 'vitest';
import { contentTypeFor, resolveStoredPath, safeBasename, uploadName } from '../../../../server/gradio/files.ts';
import { ownerFolder } from '../../../../server/gradio/ownership.ts';

const I = 'a'.repeat(32);
const SHARED = '/data/up/shared';
const owned = `/data/up/${ownerFolder('user-1')}`;

describe('resolveStoredPath', () => {
  it.each<[string, string | null, string | null]>([
    [`${I}/x.png`, null, `${SHARED}/${I}/x.png`],
    [`${I}/x.png`, 'user-1', `${owned}/${I}/x.png`],
    // absolute server paths, traversal and other shapes never resolve
    [`/data/up/shared/${I}/x.png`, null, null],
    [`${I}/../${I}/x.png`, null, null],
    [`${I}/..`, null, null],
    [`../${I}/x.png`, null, null],
    ['/etc/passwd', null, null],
    [`.tmp/x`, null, null],
    [`${I.slice(1)}/x.png`, null, null],
    [`${'b'.repeat(64)}/x.png`, null, null],
    [`${I}/sub/x.png`, null, null],
    [I, null, null],
    ['', null, null],
    [`${I}/x\0.png`, null, null],
    [`${I}/a\u202egnp.exe`, null, null],
  ])('%s (owner %s) -> %s', (input, owner, expected) => {
    expect(resolveStoredPath('/data/up', input, owner)).toBe(expected);
  });

  it('gives each owner its own folder', () => {
    expect(ownerFolder('user-1')).not.toBe(ownerFolder('user-2'));
    expect(ownerFolder('user-1')).toMatch(/^u-[0-9a-f]{40}$/);
    expect(ownerFolder(null)).toBe('shared');
  });
});

describe('safeBasename', () => {
  it('keeps the last segment and strips risky characters', () => {
    expect(safeBasename('/home/me/report.pdf')).toBe('report.pdf');
    expect(safeBasename('C:\\Users\\me\\a.txt')).toBe('a.txt');
    expect(safeBasename('..')).toBe('_');
    expect(safeBasename(undefined)).toBe('blob');
    expect(safeBasename('a\nb.txt')).toBe('a_b.txt');
    // bidi controls would show "invoice\u202egnp.exe" as "invoiceexe.png"
    expect(safeBasename('invoice\u202egnp.exe')).toBe('invoicegnp.exe');
    expect(safeBasename('\u2066a\u2069\u200e\u200f\u061c.txt')).toBe('a.txt');
  });
});

describe('uploadName (issue 36 item 10)', () => {
  it.each([
    ['%2e%2e%2fx.txt', 'x.txt'],
    ['..%2F..%2Fetc%2Fpasswd', 'passwd'],
    ['%2E%2E%5Cwin.ini', 'win.ini'],
    ['%252e%252e%252fy.txt', 'y.txt'],
    ['%e0%a4%2e%2e%2fz.txt', 'z.txt'],
    ['%2e%2e', '_'],
    ['report%20final.pdf', 'report final.pdf'],
    ['caf%C3%A9.txt', 'café.txt'],
    ['50%off.txt', '50%off.txt'],
    ['notes.txt', 'notes.txt'],
    [undefined, 'blob'],
  ])('%s -> %s', (name, stored) => expect(uploadName(name)).toBe(stored));

  it('stores a name its owner reads back: resolveStoredPath accepts every stored name', () => {
    for (const name of ['%2e%2e%2fx.txt', '%252e%252e%252fy.txt', '%e0%a4%2e%2e%2fz.txt', '50%off.txt', 'caf%C3%A9.txt']) {
      expect(resolveStoredPath('/data/up', `${I}/${uploadName(name)}`)).not.toBeNull();
    }
  });
});

describe('contentTypeFor', () => {
  it('serves active content as a download', () => {
    expect(contentTypeFor('x.html')).toEqual({ type: 'application/octet-stream', inline: false });
    expect(contentTypeFor('x.svg').inline).toBe(false);
    expect(contentTypeFor('x.PNG')).toEqual({ type: 'image/png', inline: true });
  });
});
