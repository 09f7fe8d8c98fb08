/**
 * Gradio sse_v3 server benchmark (`npm run bench` or `npm run bench gradio`). Prints:
 *   - server CPU per token (µs) and wire bytes per token for one 2,000-token stream, gradio vs a
 *     raw node:http SSE baseline writing the same tokens, in the same run;
 *   - the same with 100 concurrent streams;
 *   - RSS per 1,000 idle connected sessions (gradio sessions vs raw SSE connections);
 *   - end-to-end tokens/s through the real @gradio/client.
 * The servers run in a child process (bench/gradio-server.ts); CPU is that process's own
 * cpuUsage() delta, so client-side parsing is not counted.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Agent, get, request } from 'node:http';
import { Client } from '@gradio/client';

const TOKENS = 2000;
const CONCURRENT = 100;
const IDLE = 1000;
const agent = new Agent({ keepAlive: true, maxSockets: Infinity });

interface Child {
  proc: ChildProcess;
  gradioPort: number;
  rawPort: number;
  ask<T>(cmd: string, key: string): Promise<T>;
}

async function startChild(): Promise<Child> {
  const proc = fork(new URL('./gradio-server.ts', import.meta.url), [], { execArgv: ['--import', 'tsx', '--expose-gc'], stdio: 'inherit' });
  const ready = await new Promise<{ gradioPort: number; rawPort: number }>((resolve, reject) => {
    proc.once('message', resolve as never);
    proc.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  return {
    proc,
    ...ready,
    ask: <T>(cmd: string, key: string) =>
      new Promise<T>((resolve) => {
        const onMessage = (m: Record<string, unknown>) => {
          if (key in m) {
            proc.off('message', onMessage);
            resolve(m[key] as T);
          }
        };
        proc.on('message', onMessage);
        proc.send({ cmd });
      }),
  };
}

/** GETs an SSE URL to its end; returns body bytes and the frames' sizes. */
function readSse(url: string): Promise<{ bytes: number; frames: string[] }> {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      let bytes = 0;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        bytes += Buffer.byteLength(chunk);
        text += chunk;
      });
      res.on('end', () => resolve({ bytes, frames: text.split('\n\n').filter(Boolean) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

function postJson(url: string, body: unknown): Promise<any> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text)) : reject(new Error(`${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const cpuMicros = (a: NodeJS.CpuUsage, b: NodeJS.CpuUsage) => b.user - a.user + (b.system - a.system);
let sessionCounter = 0;

async function gradioStreams(child: Child, streams: number) {
  const base = `http://127.0.0.1:${child.gradioPort}/api/agent/gradio`;
  const before = await child.ask<NodeJS.CpuUsage>('cpu', 'cpu');
  const results = await Promise.all(
    Array.from({ length: streams }, async () => {
      const session = `bench-${++sessionCounter}`;
      await postJson(`${base}/gradio_api/queue/join?`, { data: [TOKENS], fn_index: 1, session_hash: session });
      return readSse(`${base}/gradio_api/queue/data?session_hash=${session}`);
    }),
  );
  const after = await child.ask<NodeJS.CpuUsage>('cpu', 'cpu');
  const generating = results[0].frames.filter((f) => f.includes('"process_generating"'));
  if (generating.length !== TOKENS) throw new Error(`expected ${TOKENS} generating frames, got ${generating.length}`);
  const decile = TOKENS / 10;
  const avg = (xs: string[]) => xs.reduce((s, f) => s + Buffer.byteLength(f) + 2, 0) / xs.length;
  return {
    usPerToken: cpuMicros(before, after) / (streams * TOKENS),
    bytesPerToken: results.reduce((s, r) => s + r.bytes, 0) / (streams * TOKENS),
    firstDecile: avg(generating.slice(1, decile)),
    lastDecile: avg(generating.slice(-decile)),
  };
}

async function rawStreams(child: Child, streams: number) {
  const before = await child.ask<NodeJS.CpuUsage>('cpu', 'cpu');
  const results = await Promise.all(Array.from({ length: streams }, () => readSse(`http://127.0.0.1:${child.rawPort}/?n=${TOKENS}`)));
  const after = await child.ask<NodeJS.CpuUsage>('cpu', 'cpu');
  if (results[0].frames.length !== TOKENS) throw new Error('raw baseline lost frames');
  return { usPerToken: cpuMicros(before, after) / (streams * TOKENS), bytesPerToken: results.reduce((s, r) => s + r.bytes, 0) / (streams * TOKENS) };
}

/** Opens `count` SSE connections and waits until each has its first bytes; returns a closer. */
async function openIdle(urls: string[], firstChunk: (text: string) => boolean): Promise<() => void> {
  const requests: ReturnType<typeof get>[] = [];
  await Promise.all(
    urls.map(
      (url) =>
        new Promise<void>((resolve, reject) => {
          const req = get(url, { agent: new Agent({ keepAlive: false }) }, (res) => {
            if (firstChunk('')) resolve();
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => {
              text += c;
              if (firstChunk(text)) resolve();
            });
            res.on('error', () => {});
          });
          req.on('error', reject);
          requests.push(req);
        }),
    ),
  );
  return () => requests.forEach((r) => r.destroy());
}

type Mem = { rss: number; heap: number };

async function idleRss(child: Child) {
  const base = `http://127.0.0.1:${child.gradioPort}/api/agent/gradio`;
  const warm = await openIdle([`http://127.0.0.1:${child.rawPort}/idle`], () => true);
  warm();
  // Raw connections first (a fresh baseline each), then gradio sessions.
  const beforeRaw = await child.ask<Mem>('rss', 'rss');
  const closeRaw = await openIdle(Array.from({ length: IDLE }, () => `http://127.0.0.1:${child.rawPort}/idle`), () => true);
  const afterRaw = await child.ask<Mem>('rss', 'rss');
  closeRaw();
  await new Promise((r) => setTimeout(r, 500));
  const before = await child.ask<Mem>('rss', 'rss');
  const sessions: string[] = [];
  for (let i = 0; i < IDLE; i++) {
    const session = `idle-${i}`;
    await postJson(`${base}/gradio_api/queue/join?`, { data: [], fn_index: 2, session_hash: session });
    sessions.push(`${base}/gradio_api/queue/data?session_hash=${session}`);
  }
  const closeGradio = await openIdle(sessions, (t) => t.includes('process_starts'));
  const afterGradio = await child.ask<Mem>('rss', 'rss');
  closeGradio();
  const per = (a: number, b: number) => (b - a) / 1024 / IDLE;
  return {
    gradioKiB: per(before.rss, afterGradio.rss),
    rawKiB: per(beforeRaw.rss, afterRaw.rss),
    gradioHeapKiB: per(before.heap, afterGradio.heap),
    rawHeapKiB: per(beforeRaw.heap, afterRaw.heap),
  };
}

async function endToEnd(child: Child) {
  const client = await Client.connect(`http://127.0.0.1:${child.gradioPort}/api/agent/gradio`);
  await client.predict('/stream', [50]); // warm up
  const started = performance.now();
  let count = 0;
  let content = '';
  for await (const event of client.submit('/stream', [TOKENS])) {
    if (event.type !== 'data') continue;
    count++;
    content = (event.data[0] as { content: string }).content;
  }
  const seconds = (performance.now() - started) / 1000;
  if (count !== TOKENS + 1 || content.length < TOKENS) throw new Error('end-to-end stream incomplete');
  return { tokensPerSecond: TOKENS / seconds, seconds };
}

const child = await startChild();
try {
  await gradioStreams(child, 5); // warm up both paths (JIT)
  await rawStreams(child, 5);
  const rawOne = await rawStreams(child, 1);
  const gradioOne = await gradioStreams(child, 1);
  const rawMany = await rawStreams(child, CONCURRENT);
  const gradioMany = await gradioStreams(child, CONCURRENT);
  const idle = await idleRss(child);
  const e2e = await endToEnd(child);

  const f = (n: number, d = 1) => n.toFixed(d);
  const rows = [
    ['measure', 'raw SSE', 'gradio', 'ratio'],
    [`server µs/token, 1 stream x ${TOKENS}`, f(rawOne.usPerToken), f(gradioOne.usPerToken), f(gradioOne.usPerToken / rawOne.usPerToken, 2) + 'x'],
    [`server µs/token, ${CONCURRENT} streams x ${TOKENS}`, f(rawMany.usPerToken), f(gradioMany.usPerToken), f(gradioMany.usPerToken / rawMany.usPerToken, 2) + 'x'],
    ['wire bytes/token, 1 stream', f(rawOne.bytesPerToken), f(gradioOne.bytesPerToken), f(gradioOne.bytesPerToken / rawOne.bytesPerToken, 2) + 'x'],
    [`wire bytes/token, ${CONCURRENT} streams`, f(rawMany.bytesPerToken), f(gradioMany.bytesPerToken), ''],
    ['gradio frame bytes, tokens 2-200 vs last 200', '', `${f(gradioOne.firstDecile)} -> ${f(gradioOne.lastDecile)}`, ''],
    [`RSS KiB per idle connection (${IDLE})`, f(idle.rawKiB), f(idle.gradioKiB), ''],
    [`JS heap+external KiB per idle connection`, f(idle.rawHeapKiB), f(idle.gradioHeapKiB), ''],
    [`@gradio/client end-to-end tokens/s (${TOKENS})`, '', f(e2e.tokensPerSecond, 0), ''],
  ];
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const line = (r: string[]) => '| ' + r.map((cell, c) => cell.padEnd(widths[c])).join(' | ') + ' |';
  const table = [line(rows[0]), '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|', ...rows.slice(1).map(line)].join('\n');
  process.stdout.write(`${table}\n`);
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/gradio.json', JSON.stringify({ date: new Date().toISOString(), rawOne, gradioOne, rawMany, gradioMany, idle, e2e }, null, 2));
  writeFileSync('bench/results/gradio.md', table + '\n');
} finally {
  child.proc.send({ cmd: 'exit' });
  agent.destroy();
}
