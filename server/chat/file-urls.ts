/**
 * /chat files given by URL (issue 24 item 2): `handle_file("https://…")` in either Gradio client, or
 * the curl guide's `{"path": url}`. Upstream Gradio downloads such a file; Airlock does when
 * FILE_URL_FETCH is on (the gateway then makes requests its users choose, so it is off by default)
 * and stores it as the caller's upload, so the turn sees an ordinary upload. Off, a URL is a
 * VALIDATION_ERROR naming the setting (not "was not uploaded here"). The fetch and its guards are
 * the Gradio server's (gradio/url-fetch.ts); this maps its refusals to the taxonomy.
 * @module
 */
import { AirlockError } from '../errors.ts';
import { allowList, fetchUrlToUploads, FileUrlError, isHttpUrl, type UploadStorage } from '../gradio/index.ts';
import type { FileRef } from './input.ts';

export interface FileUrlSettings {
  fetch: boolean;
  maxBytes: number;
  timeoutMs: number;
  allowCidrs: string[];
}

/** Replaces each URL file of a message by the upload it was fetched into; other files pass as they are. */
export type FileUrlResolver = (files: FileRef[], userId: string) => Promise<FileRef[]>;

export function fileUrlResolver(settings: FileUrlSettings, store: UploadStorage): FileUrlResolver {
  const allow = allowList(settings.allowCidrs);
  return async (files, userId) => {
    if (!files.some((f) => isHttpUrl(f.path))) return files;
    if (!settings.fetch) {
      throw new AirlockError('VALIDATION_ERROR', 'A file given by URL is fetched only when FILE_URL_FETCH=true on the server; upload the file instead.');
    }
    // One at a time: a message holds at most 10 files, and each fetch is bounded in size and time.
    const resolved: FileRef[] = [];
    for (const file of files) {
      if (!isHttpUrl(file.path)) {
        resolved.push(file);
        continue;
      }
      try {
        const fetched = await fetchUrlToUploads(file.path, { store, owner: userId, name: file.orig_name }, { ...settings, allow });
        resolved.push({ path: fetched.path, orig_name: fetched.orig_name, size: fetched.size, mime_type: file.mime_type ?? fetched.mime_type });
      } catch (error) {
        if (!(error instanceof FileUrlError)) throw error;
        throw new AirlockError(error.reason === 'too_large' ? 'PAYLOAD_TOO_LARGE' : 'VALIDATION_ERROR', error.message);
      }
    }
    return resolved;
  };
}
