/**
 * Preloaded into `server/main.ts` (`--import`) by the uncaught-exception test: once the process
 * prints its ready line, it throws where nothing listens, as a stream error nobody heard did
 * (issue 36 item 11).
 */
const write = process.stdout.write.bind(process.stdout);
let armed = true;
process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
  const written = write(chunk, ...rest);
  if (armed && String(chunk).includes('is ready at')) {
    armed = false;
    setImmediate(function crashAfterReady() {
      throw new Error('crash-after-ready: a fault nothing catches');
    });
  }
  return written;
}) as typeof process.stdout.write;
