/**
 * The sidebar's date groups (issue 29 item 3): Today, Yesterday, Previous 7 days, Older, by the
 * conversation's last activity in the browser's own calendar. Pure: `now` is given.
 * @module
 */

export type DateGroup = 'Today' | 'Yesterday' | 'Previous 7 days' | 'Older';

const DAY = 86_400_000;
const midnight = (t: number) => new Date(t).setHours(0, 0, 0, 0);

/** The group of an ISO time relative to `now` (a time in the future counts as today). */
export function dateGroup(iso: string, now: number): DateGroup {
  const days = Math.round((midnight(now) - midnight(Date.parse(iso))) / DAY);
  if (days <= 0) return 'Today';
  if (days === 1) return 'Yesterday';
  if (days <= 7) return 'Previous 7 days';
  return 'Older';
}

/** The heading to show before item `i` of a list (newest first), or null when it continues the group above. */
export function groupHeading(times: string[], i: number, now: number): DateGroup | null {
  const group = dateGroup(times[i], now);
  return i === 0 || dateGroup(times[i - 1], now) !== group ? group : null;
}
