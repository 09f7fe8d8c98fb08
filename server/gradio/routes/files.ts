/**
 * `POST /gradio_api/upload` (multipart, every part named `files`, a size limit -> 413) and
 * `GET|HEAD /gradio_api/file=<path>` (only files this server stored).
 * @module
 */
import { createReadStream } from 'node:fs';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { GradioContext } from '../context.ts';
import { RequestRejectedError } from '../errors.ts';
import { contentTypeFor } from '../files.ts';

/** Registers upload and download. @fastify/multipart must be registered in the same context. */
export function registerFileRoutes(app: FastifyInstance, ctx: GradioContext): void {
  const upload = async (request: FastifyRequest) => {
    if (!request.isMultipart()) throw new RequestRejectedError(400, 'Expected a multipart/form-data body with `files` parts.');
    const paths: string[] = [];
    for await (const part of request.parts()) {
      if (part.type !== 'file') continue;
      if (part.fieldname !== 'files') {
        part.file.resume();
        continue;
      }
      try {
        paths.push(await ctx.store.save(part.file, part.filename, () => part.file.truncated));
      } catch (error) {
        if ((error as { tooLarge?: boolean }).tooLarge || part.file.truncated) throw tooLarge(ctx.options.uploadMaxBytes);
        throw error;
      }
    }
    if (paths.length === 0) throw new RequestRejectedError(400, 'No `files` part in the upload.');
    return paths;
  };
  for (const path of ['/gradio_api/upload', '/gradio_api/upload/']) app.post(path, upload);

  app.get('/gradio_api/file=*', async (request, reply) => {
    const wanted = (request.params as { '*': string })['*'];
    const found = await ctx.store.lookup(wanted);
    if (!found) throw new RequestRejectedError(404, 'File not found.');
    const { type, inline } = contentTypeFor(found.path);
    const name = found.path.slice(found.path.lastIndexOf('/') + 1);
    reply
      .header('Content-Type', type)
      .header('Content-Length', String(found.size))
      .header('X-Content-Type-Options', 'nosniff')
      .header('Content-Security-Policy', "default-src 'none'; sandbox")
      .header('Cache-Control', 'private, max-age=31536000, immutable')
      .header('Content-Disposition', `${inline ? 'inline' : 'attachment'}; filename*=UTF-8''${encodeURIComponent(name)}`);
    // HEAD goes through this handler too (Fastify's exposed HEAD route) and keeps the headers.
    return reply.send(createReadStream(found.path));
  });
}

/** The 413 for an upload beyond the limit. */
export function tooLarge(limit: number): RequestRejectedError {
  return new RequestRejectedError(413, `File too large: the limit is ${limit} bytes.`, 'FILE_TOO_LARGE');
}
