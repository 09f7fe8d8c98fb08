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
          // One module graph per worker, not per file (issue 38: 45 s of 130 s went to importing
          // modules again for each file); no unit test may depend on module state another leaves.
          isolate: false,
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
