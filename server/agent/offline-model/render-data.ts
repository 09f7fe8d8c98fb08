/**
 * JSON tool results as markdown for the offline model: a row table for lists (at most 10 rows and 5
 * scalar columns), a sentence or a field table for objects. Pure.
 * @module
 */

const MAX_ROWS = 10;
const MAX_COLUMNS = 5;

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const s = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return s.replace(/\|/g, '\\|').replace(/\s+/g, ' ');
}

function isScalar(v: unknown): boolean {
  return v === null || ['string', 'number', 'boolean'].includes(typeof v);
}

/** A markdown table of up to 10 rows and 5 scalar columns. */
export function renderTable(rows: Record<string, unknown>[]): string {
  const columns = Object.keys(rows[0] ?? {}).filter((k) => rows.some((r) => isScalar(r[k]))).slice(0, MAX_COLUMNS);
  const lines = [`| ${columns.join(' | ')} |`, `| ${columns.map(() => '---').join(' | ')} |`];
  for (const row of rows.slice(0, MAX_ROWS)) lines.push(`| ${columns.map((c) => cell(row[c])).join(' | ')} |`);
  if (rows.length > MAX_ROWS) lines.push('', `…and ${rows.length - MAX_ROWS} more.`);
  return lines.join('\n');
}

/** The list in a result: the result itself, or its first array-of-objects field. */
export function mainArray(data: unknown): Record<string, unknown>[] | null {
  if (Array.isArray(data)) return data.filter((x) => x && typeof x === 'object');
  if (data && typeof data === 'object') {
    for (const v of Object.values(data)) if (Array.isArray(v) && v.every((x) => x && typeof x === 'object')) return v;
  }
  return null;
}

/** Any JSON result as a sentence (few fields), a field table (many) or a row table (a list). */
export function renderData(data: unknown, empty = 'Nothing matched.'): string {
  const rows = mainArray(data);
  if (rows) return rows.length === 0 ? empty : renderTable(rows);
  if (data && typeof data === 'object') {
    const fields = Object.entries(data).filter(([, v]) => isScalar(v));
    if (fields.length === 0) return cell(data);
    if (fields.length <= 3) return `${fields.map(([k, v]) => `${k.replace(/_/g, ' ')}: ${cell(v)}`).join(', ')}.`;
    return renderTable(fields.map(([field, value]) => ({ field, value })));
  }
  return cell(data);
}
