/**
 * The api role alone, in its own process, on the gateway process's bench database (argv[2]): the
 * deployed topology (`--role api` behind nginx), where a confirmed action's backend work does not
 * run on the gateway's thread. Sends {url} when listening. BENCH_API_PROCESS=1 selects it.
 */
import { buildApp, localUrl } from '../server/app.ts';
import { createPool } from '../server/db/index.ts';
import { benchConfig } from './bench-config.ts';

const [databaseUrl, modelUrl] = process.argv.slice(2);
const pool = createPool(databaseUrl, { max: 20 });
const app = await buildApp({ config: benchConfig(modelUrl), roles: ['api'], pool, databaseUrl });
await app.listen({ host: '127.0.0.1', port: 0 });
process.send!({ url: localUrl(app) });
process.on('disconnect', async () => {
  await app.close();
  await pool.end();
  process.exit(0);
});
