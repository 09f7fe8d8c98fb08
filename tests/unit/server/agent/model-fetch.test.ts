/**
 * The model's fetch watch (issue 30 item 6): SSE comments are not progress, and a body silent
 * for the idle limit errors with ModelStalledError (not an abort, so the turn reports it).
 */
import { describe, expect, it } from 'vitest';
import { firstRoleLine, ModelStalledError, sseProgress, watchIdle, withFirstRole } from '../../../../server/agent/model-fetch.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('sseProgress', () => {
  it('counts field lines, not comments or blank lines, across chunk boundaries', () => {
    const start = { atLineStart: true };
    expect(sseProgress(start, bytes(': ping\n\n')).progress).toBe(false);
    expect(sseProgress(start, bytes('\n\r\n')).progress).toBe(false);
    expect(sseProgress(start, bytes('data: {}\n\n')).progress).toBe(true);
    expect(sseProgress(start, bytes(': ping\n\ndata: [DONE]\n\n')).progress).toBe(true);
    // A comment split mid-line stays a comment; a field line split mid-line counted at its start.
    const mid = sseProgress(start, bytes(': pi'));
    expect(mid).toEqual({ progress: false, scan: { atLineStart: false } });
    expect(sseProgress(mid.scan, bytes('ng data: x\n')).progress).toBe(false);
  });
});

describe('watchIdle', () => {
  it('errors with ModelStalledError when only comments arrive for the idle limit', async () => {
    let timer: NodeJS.Timeout | undefined;
    const source = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes('data: {"x":1}\n\n'));
        timer = setInterval(() => controller.enqueue(bytes(': ping\n\n')), 20);
      },
      cancel: () => clearInterval(timer),
    });
    const reader = watchIdle(source, 150).getReader();
    const read: string[] = [];
    const error = await (async () => {
      for (;;) read.push(new TextDecoder().decode((await reader.read()).value));
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelStalledError);
    expect((error as Error).name).not.toMatch(/abort/i);
    expect(read[0]).toBe('data: {"x":1}\n\n');
    expect(read.length).toBeGreaterThan(2); // the pings went through until the limit
  });

  it('passes a stream that keeps sending data through untouched', async () => {
    const chunks = ['data: a\n\n', 'data: b\n\n', 'data: [DONE]\n\n'];
    const source = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await new Promise((r) => setTimeout(r, 30));
        const next = chunks.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(bytes(next));
      },
    });
    const text = await new Response(watchIdle(source, 100)).text();
    expect(text).toBe('data: a\n\ndata: b\n\ndata: [DONE]\n\n');
  });
});

describe('withFirstRole (issue 30 finding 13)', () => {
  const delta = (d: object) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: d }] })}`;
  const through = (chunks: string[]) => {
    const source = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(bytes(next));
      },
    });
    return new Response(withFirstRole(source)).text();
  };

  it('gives the first delta role "assistant" when it has none, even split across chunks, and leaves the rest', async () => {
    const first = delta({ content: 'Hé' });
    const text = await through([': hi\n\n', first.slice(0, 20), `${first.slice(20)}\n\n${delta({ content: ' there' })}\n\n`, 'data: [DONE]\n\n']);
    expect(text).toBe(`: hi\n\n${delta({ content: 'Hé', role: 'assistant' })}\n\n${delta({ content: ' there' })}\n\ndata: [DONE]\n\n`);
  });

  it('leaves a first delta that has a role, and non-JSON lines, untouched', async () => {
    const body = `${delta({ role: 'assistant', content: 'a' })}\n\n${delta({ content: 'b' })}\n\ndata: [DONE]\n\n`;
    expect(await through([body])).toBe(body);
    expect(firstRoleLine('data: [DONE]')).toEqual({ line: 'data: [DONE]', delta: false });
    expect(firstRoleLine('data: {"choices":[]}').delta).toBe(false);
  });
});
