/**
 * A light Gradio-protocol client for benches: joins the queue and reads the session's SSE with
 * node:http, recording when each `process_generating` frame arrives and its size on the wire.
 * Hundreds of these cost little, so a capacity run measures the gateway, not its clients.
 */
import { Agent, request } from 'node:http';
import { randomUUID } from 'node:crypto';

const agent = new Agent({ keepAlive: true, maxSockets: Infinity });

export interface RawRun {
  /** performance.now() of each process_generating frame after the first (the tokens). */
  tokenTimes: number[];
  /** Wire bytes of each of those frames. */
  frameBytes: number[];
  startedAt: number;
  /** The last full output value (the final ChatMessage) when the server sent one, else undefined. */
  completed: any;
}

function call(url: string, method: string, headers: Record<string, string>, body?: string): Promise<import('node:http').IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent, headers }, resolve);
    req.on('error', reject);
    req.end(body);
  });
}

async function json(url: string, headers: Record<string, string>, body?: unknown): Promise<any> {
  const res = await call(url, body ? 'POST' : 'GET', { ...headers, 'content-type': 'application/json' }, body ? JSON.stringify(body) : undefined);
  let text = '';
  for await (const c of res) text += c;
  if ((res.statusCode ?? 500) >= 300) throw new Error(`${url}: ${res.statusCode} ${text}`);
  return JSON.parse(text);
}

/** fn_index of the endpoint whose api_name is `apiName`, from GET /config. */
export async function fnIndexOf(base: string, token: string, apiName: string): Promise<number> {
  const config = await json(`${base}/config`, { authorization: `Bearer ${token}` });
  const index = config.dependencies.findIndex((d: { api_name?: string }) => d.api_name === apiName);
  if (index < 0) throw new Error(`no endpoint ${apiName}`);
  return config.dependencies[index].id ?? index;
}

/** One /chat event: data is the endpoint's positional inputs. */
export async function rawChat(base: string, token: string, fnIndex: number, data: unknown[]): Promise<RawRun> {
  const headers = { authorization: `Bearer ${token}` };
  const session = randomUUID();
  const startedAt = performance.now();
  await json(`${base}/gradio_api/queue/join?`, headers, { data, fn_index: fnIndex, session_hash: session });
  const res = await call(`${base}/gradio_api/queue/data?session_hash=${session}`, 'GET', headers);
  const run: RawRun = { tokenTimes: [], frameBytes: [], startedAt, completed: undefined };
  let buffer = '';
  let generating = 0;
  for await (const chunk of res) {
    buffer += chunk;
    const blocks = buffer.split('\n\n');
    buffer = blocks.pop()!;
    const now = performance.now();
    for (const block of blocks) {
      if (!block.startsWith('data: ')) continue;
      const frame = JSON.parse(block.slice(6));
      if (frame.msg === 'process_generating') {
        if (generating++ > 0) {
          run.tokenTimes.push(now);
          run.frameBytes.push(Buffer.byteLength(block) + 2);
        }
      } else if (frame.msg === 'process_completed') {
        run.completed = frame.output?.data?.[0];
        res.destroy();
        return run;
      }
    }
  }
  return run;
}
