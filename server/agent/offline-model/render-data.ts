/**
 * JSON tool results as markdown for the offline model: a row table for lists (at most 25 rows and
 * 5 scalar columns, the rows that need attention first: down, then degraded, then the rest), a
 * sentence or a field table for objects. UUIDs show as their first 8 characters (the tool cards
 * keep the full ones); times stay ISO (the UI renders them relative). Pure.
 * @module
 */

const MAX_ROWS = 25;
const MAX_COLUMNS = 5;
const UUID = /\b([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
/** How urgently a row's status asks to be read: lower first; unknown statuses rank with healthy. */
const URGENCY: Record<string, number> = { down: 0, failed: 0, error: 0, critical: 0, unhealthy: 0, degraded: 1, warning: 1 };

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const s = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return s.replace(UUID, '$1').replace(/\|/g, '\\|').replace(/\s+/g, ' ');
}

function isScalar(v: unknown): boolean {
  return v === null || ['string', 'number', 'boolean'].includes(typeof v);
}

function urgency(row: Record<string, unknown>): number {
  const status = row.status ?? row.state ?? row.health;
  return typeof status === 'string' ? (URGENCY[status.toLowerCase()] ?? 2) : 2;
}

/** Rows needing attention first; otherwise the order the tool gave (a stable sort). */
export function attentionFirst<T extends Record<string, unknown>>(rows: T[]): T[] {
  return rows.map((row, i) => ({ row, i, u: urgency(row) })).sort((a, b) => a.u - b.u || a.i - b.i).map((x) => x.row);
}

/** A markdown table of up to 25 rows and 5 scalar columns, the rows needing attention first. */
export function renderTable(rows: Record<string, unknown>[]): string {
  const columns = Object.keys(rows[0] ?? {}).filter((k) => rows.some((r) => isScalar(r[k]))).slice(0, MAX_COLUMNS);
  const lines = [`| ${columns.join(' | ')} |`, `| ${columns.map(() => '---').join(' | ')} |`];
  for (const row of attentionFirst(rows).slice(0, MAX_ROWS)) lines.push(`| ${columns.map((c) => cell(row[c])).join(' | ')} |`);
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
