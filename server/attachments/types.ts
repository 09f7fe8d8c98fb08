/**
 * The attachment module's public types: what goes in (a file reference the caller can read), what
 * comes out (content parts for the model, a status per file for the transcript and the UI).
 * @module
 */
import type { PdfLimits } from './pdf-limits.ts';

/** How a file is handed to the model. */
export type AttachmentKind = 'text' | 'pdf' | 'image' | 'other';

/**
 * What happened to one file this turn:
 * read (whole), truncated (head + tail), not_seen (an image the model cannot see),
 * not_read (a type we do not read, or over the turn's budget), failed (reading or parsing failed).
 */
export type AttachmentStatus = 'read' | 'truncated' | 'not_seen' | 'not_read' | 'failed';

/** One attached file as the caller knows it; `ref` is opaque and only passed back to `readFile`. */
export interface AttachmentInput<Ref = unknown> {
  ref: Ref;
  name: string;
  /** The type the client claimed; sniffing the bytes wins where they disagree. */
  mimeType?: string;
}

/** Reads a file's bytes; the storage behind it is the caller's business. */
export type ReadAttachment<Ref = unknown> = (ref: Ref) => Promise<Buffer>;

/** A content part of the user's message, in the OpenAI / LangChain shape. */
export type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

/** The outcome for one file, stored on the user's message and shown by the UI. */
export interface AttachmentReport {
  name: string;
  size: number;
  kind: AttachmentKind;
  status: AttachmentStatus;
  /** Human-readable: what was cut, why it was not read. Absent when read whole. */
  note?: string;
}

export interface AttachmentSettings {
  maxBytesPerFile: number;
  maxBytesPerTurn: number;
  /** The model accepts image parts. */
  vision: boolean;
  /** Memory, concurrency and page limits of PDF reading (pdf-limits.ts); unset: the defaults. */
  pdf?: Partial<PdfLimits>;
}

/** Everything prepared for one turn. */
export interface PreparedAttachments {
  /** Parts that follow the user's own text in the human message (empty without attachments). */
  parts: ContentPart[];
  /** One report per input file, in input order. */
  reports: AttachmentReport[];
}
