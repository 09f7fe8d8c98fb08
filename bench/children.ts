/**
 * Bench processes: the offline model, the gateway (+ reference) and the load generator each run
 * in their own child, so each one's CPU is its own. ask() is a one-shot IPC request.
 */
import { fork, type ChildProcess } from 'node:child_process';

export interface BenchChild<R> {
  proc: ChildProcess;
  ready: R;
  ask<T>(cmd: Record<string, unknown>, key: string): Promise<T>;
  stop(): void;
}

export async function startChild<R>(file: string, args: string[] = [], env: Record<string, string> = {}): Promise<BenchChild<R>> {
  const proc = fork(new URL(file, import.meta.url), args, { execArgv: ['--import', 'tsx', ...(process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir=bench/.prof'] : [])], stdio: 'inherit', env: { ...process.env, ...env } });
  const ready = await new Promise<R>((resolve, reject) => {
    proc.once('message', resolve as never);
    proc.once('exit', (code) => reject(new Error(`${file} exited with ${code}`)));
  });
  return {
    proc,
    ready,
    ask: <T>(cmd: Record<string, unknown>, key: string) =>
      new Promise<T>((resolve) => {
        const onMessage = (m: Record<string, unknown>) => {
          if (!(key in m)) return;
          proc.off('message', onMessage);
          resolve(m[key] as T);
        };
        proc.on('message', onMessage);
        proc.send(cmd);
      }),
    stop: () => proc.disconnect(),
  };
}

/** Model + gateway pair on a model pacing `delayMs` between words. */
export async function startStack(delayMs: number, env: Record<string, string> = {}) {
  const model = await startChild<{ baseUrl: string }>('./model-process.ts', [String(delayMs)]);
  const gateway = await startChild<{ base: string; ref: string; token: string }>('./gateway-process.ts', [model.ready.baseUrl], env);
  return {
    model,
    gateway,
    cpuMicros: async () => {
      const u = await gateway.ask<NodeJS.CpuUsage>({ cmd: 'cpu' }, 'cpu');
      return u.user + u.system;
    },
    async stop() {
      gateway.stop();
      await new Promise((r) => gateway.proc.once('exit', r));
      model.stop();
    },
  };
}
