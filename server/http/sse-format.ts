/**
 * Server-sent event frames for conversation event streams. Pure: `id`/`event` may not hold CR or
 * LF (a frame could be forged), multi-line data is split into `data:` lines, comments are one line.
 * @module
 */

export function sseFrame({ id, event, data }: { id?: number | string; event: string; data: unknown }): string {
  const field = (name: string, value: string) => {
    if (/[\r\n]/.test(value)) throw new Error(`SSE ${name} must not contain CR or LF`);
    return `${name}: ${value}\n`;
  };
  const json = JSON.stringify(data);
  return (id === undefined ? '' : field('id', String(id))) + field('event', event) + json.split(/\r\n|\r|\n/).map((l) => `data: ${l}\n`).join('') + '\n';
}

/** A comment line: keeps proxies and clients from timing out, invisible to EventSource. */
export function sseComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
}

/**
 * Where a (re)connecting stream starts: `Last-Event-ID` wins over `?after` (the browser sends it
 * on reconnect, and it is newer than the URL it reconnects to).
 */
export function resumeCursor({ lastEventId, after }: { lastEventId: string | string[] | undefined; after: number | undefined }): number {
  const header = Array.isArray(lastEventId) ? lastEventId[0] : lastEventId;
  if (header !== undefined && /^\d{1,15}$/.test(header.trim())) return Number(header.trim());
  return after ?? 0;
}
