/**
 * Reading a text/event-stream over real HTTP (fetch), frame by frame, as a browser would.
 */
export interface SseFrame {
  id?: string;
  event: string;
  data: any;
  comment?: string;
}

/** Parses complete frames out of `buffer`; returns them and the unfinished rest. */
export function parseSse(buffer: string): { frames: SseFrame[]; rest: string } {
  const blocks = buffer.split('\n\n');
  const rest = blocks.pop()!;
  const frames: SseFrame[] = [];
  for (const block of blocks) {
    const frame: SseFrame = { event: 'message', data: '' };
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) frame.comment = line.slice(1).trim();
      else if (line.startsWith('id: ')) frame.id = line.slice(4);
      else if (line.startsWith('event: ')) frame.event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length) frame.data = JSON.parse(data.join('\n'));
    else if (frame.comment !== undefined) frame.event = 'comment';
    frames.push(frame);
  }
  return { frames, rest };
}

/**
 * Reads a response's frames until `stop(frame, all)` is true or the stream ends. A read cut by
 * `signal` (a timeout) returns the frames that arrived.
 */
export async function readFrames(
  response: Response,
  options: { stop?: (frame: SseFrame, all: SseFrame[]) => boolean; signal?: AbortSignal } = {},
): Promise<SseFrame[]> {
  const frames: SseFrame[] = [];
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    outer: for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const parsed = parseSse((buffer += decoder.decode(value, { stream: true })));
      buffer = parsed.rest;
      for (const frame of parsed.frames) {
        frames.push(frame);
        if (options.stop?.(frame, frames)) break outer;
      }
    }
  } catch (error) {
    if (!options.signal?.aborted) throw error;
  }
  return frames;
}

/** Opens a stream and reads frames until `stop(frame, all)` is true or the server ends it; then disconnects. */
export async function readSse(
  url: string,
  headers: Record<string, string>,
  stop: (frame: SseFrame, all: SseFrame[]) => boolean,
  timeoutMs = 20_000,
): Promise<{ status: number; contentType: string | null; frames: SseFrame[] }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const response = await fetch(url, { headers, signal: controller.signal });
    const frames = response.status === 200 ? await readFrames(response, { stop, signal: controller.signal }) : [];
    return { status: response.status, contentType: response.headers.get('content-type'), frames };
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}
