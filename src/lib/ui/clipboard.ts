/**
 * What Copy puts on the clipboard (issue 29 item 1): a message's Markdown as text/plain and, when
 * it has a table, its rendered HTML as text/html as well (spreadsheets and documents paste that as
 * a table); a table's own Copy gives tab-separated values. The pure parts take no DOM.
 * @module
 */

/** Rows of cell texts as TSV: tabs and newlines inside a cell become spaces. */
export function toTsv(rows: string[][]): string {
  return rows.map((row) => row.map((c) => c.replace(/[\t\r\n]+/g, ' ').trim()).join('\t')).join('\n');
}

/** A rendered table's cells, row by row (the caption with its button left out). */
export function tableRows(table: HTMLTableElement): string[][] {
  return [...table.rows].map((row) => [...row.cells].map((cell) => cell.textContent ?? ''));
}

/** Writes text/plain, and text/html too when given; falls back to plain text where ClipboardItem is missing. */
export async function copyText(plain: string, html?: string): Promise<void> {
  if (html && typeof ClipboardItem !== 'undefined') {
    await navigator.clipboard.write([
      new ClipboardItem({
        'text/plain': new Blob([plain], { type: 'text/plain' }),
        'text/html': new Blob([html], { type: 'text/html' }),
      }),
    ]);
    return;
  }
  await navigator.clipboard.writeText(plain);
}
