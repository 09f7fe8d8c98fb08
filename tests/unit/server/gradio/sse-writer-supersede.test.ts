/**
 * SseWriter backpressure for snapshot streams (issue 30 finding 12): while a write is in flight, a
 * frame with a `supersedes` key replaces the queued frame of that key at the tail, so a slow client
 * gets the newest snapshot instead of an ever-growing buffer and a cut stream.
 */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { callFrames, tooLargeFrame } from '../../../../server/gradio/call-format.ts';
import { SseWriter } from '../../../../server/gradio/sse-writer.ts';

/** A response whose writes complete only when `drain()` is called. */
function slowResponse() {
  const res = new EventEmitter() as EventEmitter & Record<string, any>;
  const written: string[] = [];
  const callbacks: (() => void)[] = [];
  Object.assign(res, {
    destroyed: false,
    writableEnded: false,
    writableCorked: 0,
    socket: null,
    write(chunk: string, cb: () => void) {
      written.push(chunk);
      callbacks.push(cb);
      return false;
    },
    end(chunk?: string) {
      if (chunk) written.push(chunk);
      res.writableEnded = true;
    },
    destroy() {
      res.destroyed = true;
    },
  });
  return { res: res as unknown as ServerResponse, written, drain: () => callbacks.shift()?.() };
}

describe('SseWriter supersedes', () => {
  it('keeps only the newest queued snapshot of a key, in order with the other frames', () => {
    const { res, written, drain } = slowResponse();
    const writer = new SseWriter(res, { maxBufferedBytes: 100 });
    writer.write('s1', 'snap');
    expect(writer.backlogged).toBe(true);
    writer.write('s2', 'snap');
    writer.write('s3', 'snap');
    writer.write('hb');
    writer.write('s4', 'snap');
    writer.write('s5', 'snap');
    drain();
    writer.end('done');
    expect(written).toEqual(['s1', 's3hbs5', 'done']);
    expect(res.destroyed).toBe(false);
  });

  it('below supersedeAboveBytes every snapshot is kept', () => {
    const { res, written, drain } = slowResponse();
    const writer = new SseWriter(res, { supersedeAboveBytes: 6 });
    for (const s of ['s1', 's2', 's3', 's4', 's5', 's6']) writer.write(s, 'snap');
    drain();
    // s2..s4 queued (6 bytes), then each newer snapshot replaces the tail.
    expect(written).toEqual(['s1', 's2s3s6']);
  });

  it('without a key every frame is kept (and a client too far behind is still cut)', () => {
    const { res, written, drain } = slowResponse();
    const writer = new SseWriter(res, { maxBufferedBytes: 5 });
    writer.write('a');
    writer.write('b');
    writer.write('c');
    drain();
    expect(written).toEqual(['a', 'bc']);
    writer.write('123456');
    expect(res.destroyed).toBe(true);
  });
});

describe('call frames', () => {
  it('names each frame, and the too-large error carries PAYLOAD_TOO_LARGE', () => {
    const chunk = `data: ${JSON.stringify({ msg: 'process_generating', output: { data: ['x'] } })}\n\ndata: ${JSON.stringify({ msg: 'heartbeat' })}\n\n`;
    expect(callFrames(chunk, { last: null }).map((f) => f.event)).toEqual(['generating', 'heartbeat']);
    const frame = tooLargeFrame(1024);
    expect(frame.startsWith('event: error\ndata: ')).toBe(true);
    expect(JSON.parse(frame.split('\n')[1].slice(6))).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', title: 'Error' });
  });
});
