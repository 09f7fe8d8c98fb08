import { describe, expect, it } from 'vitest';
import { classifyFile, extensionOf, looksLikeText } from '../../../../server/attachments/classify.ts';

const bytes = (s: string) => new TextEncoder().encode(s);
const bin = (...b: number[]) => new Uint8Array(b);
const PNG = bin(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13);
const JPEG = bin(0xff, 0xd8, 0xff, 0xe0, 0, 0x10);
const GIF = bytes('GIF89a\x01\x00');
const WEBP = bin(0x52, 0x49, 0x46, 0x46, 1, 0, 0, 0, 0x57, 0x45, 0x42, 0x50);
const PDF = bytes('%PDF-1.7\n%âãÏÓ\n');

describe('classifyFile', () => {
  it.each([
    ['plain text by sniffing', 'notes', undefined, bytes('hello\nworld\n'), 'text', 'text/plain'],
    ['a log', 'app.log', 'text/plain', bytes('2026-12-01 ERROR boom\n'), 'text', 'text/plain'],
    ['csv with its type', 'data.csv', 'text/csv', bytes('a,b\n1,2\n'), 'text', 'text/csv'],
    ['csv named only', 'data.csv', undefined, bytes('a,b\n1,2\n'), 'text', 'text/csv'],
    ['markdown named, claimed octet-stream', 'r.md', 'application/octet-stream', bytes('# hi\n'), 'text', 'text/markdown'],
    ['json', 'x.json', 'application/json', bytes('{"a":1}'), 'text', 'application/json'],
    ['source code, no type', 'main.ts', undefined, bytes('export const a = 1;\n'), 'text', 'text/plain'],
    ['utf-8 text with accents', 'fr.md', '', bytes('Déploiement réussi ✓\n'), 'text', 'text/markdown'],
    ['png by magic, whatever its name', 'photo.txt', 'text/plain', PNG, 'image', 'image/png'],
    ['jpeg', 'a.jpg', 'image/jpeg', JPEG, 'image', 'image/jpeg'],
    ['gif', 'a.gif', undefined, GIF, 'image', 'image/gif'],
    ['webp', 'a.webp', undefined, WEBP, 'image', 'image/webp'],
    ['an "image" that is text is text', 'fake.png', 'image/png', bytes('not an image'), 'text', 'text/plain'],
    ['pdf by magic', 'doc', undefined, PDF, 'pdf', 'application/pdf'],
    ['pdf by name without magic (the parser will say why)', 'broken.pdf', undefined, bin(1, 2, 3, 0), 'pdf', 'application/pdf'],
    ['pdf by claimed type', 'x', 'application/pdf', bin(0, 0, 0), 'pdf', 'application/pdf'],
    ['binary with NUL', 'blob.bin', 'application/octet-stream', bin(0x7f, 0x45, 0x4c, 0x46, 0, 1, 2), 'other', 'application/octet-stream'],
    ['invalid utf-8', 'latin1.txt', 'text/plain', bin(0x63, 0x61, 0x66, 0xe9, 0x20, 0x21), 'other', 'text/plain'],
    ['zip', 'a.zip', 'application/zip', bin(0x50, 0x4b, 0x03, 0x04, 0x14, 0, 0, 0), 'other', 'application/zip'],
    ['empty file', 'empty.txt', undefined, bin(), 'text', 'text/plain'],
  ] as const)('%s', (_name, name, mimeType, head, kind, mime) => {
    expect(classifyFile({ name, mimeType, head, size: head.length })).toEqual({ kind, mimeType: mime });
  });
});

describe('looksLikeText', () => {
  it('accepts a sniff window that ends inside a multi-byte character', () => {
    const full = bytes('abc é');
    expect(looksLikeText(full.subarray(0, full.length - 1), true)).toBe(true);
    expect(looksLikeText(full.subarray(0, full.length - 1), false)).toBe(false);
  });
  it('rejects many control characters', () => {
    expect(looksLikeText(bin(...new Array(50).fill(0x01), ...bytes('text')), false)).toBe(false);
  });
});

describe('extensionOf', () => {
  it.each([
    ['report.CSV', 'csv'],
    ['Dockerfile', 'dockerfile'],
    ['.env', '.env'],
    ['dir/a.tar.gz', 'gz'],
  ])('%s -> %s', (name, ext) => expect(extensionOf(name)).toBe(ext));
});
