/**
 * Classifies an attached file from its name, claimed type and first bytes. Pure.
 * The bytes decide where they can (magic numbers, UTF-8 sniffing): a client's claimed type is a hint,
 * never trusted to put a non-image into an image part or binary noise into the prompt.
 * @module
 */
import type { AttachmentKind } from './types.ts';

/** How many leading bytes classification looks at. */
export const SNIFF_BYTES = 8192;

const TEXT_EXTENSIONS = new Set([
  'txt', 'text', 'md', 'markdown', 'rst', 'csv', 'tsv', 'log', 'json', 'jsonl', 'ndjson', 'yaml', 'yml', 'toml', 'ini',
  'cfg', 'conf', 'env', 'properties', 'xml', 'html', 'htm', 'svg', 'css', 'js', 'mjs', 'cjs', 'ts', 'tsx', 'jsx', 'svelte',
  'vue', 'py', 'rb', 'go', 'rs', 'java', 'kt', 'scala', 'c', 'h', 'cc', 'cpp', 'hpp', 'cs', 'php', 'pl', 'sh', 'bash',
  'zsh', 'ps1', 'sql', 'graphql', 'proto', 'tf', 'hcl', 'dockerfile', 'makefile', 'gradle', 'diff', 'patch', 'lua', 'r',
]);

/** Types named by extension when the client claimed none (the rest is text/plain). */
const TEXT_TYPES: Record<string, string> = {
  csv: 'text/csv', tsv: 'text/tab-separated-values', md: 'text/markdown', markdown: 'text/markdown', json: 'application/json',
  xml: 'application/xml', html: 'text/html', htm: 'text/html', yaml: 'application/yaml', yml: 'application/yaml',
};

const TEXT_MIME = /^(text\/|application\/(json|x-ndjson|xml|yaml|x-yaml|toml|javascript|typescript|x-sh|sql|csv)\b)|\+(json|xml)\b/i;

const IMAGE_MAGIC: Array<{ mime: string; test: (b: Uint8Array) => boolean }> = [
  { mime: 'image/png', test: (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  { mime: 'image/jpeg', test: (b) => startsWith(b, [0xff, 0xd8, 0xff]) },
  { mime: 'image/gif', test: (b) => startsWith(b, [0x47, 0x49, 0x46, 0x38]) },
  { mime: 'image/webp', test: (b) => startsWith(b, [0x52, 0x49, 0x46, 0x46]) && ascii(b, 8, 4) === 'WEBP' },
];

function startsWith(b: Uint8Array, magic: number[]): boolean {
  return magic.every((byte, i) => b[i] === byte);
}

function ascii(b: Uint8Array, from: number, length: number): string {
  return String.fromCharCode(...b.subarray(from, from + length));
}

/** The lower-case extension ("report.CSV" -> "csv"; "Dockerfile" -> "dockerfile"). */
export function extensionOf(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  return (dot > 0 ? base.slice(dot + 1) : base).toLowerCase();
}

/** Valid UTF-8 without NUL and with few control characters: what a text file looks like. */
export function looksLikeText(head: Uint8Array, truncated: boolean): boolean {
  if (head.length === 0) return true;
  let bytes = head;
  // A sniff window may end inside a multi-byte character: drop its incomplete tail.
  if (truncated) {
    let cut = bytes.length;
    for (let i = 1; i <= 3 && cut - i >= 0; i++) {
      const b = bytes[cut - i];
      if ((b & 0xc0) === 0xc0) {
        cut -= i;
        break;
      }
      if ((b & 0x80) === 0) break;
    }
    bytes = bytes.subarray(0, cut);
  }
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return false;
  }
  let control = 0;
  for (const b of bytes) {
    if (b === 0) return false;
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c && b !== 0x1b) control++;
  }
  return control <= bytes.length / 100;
}

export interface Classification {
  kind: AttachmentKind;
  /** The type the bytes show (images, pdf) or the best guess from name and claim. */
  mimeType: string;
}

/**
 * Decides how a file reaches the model.
 * @example classifyFile({ name: 'app.log', head, size }) // { kind: 'text', mimeType: 'text/plain' }
 */
export function classifyFile(file: { name: string; mimeType?: string; head: Uint8Array; size: number }): Classification {
  const claimed = (file.mimeType ?? '').split(';')[0].trim().toLowerCase();
  const ext = extensionOf(file.name);
  const image = IMAGE_MAGIC.find((m) => m.test(file.head));
  if (image) return { kind: 'image', mimeType: image.mime };
  if (ascii(file.head, 0, 5) === '%PDF-') return { kind: 'pdf', mimeType: 'application/pdf' };
  // Claimed or named a PDF but without the header: the parser says what is wrong with it.
  if (claimed === 'application/pdf' || ext === 'pdf') return { kind: 'pdf', mimeType: 'application/pdf' };
  const text = looksLikeText(file.head, file.size > file.head.length);
  if (text) {
    if (TEXT_MIME.test(claimed)) return { kind: 'text', mimeType: claimed };
    return { kind: 'text', mimeType: TEXT_EXTENSIONS.has(ext) ? (TEXT_TYPES[ext] ?? 'text/plain') : 'text/plain' };
  }
  return { kind: 'other', mimeType: claimed || 'application/octet-stream' };
}
