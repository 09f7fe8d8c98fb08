/**
 * "2 h ago" for an ISO time, as the answers show times (issue 29 item 9): the model keeps ISO
 * times, the UI says them relative and keeps the ISO time in a tooltip. Pure: `now` is given.
 * @module
 */

/** An ISO 8601 date-time with a zone, as tools return them. */
export const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d{1,9})?)?(?:Z|[+-]\d\d:?\d\d)/;

/** "just now", "5 min ago", "in 2 h", "3 d ago"; the date past 30 days; null when it does not parse. */
export function relativeTime(iso: string, now: number): string | null {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return null;
  const s = Math.abs(now - at) / 1000;
  if (s < 45) return 'just now';
  const [v, unit] = s < 3_600 ? [s / 60, 'min'] : s < 86_400 ? [s / 3_600, 'h'] : s < 30 * 86_400 ? [s / 86_400, 'd'] : [0, ''];
  if (!unit) return new Date(at).toISOString().slice(0, 10);
  const n = Math.max(1, Math.round(v));
  return at <= now ? `${n} ${unit} ago` : `in ${n} ${unit}`;
}
