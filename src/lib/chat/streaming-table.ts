/**
 * A markdown table still streaming in, made whole enough to render as a table (issue 29 item 9):
 * marked needs the header's separator row, which arrives a few tokens after the header, and
 * shows `| --- | -` as text until then. Pure; only the growing block is passed through here.
 * @module
 */

const ROW = /^\s{0,3}\|/;
const PARTIAL_SEPARATOR = /^\s{0,3}\|?[\s:|-]*$/;

function cells(row: string): number {
  const inner = row.trim().replace(/^\|/, '').replace(/\|$/, '');
  return inner.split(/(?<!\\)\|/).length;
}

/** The block with a table's header completed (closing pipe, separator row); other blocks as they are. */
export function completeStreamingTable(block: string): string {
  const lines = block.split('\n');
  if (!ROW.test(lines[0]) || lines.length > 2 || (lines.length === 2 && !PARTIAL_SEPARATOR.test(lines[1]))) return block;
  const header = lines[0].trimEnd().endsWith('|') ? lines[0].trimEnd() : `${lines[0].trimEnd()} |`;
  const n = cells(header);
  return `${header}\n|${' --- |'.repeat(n)}`;
}
