/**
 * Several gateway replicas behind the real nginx, each a real `server/main.ts` process on a port
 * of its own (so a replica restarted after a SIGKILL or a SIGTERM comes back where nginx expects
 * it), plus one process with the api (and web) roles. All share one PostgreSQL database.
 * Used by the cluster integration test, the replicas benchmark and `npm run cluster`.
 *
 *   const cluster = await startCluster({ replicas: 3, databaseUrl, env: { OFFLINE_MODEL_DELAY_MS: '20' } });
 *   cluster.url                   // nginx, round-robin over the replicas
 *   cluster.replicas[1].child.kill('SIGKILL'); await cluster.restart(1);
 *   await cluster.stop();
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMain, type MainProcess } from './main-process.ts';
import { freePort, startNginx, type NginxInstance } from './nginx.ts';

export interface ClusterOptions {
  replicas: number;
  databaseUrl: string;
  /** Extra environment for every process. */
  env?: Record<string, string>;
  /** Roles of the non-gateway process (default api; `npm run cluster` adds web). */
  apiRoles?: string;
  /** nginx port (default a free one). */
  port?: number;
  /** The nginx binary (default `NGINX_BIN`). */
  nginxBin?: string;
}

export interface Cluster {
  url: string;
  nginx: NginxInstance;
  api: MainProcess;
  replicas: MainProcess[];
  ports: number[];
  /** Starts replica `i` again on its port (after it exited). */
  restart(i: number): Promise<MainProcess>;
  /** The replica whose pid is `pid` (a run's owner names it). */
  indexOfPid(pid: number): number;
  stop(): Promise<void>;
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const dataDir = await mkdtemp(join(tmpdir(), 'airlock-cluster-'));
  const shared = {
    DATABASE_URL: options.databaseUrl,
    // Shared by every process: the service credentials and the key that seals signing keys.
    SERVICE_CLIENT_SECRET: 'cluster-service-secret-0123456789',
    KEY_ENCRYPTION_KEY: 'cluster-key-encryption-key-0123456789abcdef',
    DATA_DIR: dataDir,
    ...options.env,
  };
  // What started is stopped again when a later part fails (a replica, nginx not installed): a
  // failed start leaves no server processes behind.
  const started: MainProcess[] = [];
  let api: MainProcess, replicas: MainProcess[], ports: number[], nginx: NginxInstance;
  const replicaEnv = (i: number) => ({
    ...shared,
    REPLICAS: 'true',
    API_URL: api.url,
    PORT: String(ports[i]),
    // Each replica keeps its own files; uploads are shared through PostgreSQL.
    DATA_DIR: join(dataDir, `replica-${i}`),
  });
  try {
    api = await startMain(['--role', options.apiRoles ?? 'api'], shared);
    started.push(api);
    ports = await Promise.all(Array.from({ length: options.replicas }, () => freePort()));
    // Every start settles before a failure is handled, so none is left running unseen.
    const settled = await Promise.allSettled(ports.map((_, i) => startMain(['--role', 'gateway'], replicaEnv(i))));
    replicas = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    started.push(...replicas);
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    const apiPort = Number(new URL(api.url).port);
    nginx = await startNginx({ web: apiPort, api: apiPort, gateway: ports, port: options.port, bin: options.nginxBin });
  } catch (error) {
    await Promise.all(started.map((p) => p.stop()));
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  const cluster: Cluster = {
    url: nginx.url,
    nginx,
    api,
    replicas,
    ports,
    async restart(i) {
      replicas[i] = await startMain(['--role', 'gateway'], replicaEnv(i));
      return replicas[i];
    },
    indexOfPid: (pid) => replicas.findIndex((r) => r.child.pid === pid),
    async stop() {
      await nginx.stop();
      await Promise.all(replicas.map((r) => r.stop()));
      await api.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return cluster;
}
