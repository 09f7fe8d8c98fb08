/** Small display helpers for tool arguments and results. */

/** `{service: "a", minutes: 30}` -> `service: a, minutes: 30` (one line). */
export function formatArgs(input: unknown): string {
  if (input === undefined || input === null) return '';
  if (typeof input !== 'object') return String(input);
  return Object.entries(input as Record<string, unknown>)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ');
}

/** Pretty JSON for a result panel. */
export function formatJson(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

/** mm:ss until `deadline`, never negative. */
export function countdown(deadline: number, now: number): string {
  const s = Math.max(0, Math.ceil((deadline - now) / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** 830 -> "830 B", 1536 -> "1.5 KB", 2_500_000 -> "2.4 MB". */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
