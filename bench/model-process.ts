/**
 * The offline model as its own process (argv[2] = pause between words in ms), so a bench can
 * read the gateway's CPU apart from the model's. Sends {baseUrl} to the parent once listening.
 */
import { startOfflineModelServer } from '../server/agent/offline-model/server.ts';
import { traceSql } from './trace-sql.ts';

// The model's requests in the trace too: when each reaches the model, next to the gateway's queries.
if (process.env.BENCH_TRACE_SQL) traceSql();

const model = await startOfflineModelServer({ delayMs: Number(process.argv[2] ?? 0), modelName: 'airlock-offline-1' });
process.send!({ baseUrl: model.baseUrl });
process.on('disconnect', () => process.exit(0));
