/**
 * PDFs written byte by byte, for the memory tests: pdf-lib takes ~20 s for 20,000 pages on this
 * machine, a template takes milliseconds. Each page has its own content stream with one line of
 * text, so a reader has real work (and real memory) per page, as with the audit's 6.7 MB bomb.
 */

/** A valid PDF of `pages` pages (Helvetica, one text line each); 20,000 pages make ~6.7 MB. */
export function manyPagePdf(pages: number, label = 'page'): Buffer {
  const chunks: string[] = [];
  const offsets: number[] = [];
  let length = 0;
  const push = (text: string) => {
    chunks.push(text);
    length += Buffer.byteLength(text, 'latin1');
  };
  const object = (id: number, body: string) => {
    offsets[id] = length;
    push(`${id} 0 obj\n${body}\nendobj\n`);
  };
  push('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n');
  const pageId = (i: number) => 4 + 2 * i;
  object(1, '<< /Type /Catalog /Pages 2 0 R >>');
  object(2, `<< /Type /Pages /Count ${pages} /Kids [${Array.from({ length: pages }, (_, i) => `${pageId(i)} 0 R`).join(' ')}] >>`);
  object(3, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  for (let i = 0; i < pages; i++) {
    const content = `BT /F1 10 Tf 20 760 Td (${label} ${i + 1}: the quick brown fox jumps over the lazy dog, again and again and again) Tj ET`;
    object(pageId(i), `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageId(i) + 1} 0 R >>`);
    object(pageId(i) + 1, `<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
  }
  const size = pageId(pages);
  const xref = length;
  push(`xref\n0 ${size}\n0000000000 65535 f \n`);
  for (let id = 1; id < size; id++) push(`${String(offsets[id]).padStart(10, '0')} 00000 n \n`);
  push(`trailer\n<< /Size ${size} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  return Buffer.from(chunks.join(''), 'latin1');
}
