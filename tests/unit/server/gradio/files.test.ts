import { describe, expect, it } from 'vitest';
import { contentTypeFor, resolveStoredPath, safeBasename } from '../../../../server/gradio/files.ts';

const H = 'a'.repeat(64);

describe('resolveStoredPath', () => {
  it.each([
    [`/data/up/${H}/x.png`, `/data/up/${H}/x.png`],
    [`${H}/x.png`, `/data/up/${H}/x.png`],
    [`/data/up/${H}/../${H}/x.png`, `/data/up/${H}/x.png`],
    [`/data/up/${H}/../../etc/passwd`, null],
    ['/etc/passwd', null],
    [`/data/up/.tmp/x`, null],
    [`/data/up/${H.slice(1)}/x.png`, null],
    [`/data/up/${H}/sub/x.png`, null],
    [`/data/up/${H}`, null],
    [`/data/upx/${H}/x.png`, null],
    ['', null],
    [`${H}/x\0.png`, null],
  ])('%s -> %s', (input, expected) => {
    expect(resolveStoredPath('/data/up', input)).toBe(expected);
  });
});

describe('safeBasename', () => {
  it('keeps the last segment and strips risky characters', () => {
    expect(safeBasename('/home/me/report.pdf')).toBe('report.pdf');
    expect(safeBasename('C:\\Users\\me\\a.txt')).toBe('a.txt');
    expect(safeBasename('..')).toBe('_');
    expect(safeBasename(undefined)).toBe('blob');
    expect(safeBasename('a\nb.txt')).toBe('a_b.txt');
  });
});

describe('contentTypeFor', () => {
  it('serves active content as a download', () => {
    expect(contentTypeFor('x.html')).toEqual({ type: 'application/octet-stream', inline: false });
    expect(contentTypeFor('x.svg').inline).toBe(false);
    expect(contentTypeFor('x.PNG')).toEqual({ type: 'image/png', inline: true });
  });
});
