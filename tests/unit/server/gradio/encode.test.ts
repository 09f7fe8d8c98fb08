import { describe, expect, it } from 'vitest';
import { diff } from '../../../../server/gradio/diff.ts';
import {
  CLOSE_STREAM_FRAME,
  HEARTBEAT_FRAME,
  encodeDiffFrame,
  encodeFrame,
  estimation,
  processCompleted,
  processFailed,
  processGenerating,
  processStarts,
  sessionNotFound,
} from '../../../../server/gradio/encode.ts';

// gradio-protocol.md §2.5, byte for byte: a generator yielding Hel -> Hello -> Hello world, outputs [json, state].
const GOLDEN = [
  'data: {"msg":"estimation","event_id":"E","rank":0,"queue_size":1,"rank_eta":null}\n\n',
  'data: {"msg":"process_starts","event_id":"E","eta":null}\n\n',
  'data: {"msg":"process_generating","event_id":"E","success":true,"output":{"data":["Hel",null],"is_generating":true}}\n\n',
  'data: {"msg":"process_generating","event_id":"E","success":true,"output":{"data":[[["append",[],"lo"]],[]],"is_generating":true}}\n\n',
  'data: {"msg":"process_generating","event_id":"E","success":true,"output":{"data":[[["append",[]," world"]],[]],"is_generating":true}}\n\n',
  'data: {"msg":"process_completed","event_id":"E","success":true,"output":{"data":["Hello world",null],"is_generating":false}}\n\n',
  'data: {"msg":"close_stream","event_id":null}\n\n',
].join('');

describe('encodeFrame', () => {
  it('reproduces the §2.5 sequence byte for byte', () => {
    const values = [['Hel', null], ['Hello', null], ['Hello world', null]];
    let out = encodeFrame(estimation('E', 0, 1)) + encodeFrame(processStarts('E'));
    out += encodeFrame(processGenerating('E', values[0]));
    for (let i = 1; i < values.length; i++) {
      out += encodeFrame(processGenerating('E', values[i].map((v, j) => diff(values[i - 1][j], v))));
    }
    out += encodeFrame(processCompleted('E', values[2])) + CLOSE_STREAM_FRAME;
    expect(out).toBe(GOLDEN);
  });

  it('encodes diff frames on the fast path identically', () => {
    const ops = [[['append', [], 'lo']], []] as any;
    expect(encodeDiffFrame(JSON.stringify('E'), ops)).toBe(encodeFrame(processGenerating('E', ops)));
  });

  it('keeps every frame on one data line, escaping CR and LF inside values', () => {
    const frame = encodeFrame(processGenerating('E', ['line1\nline2\r\n\n data: x']));
    expect(frame.endsWith('\n\n')).toBe(true);
    expect(frame.slice(0, -2)).not.toMatch(/[\r\n]/);
    expect(frame.startsWith('data: {')).toBe(true);
    expect(JSON.parse(frame.slice(6)).output.data[0]).toBe('line1\nline2\r\n\n data: x');
  });

  it('error completion holds only error, duration, visible and title in output (Python AppError)', () => {
    const message = JSON.parse(encodeFrame(processFailed('E', 'boom', 'Bad input')).slice(6));
    expect(message).toEqual({ msg: 'process_completed', event_id: 'E', success: false, title: 'Bad input', output: { error: 'boom', duration: null, visible: true, title: 'Bad input' } });
    expect(Object.keys(message.output).sort()).toEqual(['duration', 'error', 'title', 'visible']);
  });

  it('heartbeat and close_stream are data frames with event_id null, never comments', () => {
    expect(HEARTBEAT_FRAME).toBe('data: {"msg":"heartbeat","event_id":null}\n\n');
    expect(CLOSE_STREAM_FRAME).toBe('data: {"msg":"close_stream","event_id":null}\n\n');
    expect(encodeFrame(sessionNotFound())).toBe(
      'data: {"msg":"unexpected_error","event_id":null,"message":"Session not found.","session_not_found":true,"success":false}\n\n',
    );
  });

  it('frames parse with a strict parser fed one byte at a time', () => {
    const frames: unknown[] = [];
    let buffer = '';
    for (const ch of GOLDEN) {
      buffer += ch;
      let at: number;
      while ((at = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        expect(block.startsWith('data:')).toBe(true);
        frames.push(JSON.parse(block.slice(5)));
      }
    }
    expect(buffer).toBe('');
    expect(frames.map((f: any) => f.msg)).toEqual([
      'estimation', 'process_starts', 'process_generating', 'process_generating', 'process_generating', 'process_completed', 'close_stream',
    ]);
  });
});
