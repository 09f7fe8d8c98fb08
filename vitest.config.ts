import { svelte } from '@sveltejs/vite-plugin-svelte';
import { defineConfig } from 'vitest/config';

// Two projects: unit (pure, fast, no services) and integration (real PostgreSQL, real processes).
export default defineConfig({
  test: {
    projects: [
      {
        plugins: [svelte()],
        resolve: { conditions: ['browser'] },
        test: {
          name: 'unit',
          include: ['tests/unit/**/*.test.ts'],
          environment: 'node',
          // Files share a worker's module cache for node_modules (svelte, zod, langgraph...): without
          // isolation the project imports them once per worker, not once per file (130 s -> see
          // docs/PERFORMANCE.md). The leak guard fails a file that leaves global state behind.
          isolate: false,
          setupFiles: ['tests/helpers/unit-leak-guard.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'integration',
          include: ['tests/integration/**/*.test.ts'],
          globalSetup: ['tests/helpers/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: true,
          maxWorkers: 2,
          // After the unit tests, with their own worker limit (real servers and PostgreSQL).
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
