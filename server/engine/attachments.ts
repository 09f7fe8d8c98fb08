/**
 * Joins the attachment module to the chat turn: reads a message's files from where the upload
 * store resolved them (the caller's own uploads only) and records, per file, what the model got
 * (status + note) on the user's message.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { createPdfReader, createPgExtractCache, prepareAttachments, type AttachmentReport, type AttachmentSettings, type PreparedAttachments } from '../attachments/index.ts';
import type { Queryable } from '../db/index.ts';
import type { FileRef, FileStorage } from './types.ts';

/**
 * A message's files (with where each is stored, as the upload store resolved it for the caller)
 * -> content parts for the model + a report per file. Never throws for a bad file.
 */
export type PrepareChatAttachments = (files: FileRef[], storedPaths: string[]) => Promise<PreparedAttachments>;

/** A file as stored on the user's message: the client's reference plus what the model got of it. */
export type ReportedFileRef = FileRef & Partial<Pick<AttachmentReport, 'kind' | 'status' | 'note'>>;

export function createChatAttachments(options: { db: Queryable; settings: AttachmentSettings }): PrepareChatAttachments {
  const cache = createPgExtractCache(options.db);
  // One reader for every turn of the process: its cap on PDF workers is per process, not per turn.
  const pdf = createPdfReader(options.settings.pdf);
  return (files, storedPaths) =>
    prepareAttachments(
      files.map((f, i) => ({ ref: storedPaths[i], name: f.orig_name ?? f.path.split(/[\\/]/).pop() ?? 'file', mimeType: f.mime_type })),
      { readFile: (path: string) => readFile(path), settings: options.settings, cache, pdf },
    );
}

/** The files with their reports merged in (the real size wins over the client's claim). */
export function withReports(files: FileRef[], reports: AttachmentReport[]): ReportedFileRef[] {
  return files.map((f, i) => {
    const r = reports[i];
    if (!r) return f;
    // A file that could not be read reports size 0: keep what the client said then.
    return { ...f, size: r.size || f.size, kind: r.kind, status: r.status, ...(r.note ? { note: r.note } : {}) };
  });
}

/** A user message of files only: what the model is told instead of its (empty) text. */
export const FILES_ONLY = '(No message text: see the attached files.)';

const noAttachments: PrepareChatAttachments = async () => ({ parts: [], reports: [] });

/** A message's files for the model: the content parts, and the files with what it got of each (for its row). */
export async function attachFiles(prepare: PrepareChatAttachments | undefined, files: FileRef[], storedPaths: string[]): Promise<{ parts: PreparedAttachments['parts']; files: ReportedFileRef[] }> {
  const attached = await (prepare ?? noAttachments)(files, storedPaths);
  return { parts: attached.parts, files: withReports(files, attached.reports) };
}

/**
 * The files of a stored user message again (a regenerate, issue 29), as the upload store resolves
 * them for this user now: the client's references without the old reports, and where each is
 * stored. A file no longer stored is left out (the model answers without it).
 */
export async function storedFiles(storage: FileStorage | undefined, userId: string, stored: unknown): Promise<{ files: FileRef[]; storedPaths: string[] }> {
  const refs = (Array.isArray(stored) ? stored : []) as ReportedFileRef[];
  const resolved = await Promise.all(refs.map(async ({ kind: _k, status: _s, note: _n, ...ref }) => ({ ref, at: storage ? await storage.resolve(ref.path, userId) : null })));
  const kept = resolved.filter((r): r is { ref: FileRef; at: string } => r.at !== null);
  return { files: kept.map((r) => r.ref), storedPaths: kept.map((r) => r.at) };
}
