/**
 * One turn's attachments -> content parts for the model + a report per file. Runs before the model
 * call (never per token); never throws for a bad file: unreadable, unparseable and unsupported
 * files become notes, so the turn goes on.
 *
 *   read bytes -> classify -> text: decode | pdf: cached extract | image: data URL or note | other: note
 *   -> share the turn budget among the texts -> frame each file as untrusted content
 * @module
 */
import { randomBytes } from 'node:crypto';
import { allocateBudget, cutToBudget } from './budget.ts';
import { cachedExtract, type ExtractCache } from './cache.ts';
import { classifyFile, SNIFF_BYTES } from './classify.ts';
import { decodeText } from './extract.ts';
import { defaultPdfReader, type PdfReader } from './pdf-reader.ts';
import { budgetSpentNote, cutBody, failedNote, formatSize, frame, unreadNote, userNote, type FileFacts } from './notes.ts';
import type { AttachmentInput, AttachmentKind, AttachmentReport, AttachmentSettings, ContentPart, PreparedAttachments, ReadAttachment } from './types.ts';

export interface AttachmentDeps<Ref> {
  readFile: ReadAttachment<Ref>;
  settings: AttachmentSettings;
  cache?: ExtractCache;
  /**
   * The process's PDF reader, made once from `settings.pdf` (createPdfReader): its worker cap holds
   * across turns only if turns share it. Unset: a shared reader at the default limits.
   */
  pdf?: PdfReader;
  /** The frame's nonce; random per turn by default. */
  nonce?: () => string;
}

interface Loaded {
  facts: FileFacts;
  kind: AttachmentKind;
  text?: string;
  image?: Buffer;
  error?: string;
}

async function load<Ref>(file: AttachmentInput<Ref>, deps: AttachmentDeps<Ref>): Promise<Loaded> {
  let bytes: Buffer;
  try {
    bytes = await deps.readFile(file.ref);
  } catch {
    return { facts: { name: file.name, mimeType: file.mimeType ?? 'application/octet-stream', size: 0 }, kind: 'other', error: 'the stored file is missing' };
  }
  const { kind, mimeType } = classifyFile({ name: file.name, mimeType: file.mimeType, head: bytes.subarray(0, SNIFF_BYTES), size: bytes.length });
  const facts = { name: file.name, mimeType, size: bytes.length };
  if (kind === 'text') return { facts, kind, text: decodeText(bytes) };
  if (kind === 'image') return { facts, kind, image: bytes };
  if (kind === 'pdf') {
    const reader = deps.pdf ?? defaultPdfReader();
    const extracted = await cachedExtract(deps.cache, bytes, kind, () => reader.read(bytes));
    return 'error' in extracted ? { facts, kind, error: extracted.error } : { facts, kind, text: extracted.text };
  }
  return { facts, kind };
}

/**
 * Prepares the files of one message for the model.
 * @example
 * const { parts, reports } = await prepareAttachments(files, { readFile, settings, cache });
 * agent.run({ ..., text, attachments: parts });
 */
export async function prepareAttachments<Ref>(files: readonly AttachmentInput<Ref>[], deps: AttachmentDeps<Ref>): Promise<PreparedAttachments> {
  if (files.length === 0) return { parts: [], reports: [] };
  const nonce = deps.nonce?.() ?? randomBytes(6).toString('hex');
  const loaded = await Promise.all(files.map((f) => load(f, deps)));
  const { maxBytesPerFile, maxBytesPerTurn, vision } = deps.settings;

  const texts = loaded.filter((l) => l.text !== undefined);
  const shares = allocateBudget(texts.map((l) => Buffer.byteLength(l.text!, 'utf8')), maxBytesPerFile, maxBytesPerTurn);
  const shareOf = new Map(texts.map((l, i) => [l, shares[i]]));

  const parts: ContentPart[] = [];
  const reports: AttachmentReport[] = loaded.map((l) => {
    const base = { name: l.facts.name, size: l.facts.size, kind: l.kind };
    if (l.error !== undefined) {
      parts.push({ type: 'text', text: frame(nonce, l.facts, failedNote(l.error)) });
      return { ...base, status: 'failed', note: userNote('failed', { reason: l.error }) };
    }
    if (l.text !== undefined) {
      const share = shareOf.get(l) ?? 0;
      if (share === 0 && l.text.length > 0) {
        parts.push({ type: 'text', text: frame(nonce, l.facts, budgetSpentNote(l.facts.size)) });
        return { ...base, status: 'not_read', note: userNote('not_read', { kind: l.kind }) };
      }
      const cut = cutToBudget(l.text, share);
      parts.push({ type: 'text', text: frame(nonce, l.facts, cut.omittedBytes ? cutBody(cut, share) : cut.head) });
      return cut.omittedBytes ? { ...base, status: 'truncated', note: userNote('truncated', { budget: share }) } : { ...base, status: 'read' };
    }
    if (l.image && vision) {
      parts.push({ type: 'text', text: frame(nonce, l.facts, `[The image ${JSON.stringify(l.facts.name)} (${formatSize(l.facts.size)}) follows.]`) });
      parts.push({ type: 'image_url', image_url: { url: `data:${l.facts.mimeType};base64,${l.image.toString('base64')}` } });
      return { ...base, status: 'read' };
    }
    parts.push({ type: 'text', text: frame(nonce, l.facts, unreadNote(l.kind, l.facts)) });
    return l.kind === 'image'
      ? { ...base, status: 'not_seen', note: userNote('not_seen', {}) }
      : { ...base, status: 'not_read', note: userNote('not_read', { kind: l.kind }) };
  });
  return { parts, reports };
}
