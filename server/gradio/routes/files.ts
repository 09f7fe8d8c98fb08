/**
 * `POST /gradio_api/upload` (multipart, every part named `files`; 413 past the file, request or
 * owner-quota limit; 507 STORAGE_FULL when the disk is) answering `<id>/<name>` client paths, and
 * `GET|HEAD /gradio_api/file=<path>` (only the caller's own stored files; anything else is a 404).
 * @module
 */
import { open } from 'node:fs/promises';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ownerOf } from '../auth.ts';
import type { GradioContext } from '../context.ts';
import { isStorageFull, RequestRejectedError, StorageFullError } from '../errors.ts';
import { contentTypeFor } from '../files.ts';
import { UploadLimitError } from '../upload-store.ts';

/** Registers upload and download. @fastify/multipart must be registered in the same context. */
export function registerFileRoutes(app: FastifyInstance, ctx: GradioContext): void {
  const upload = async (request: FastifyRequest) => {
    if (!request.isMultipart()) throw new RequestRejectedError(400, 'Expected a multipart/form-data body with `files` parts.');
    const owner = ownerOf(request, ctx.options.identityKey);
    const paths = await ctx.store.withBudget(owner, async (budget) => {
      const saved: string[] = [];
      for await (const part of request.parts()) {
        if (part.type !== 'file') continue;
        if (part.fieldname !== 'files') {
          part.file.resume();
          continue;
        }
        try {
          saved.push(await ctx.store.save(part.file, part.filename, owner, budget, () => part.file.truncated));
        } catch (error) {
          // All or nothing: a refused request keeps none of its files (nor their quota).
          await Promise.all(saved.map((path) => ctx.store.remove(path, owner)));
          if (error instanceof UploadLimitError) throw tooLarge(ctx, error.limit);
          if (part.file.truncated) throw tooLarge(ctx, 'file');
          if (isStorageFull(error)) throw new StorageFullError(error);
          throw error;
        }
      }
      return saved;
    });
    if (paths.length === 0) throw new RequestRejectedError(400, 'No `files` part in the upload.');
    return paths;
  };
  for (const path of ['/gradio_api/upload', '/gradio_api/upload/']) app.post(path, upload);

  app.get('/gradio_api/file=*', async (request, reply) => {
    const wanted = (request.params as { '*': string })['*'];
    const found = await ctx.store.lookup(wanted, ownerOf(request, ctx.options.identityKey));
    // Opened before answering: the retention sweep may remove the file at any moment, and an open
    // handle keeps serving it; a file gone in between is a 404, not a broken response.
    const handle = found ? await open(found.path, 'r').catch(() => null) : null;
    if (!found || !handle) throw new RequestRejectedError(404, 'File not found.');
    const { size } = await handle.stat();
    const { type, inline } = contentTypeFor(found.path);
    const name = found.path.slice(found.path.lastIndexOf('/') + 1);
    reply
      .header('Content-Type', type)
      .header('Content-Length', String(size))
      .header('X-Content-Type-Options', 'nosniff')
      .header('Content-Security-Policy', "default-src 'none'; sandbox")
      .header('Cache-Control', 'private, max-age=31536000, immutable')
      .header('Content-Disposition', `${inline ? 'inline' : 'attachment'}; filename*=UTF-8''${encodeURIComponent(name)}`);
    // HEAD goes through this handler too (Fastify's exposed HEAD route) and keeps the headers.
    return reply.send(handle.createReadStream());
  });
}

/** The 413 for an upload past one of its limits. */
export function tooLarge(ctx: GradioContext, limit: UploadLimitError['limit']): RequestRejectedError {
  const { uploadMaxBytes, uploadRequestMaxBytes, uploadQuotaBytes } = ctx.options;
  if (limit === 'quota') return new RequestRejectedError(413, `Upload quota exceeded: you may keep at most ${uploadQuotaBytes} bytes of files.`, 'UPLOAD_QUOTA_EXCEEDED');
  if (limit === 'request') return new RequestRejectedError(413, `Upload too large: at most ${uploadRequestMaxBytes ?? uploadMaxBytes * 4} bytes per request.`, 'FILE_TOO_LARGE');
  return new RequestRejectedError(413, `File too large: the limit is ${uploadMaxBytes} bytes.`, 'FILE_TOO_LARGE');
}
