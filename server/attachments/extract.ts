/**
 * Text out of a file's bytes: UTF-8 for text files, unpdf (PDF.js) for PDFs. A parse failure is a
 * value (`{ error }`), not an exception: a bad file gives the model and the user a note, never a
 * failed turn. `extractPdf` runs inside the reader worker only (off-thread.ts), never on the
 * thread that streams everyone's tokens.
 * @module
 */
import { overPageCapReason } from './pdf-limits.ts';

export type Extracted = { text: string; pages?: number } | { error: string };

/** Decodes UTF-8 (invalid sequences become U+FFFD) without a byte-order mark. */
export function decodeText(bytes: Uint8Array): string {
  return new TextDecoder('utf-8').decode(bytes).replace(/^\uFEFF/, '');
}

/**
 * The text of a PDF, pages separated by a "[page N]" line. A PDF of more than `maxPages` pages is
 * not read (a "too large" note): unpdf reads every page at once, and PDF.js keeps each in memory.
 */
export async function extractPdf(bytes: Uint8Array, maxPages = Infinity): Promise<Extracted> {
  let pdf: Awaited<ReturnType<typeof import('unpdf').getDocumentProxy>> | undefined;
  try {
    // Loaded here, not at the top: the main thread imports this module for decodeText and never
    // loads PDF.js at all.
    const { extractText, getDocumentProxy } = await import('unpdf');
    // A copy: PDF.js transfers (detaches) the buffer it is given.
    pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
    // The page count comes from the page tree's root, before any page is parsed.
    if (pdf.numPages > maxPages) return { error: overPageCapReason(pdf.numPages, maxPages) };
    const { totalPages, text } = await extractText(pdf, { mergePages: false });
    const pages = text.map((t, i) => (totalPages > 1 ? `[page ${i + 1}]\n${t.trim()}` : t.trim()));
    // PostgreSQL text cannot hold NUL, and it means nothing to the model either.
    const joined = pages.join('\n\n').replace(/\u0000/g, '').trim();
    if (!text.some((t) => t.trim())) return { error: `the PDF (${totalPages} page${totalPages === 1 ? '' : 's'}) has no text layer; scanned pages are not read` };
    return { text: joined, pages: totalPages };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { error: `not a readable PDF (${reason.replace(/\s+/g, ' ').slice(0, 200)})` };
  } finally {
    await pdf?.loadingTask.destroy().catch(() => {});
  }
}
