/**
 * The capacity bench's load generator, in its own process: argv[2..4] = gateway base, token,
 * /chat fn_index. On {cmd:'run', n, seconds, client} it keeps n streams busy (each submits a
 * new turn as soon as its last one completes) for `seconds`, and answers {result} with every
 * inter-token gap (ms), the token and turn counts and the errors. client 'raw' is the light
 * node:http reader; 'gradio' the real @gradio/client (heavier: for a smaller n); 'reference'
 * drives the reference pipeline (argv[5]) instead of /chat.
 */
import { Client } from '@gradio/client';
import { rawChat } from './raw-chat.ts';

const [base, token, fnText, refUrl] = process.argv.slice(2);
const fn = Number(fnText);
const data = [{ text: 'hello', files: [] }, '', '', '', [], '', ''];

/** One turn's token arrival times through the real client. */
async function gradioTurn(client: Client): Promise<number[]> {
  const times: number[] = [];
  for await (const event of client.submit('/chat', { message: { text: 'hello', files: [] } })) {
    if (event.type === 'data' && (event.data as any[])[0]?.metadata?.type === 'stream_token') times.push(performance.now());
  }
  return times;
}

/** One turn of the reference pipeline (bench/reference.ts): its frames' arrival times. */
async function referenceTurn(): Promise<number[]> {
  const times: number[] = [];
  const res = await fetch(refUrl, { method: 'POST', body: 'hello' });
  const decoder = new TextDecoder();
  for await (const chunk of res.body!) {
    const now = performance.now();
    for (const line of decoder.decode(chunk, { stream: true }).split('\n')) if (line.includes('"process_generating"')) times.push(now);
  }
  return times;
}

type Kind = 'raw' | 'gradio' | 'reference';

async function run(n: number, seconds: number, kind: Kind) {
  const gaps: number[] = [];
  let tokens = 0;
  let turns = 0;
  let errors = 0;
  const until = performance.now() + seconds * 1000;
  const stream = async (i: number) => {
    await new Promise((r) => setTimeout(r, (i * 1000) / n)); // spread the starts over a second
    const client = kind === 'gradio' ? await Client.connect(base, { headers: { Authorization: `Bearer ${token}` }, events: ['data', 'status'] }) : undefined;
    while (performance.now() < until) {
      try {
        const times = client ? await gradioTurn(client) : kind === 'reference' ? await referenceTurn() : (await rawChat(base, token, fn, data)).tokenTimes;
        for (let k = 1; k < times.length; k++) gaps.push(times[k] - times[k - 1]);
        tokens += times.length;
        turns++;
      } catch {
        errors++;
      }
    }
    client?.close();
  };
  await Promise.all(Array.from({ length: n }, (_, i) => stream(i)));
  return { gaps, tokens, turns, errors };
}

process.send!({ ready: true });
process.on('message', async (m: { cmd: string; n: number; seconds: number; client: Kind }) => {
  if (m.cmd === 'run') process.send!({ result: await run(m.n, m.seconds, m.client) });
});
process.on('disconnect', () => process.exit(0));
