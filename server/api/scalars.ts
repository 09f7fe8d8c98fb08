/**
 * Checks for scalar strings that PostgreSQL will cast: a value zod lets through but the database
 * refuses (`2026-02-31`, a bigint past 2^63, a real that under- or overflows) would otherwise
 * surface as a 500. Pure predicates, used as zod refinements in the schemas.
 * @module
 */

const TIMESTAMP_RE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}(:?\d{2})?)?$/i;

/** A date-time PostgreSQL accepts as timestamptz: a real calendar day, years 1–9999. */
export function isValidTimestamp(text: string): boolean {
  const m = TIMESTAMP_RE.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (year < 1 || month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return false;
  const daysInMonth = new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !isLeap(year) ? 1 : 0);
  if (day < 1 || day > daysInMonth) return false;
  return isValidOffset(m[8], m[9]);
}

/** A UTC offset PostgreSQL accepts: none, Z, or ±hh[[:]mm] up to 15 hours and 59 minutes. */
function isValidOffset(offset: string | undefined, minutes: string | undefined): boolean {
  if (!offset || offset.toUpperCase() === 'Z') return true;
  return Number(offset.slice(1, 3)) <= 15 && (!minutes || Number(minutes.slice(-2)) <= 59);
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

const INT8_MAX = 9223372036854775807n;

/** A non-negative integer that fits PostgreSQL's bigint. */
export function isBigintText(text: string): boolean {
  return /^\d{1,19}$/.test(text) && BigInt(text) <= INT8_MAX;
}

/** A number PostgreSQL's `real` holds without over- or underflow (zero included). */
export function isRealText(text: string): boolean {
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text)) return false;
  const n = Math.abs(Number(text));
  return n === 0 || (n >= 1e-37 && n <= 1e37);
}
